#include "plan/batch_model.hh"

#include <algorithm>
#include <bit>
#include <cmath>

namespace fulcrum::plan {
namespace {

// Lines in flight are those of the group being resolved and of the one prefetched ahead.
constexpr double kGroupsInFlight = 2;
// Two predictions closer than this are a tie (the smaller batch and group win).
constexpr double kTieCycles = 1e-9;

double held(double level_bytes, double bytes) {
  return bytes <= 0 ? 1 : std::min(1.0, level_bytes / bytes);
}

// The measured hot cycles at (batch, group), 0 when not on the grid or not measured.
double hot_cycles(const LookupProfile& e, unsigned batch, unsigned group) {
  if (batch < kSmallestProbedBatch || (batch & (batch - 1)) != 0 || (group & (group - 1)) != 0)
    return 0;
  const size_t row = static_cast<size_t>(std::countr_zero(batch / kSmallestProbedBatch));
  const size_t col = static_cast<size_t>(std::countr_zero(group));
  return row < e.hot.size() && col < e.hot[row].size() ? e.hot[row][col] : 0;
}

// Cycles per lookup its table's lines take in groups of `group` (a power of two up to 64) and
// calls of `batch`, from the group reads measured in memory, scaled to the working set by the
// share of the memory latency its accesses pay beyond L1 (a: their expected latency). A level
// prefetched a group ahead has nothing ahead of the first group of a call: that group's lines
// are read as a group prefetched within itself.
double group_memory_cycles(const MemoryLatency& lat, const LookupProfile& e, double a,
                           unsigned batch, unsigned group) {
  const size_t col = std::min<size_t>(std::countr_zero(group), kProbedGroups - 1);
  const double scale = lat.dram_cycles > lat.l1_cycles
                           ? std::max(0.0, a - lat.l1_cycles) / (lat.dram_cycles - lat.l1_cycles)
                           : 0;
  const double levels = std::max(1.0, e.levels);
  const double within = std::clamp(e.within_group_levels, 0.0, levels);
  const double first = std::min(1.0, static_cast<double>(group) / batch);
  const double ahead =
      first * lat.group_within_line_cycles[col] + (1 - first) * lat.group_ahead_line_cycles[col];
  return scale * e.lines_per_level *
         ((levels - within) * ahead + within * lat.group_within_line_cycles[col]);
}

}  // namespace

LevelShares level_shares(const MachineInfo& m, double bytes) {
  const double in_l1 = held(static_cast<double>(m.l1d_bytes), bytes);
  const double in_l2 = std::max(in_l1, held(static_cast<double>(m.l2_bytes), bytes));
  const double in_llc = std::max(in_l2, held(static_cast<double>(m.llc_bytes), bytes));
  return {in_l1, in_l2 - in_l1, in_llc - in_l2, 1 - in_llc};
}

double access_cycles(const MachineInfo& m, const MemoryLatency& lat, double bytes) {
  const LevelShares s = level_shares(m, bytes);
  return s.l1 * lat.l1_cycles + s.l2 * lat.l2_cycles + s.llc * lat.llc_cycles +
         s.dram * lat.dram_cycles;
}

BatchPoint predict_batch(const MachineInfo& m, const MemoryLatency& lat, const LookupProfile& e,
                         unsigned batch, unsigned group) {
  BatchPoint p;
  p.batch = std::max(1u, batch);
  p.group = std::max(1u, std::min(group, p.batch));
  const double d = p.group;
  const double levels = std::max(1.0, e.levels);
  const double a = access_cycles(m, lat, e.working_set_bytes);
  const double hot = hot_cycles(e, p.batch, p.group);
  if (lat.has_group_lines()) {
    // The group reads already hold what the core overlaps; the lookup's own work adds to them.
    p.memory = group_memory_cycles(lat, e, a, p.batch, p.group);
    p.stall = p.memory;
  } else {
    // The work that overlaps a group's misses: its lookups' compute without the per-call part.
    const double per_lookup =
        hot > 0 ? std::max(0.0, hot - e.call_cycles / p.batch) : e.compute_cycles;
    const double exposed = std::max(0.0, a - lat.l1_cycles);
    const double miss_share = 1 - level_shares(m, e.working_set_bytes).l1;
    const double issue =
        d * e.lines_per_level * miss_share * a / std::max(1.0, lat.parallel_misses);
    const double memory = std::max(exposed, issue);
    const double work = d * per_lookup / levels;  // per level, for the whole group
    p.stall = levels * std::max(0.0, memory - work) / d;
  }
  if (hot > 0) {
    p.compute = hot;
  } else {
    p.compute = e.compute_cycles;
    p.overhead = e.group_cycles / d + e.call_cycles / p.batch;
  }
  const double line = static_cast<double>(m.line_bytes);
  const double footprint =
      p.batch * e.state_bytes_per_packet + kGroupsInFlight * d * levels * e.lines_per_level * line;
  const double l1 = static_cast<double>(m.l1d_bytes);
  if (footprint > l1 && footprint > 0) {
    const double evicted = 1 - l1 / footprint;
    const double lines = e.state_bytes_per_packet / line + levels * e.lines_per_level;
    p.pollution = evicted * std::max(0.0, lat.l2_cycles - lat.l1_cycles) * lines;
  }
  p.cycles_per_packet = p.compute + p.stall + p.overhead + p.pollution;
  return p;
}

BatchPoint choose_batch(const MachineInfo& m, const MemoryLatency& lat, const LookupProfile& e,
                        const std::vector<unsigned>& batches, const std::vector<unsigned>& groups) {
  BatchPoint best;
  bool have = false;
  for (unsigned b : batches)
    for (unsigned g : groups) {
      if (g > b) continue;
      const BatchPoint p = predict_batch(m, lat, e, b, g);
      if (!have || p.cycles_per_packet < best.cycles_per_packet - kTieCycles) {
        best = p;
        have = true;
      }
    }
  return best;
}

LookupProfile to_lookup_profile(const MemoryProfile& m) {
  LookupProfile e;
  e.compute_cycles = m.compute_cycles;
  e.call_cycles = m.call_cycles;
  e.group_cycles = m.group_cycles;
  e.levels = m.levels;
  e.within_group_levels = m.within_group_levels;
  e.lines_per_level = m.lines_per_level;
  e.working_set_bytes = static_cast<double>(m.working_set_bytes);
  e.state_bytes_per_packet = m.state_bytes_per_packet;
  e.hot = m.hot_cycles;
  return e;
}

const std::vector<unsigned>& batch_grid() {
  static const std::vector<unsigned> grid = {8, 16, 32, 64, 128, 256};
  return grid;
}

const std::vector<unsigned>& group_grid() {
  static const std::vector<unsigned> grid = {1, 2, 4, 8, 16, 32, 64};
  return grid;
}

}  // namespace fulcrum::plan
