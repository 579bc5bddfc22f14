#include "plan/lookup_probe.hh"

#include <rte_cycles.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>
#include <vector>

#include "core/args.hh"
#include "core/median.hh"
#include "lib/prefetch_group.hh"
#include "plan/batch_model.hh"
#include "plan/measure_machine.hh"

namespace fulcrum::plan {
namespace {

constexpr size_t kProbeBatch = 256;
constexpr unsigned kProbeGroup = 16;
constexpr size_t kChunkLookups = 4096;  // lookups per timed chunk
constexpr int kProbeChunks = 31;        // chunks per shape (the median is kept)

// Cycles per lookup of run_hot(n, group): the median over chunks of calls (noise only adds:
// a chunk during which the thread was preempted is an outlier).
double per_lookup(const std::function<void(size_t, unsigned)>& run_hot, size_t n, unsigned group) {
  const size_t calls = std::max<size_t>(1, kChunkLookups / n);
  std::vector<double> chunks;
  run_hot(n, group);
  for (int r = 0; r < kProbeChunks; ++r) {
    const uint64_t t0 = rte_rdtsc();
    for (size_t i = 0; i < calls; ++i) run_hot(n, group);
    chunks.push_back(static_cast<double>(rte_rdtsc() - t0) / static_cast<double>(calls * n));
  }
  return median_in_place(chunks);
}

}  // namespace

void probe_lookup(const std::function<void(size_t, unsigned)>& run_hot, MemoryProfile& m) {
  const double big = static_cast<double>(kProbeBatch);
  const double t_grouped = per_lookup(run_hot, kProbeBatch, kProbeGroup);
  const double t_single = per_lookup(run_hot, kProbeBatch, 1);
  const double t_one = per_lookup(run_hot, 1, 1);
  m.group_cycles = std::max(0.0, (t_single - t_grouped) / (1 - 1.0 / kProbeGroup));
  m.call_cycles = std::max(0.0, (t_one - t_single) / (1 - 1 / big));
  m.compute_cycles =
      std::max(t_grouped / 2, t_grouped - m.call_cycles / big - m.group_cycles / kProbeGroup);
  for (size_t b = 0; b < m.hot_cycles.size(); ++b)
    for (size_t g = 0; g < m.hot_cycles[b].size(); ++g) {
      const unsigned batch = kSmallestProbedBatch << b, group = 1u << g;
      m.hot_cycles[b][g] = group <= batch ? per_lookup(run_hot, batch, group) : 0;
    }
}

Result<Calibration> process_calibration() {
  static std::mutex mu;
  static bool done = false;
  static Result<Calibration> cached = make_error("not measured");
  std::lock_guard<std::mutex> lock(mu);
  if (done) return cached;
  done = true;
  if (const char* file = std::getenv("FULCRUM_CALIBRATION"); file != nullptr && *file != '\0') {
    cached = read_calibration(file);
    return cached;
  }
  Result<MachineInfo> info = read_machine_info();
  if (!info) {
    cached = make_error(info.error());
    return cached;
  }
  Calibration c;
  c.created = "built-in (lookup element, PREFETCH auto)";
  c.machine = info.value();
  c.memory = measure_memory_latency(c.machine);
  cached = c;
  return cached;
}

unsigned auto_prefetch_group(const Calibration& c, const MemoryProfile& m, unsigned batch) {
  return choose_batch(c.machine, c.memory, to_lookup_profile(m), {batch}, group_grid()).group;
}

bool parse_prefetch(const std::string& text, unsigned& group, bool& automatic) {
  if (text == "auto") {
    automatic = true;
    return true;
  }
  unsigned g = 0;
  if (!parse_value(text, g) || !valid_prefetch_group(g)) return false;
  automatic = false;
  group = g;
  return true;
}

Status PrefetchOption::check(const Args& args) {
  if (args.describing() || parse_prefetch(text, group, automatic)) return {};
  return args.error("PREFETCH: expected auto or a power of two from 1 to 64, got '" + text + "'");
}

Status PrefetchOption::resolve_auto(const MemoryProfile& m, unsigned batch) {
  Result<Calibration> cal = process_calibration();
  if (!cal) return make_error("PREFETCH auto: " + cal.error());
  group = auto_prefetch_group(cal.value(), m, batch);
  return {};
}

}  // namespace fulcrum::plan
