#include "plan/placement_model.hh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>

#include "core/batch.hh"

namespace fulcrum::plan {
namespace {

double miss_share(double cache_bytes, double bytes) {
  return bytes <= cache_bytes || bytes <= 0 ? 0 : 1 - cache_bytes / bytes;
}

// Bytes the elements [first, last] touch on one core, and on all `cores` of their stage together
// (per-worker tables once per core).
double stage_bytes(const std::vector<ChainElement>& chain, const Stage& st, bool all_cores) {
  double b = 0;
  for (size_t i = st.first; i <= st.last && i < chain.size(); ++i) {
    const MemoryProfile& m = chain[i].memory;
    b += static_cast<double>(m.working_set_bytes) *
         (all_cores && m.per_worker ? static_cast<double>(st.cores) : 1.0);
  }
  return b;
}

double socket_bytes(const std::vector<ChainElement>& chain, const std::vector<Stage>& stages) {
  double b = 0;
  for (const Stage& st : stages) b += stage_bytes(chain, st, true);
  return b;
}

std::string fmt_bytes(double b) {
  char buf[32];
  if (b >= 1 << 20)
    std::snprintf(buf, sizeof buf, "%.1f MiB", b / (1 << 20));
  else
    std::snprintf(buf, sizeof buf, "%.0f KiB", b / 1024);
  return buf;
}

}  // namespace

ServerProfile server_profile(const Calibration& c) {
  ServerProfile s;
  s.machine = c.machine;
  s.memory = c.memory;
  s.ring = c.ring;
  s.handoff = c.handoff;
  s.frame_bytes = c.pipeline.frame_bytes;
  s.batch = c.pipeline.batch > 0 ? c.pipeline.batch : kDefaultBatch;
  s.io_cycles_per_packet = c.pipeline.io_cycles_per_packet;
  s.tx_cycles_per_packet = c.pipeline.tx_cycles_per_packet;
  s.spread = c.pipeline.out_ports > 1;
  return s;
}

ServerProfile follow_regime(const ServerProfile& s, const RingCost& now) {
  ServerProfile out = s;
  out.ring = now;
  out.ring_now = ring_cycles(now);
  return out;
}

double consumer_handoff(const ServerProfile& s) {
  const RingCost* now = s.ring_now > 0 ? &s.ring : nullptr;
  return handoff_consumer_cycles(s.handoff, s.ring, s.frame_bytes, s.machine.line_bytes, s.batch,
                                 now) +
         (s.spread ? handoff_spread_cycles(s.handoff, s.ring, s.machine.line_bytes, s.batch, now)
                   : 0);
}

double producer_handoff(const ServerProfile& s, bool first) {
  // A later stage's sending side is the enqueue alone: the RX/TX change is the first stage's.
  if (!first) return enqueue_cycles(s.ring, s.batch);
  return handoff_producer_cycles(s.handoff, s.ring, s.frame_bytes, s.machine.line_bytes, s.batch,
                                 s.ring_now > 0 ? &s.ring : nullptr);
}

double line_cycles(const RingCost& r) {
  return r.line_scan_cycles >= 0 ? r.line_scan_cycles : r.line_read_cycles;
}

double scan_line_cycles(const ServerProfile& s) {
  const double runtime = handoff_scan_line_cycles(s.handoff, s.ring, s.machine.line_bytes, s.batch,
                                                  s.ring_now > 0 ? &s.ring : nullptr);
  return runtime >= 0 ? runtime : line_cycles(s.ring);
}

double extra_lines_read(const ServerProfile& s, const std::vector<ChainElement>& chain,
                        size_t first, size_t last) {
  if (first >= chain.size() || s.machine.line_bytes == 0) return 0;
  bool whole = false;
  for (size_t i = first; i <= last && i < chain.size(); ++i)
    whole = whole || reads_whole_frame(chain[i].reads);
  // The frame as it crosses the cut: what the stage's first element receives.
  const double frame = chain[first].frame_bytes > 0 ? chain[first].frame_bytes : s.frame_bytes;
  if (!whole || frame <= 0) return 0;
  const double lines = std::ceil(frame / static_cast<double>(s.machine.line_bytes));
  return std::max(0.0, lines - kReferenceReadLines);
}

namespace {

bool uses_anno(const std::vector<ChainElement>& chain, size_t first, size_t last, uint8_t use) {
  for (size_t i = first; i <= last && i < chain.size(); ++i)
    if ((chain[i].anno & use) != 0) return true;
  return false;
}

// Whether stage j writes the annotation line that a later stage receives: it takes the line back
// from that stage's core each time it writes it.
bool sends_anno_line(const std::vector<ChainElement>& chain, const std::vector<Stage>& stages,
                     size_t j) {
  if (!uses_anno(chain, stages[j].first, stages[j].last, kAnnoWrites)) return false;
  for (size_t k = j + 1; k < stages.size(); ++k)
    if (receives_anno_line(chain, stages, k)) return true;
  return false;
}

}  // namespace

bool receives_anno_line(const std::vector<ChainElement>& chain, const std::vector<Stage>& stages,
                        size_t j) {
  if (j == 0 || j >= stages.size() || stages[j].first == 0) return false;
  return uses_anno(chain, stages[j].first, stages[j].last, kAnnoReads) &&
         uses_anno(chain, 0, stages[j].first - 1, kAnnoWrites);
}

double received_lines_cycles(const ServerProfile& s, const std::vector<ChainElement>& chain,
                             const std::vector<Stage>& stages, size_t j) {
  if (j == 0 || j >= stages.size()) return 0;
  const Stage& st = stages[j];
  const double lines = extra_lines_read(s, chain, st.first, st.last);
  const bool anno = receives_anno_line(chain, stages, j);
  PacketReads reads = PacketReads::kHeaders;
  for (size_t i = st.first; i <= st.last && i < chain.size(); ++i)
    reads = costlier_reads(reads, chain[i].reads);
  // A cipher's or a MAC's loads of one packet's lines do not wait for each other: their misses
  // overlap, one dependent read's wait a packet, however many lines. A scanner that asks ahead
  // pays what its lines cost beyond its work; the annotation line, read first (the SA), a wait.
  if (reads == PacketReads::kWholeFrame) return lines > 0 || anno ? s.ring.line_read_cycles : 0;
  return lines * scan_line_cycles(s) + (anno ? s.ring.line_read_cycles : 0);
}

double contention_per_access(const ServerProfile& s, double stage_b, double socket_b) {
  const double pi_l2 = miss_share(static_cast<double>(s.machine.l2_bytes), stage_b);
  const double pi_llc =
      std::min(pi_l2, miss_share(static_cast<double>(s.machine.llc_bytes), socket_b));
  return (pi_l2 - pi_llc) * s.memory.llc_cycles + pi_llc * s.memory.dram_cycles;
}

std::vector<ChainElement> isolate(const ServerProfile& s, const std::vector<ChainElement>& measured,
                                  unsigned workers, double floor_share) {
  const Stage all{0, measured.empty() ? 0 : measured.size() - 1, std::max(1u, workers)};
  const double core_b = stage_bytes(measured, all, false);
  const double socket_b = stage_bytes(measured, all, true);
  const double per_access = contention_per_access(s, core_b, socket_b);
  std::vector<ChainElement> out = measured;
  for (ChainElement& e : out) {
    const double modelled = e.memory.accesses_per_packet * per_access;
    const double isolated =
        std::max(e.cycles_per_packet * floor_share, e.cycles_per_packet - modelled);
    e.exposed = modelled > 0 ? (e.cycles_per_packet - isolated) / modelled : 1;
    e.cycles_per_packet = isolated;
  }
  return out;
}

PlacementPrediction predict(const ServerProfile& s, const std::vector<ChainElement>& chain,
                            const std::vector<Stage>& stages) {
  PlacementPrediction p;
  p.socket_bytes = socket_bytes(chain, stages);
  const double hz = s.machine.tsc_hz;
  for (size_t j = 0; j < stages.size(); ++j) {
    const Stage& st = stages[j];
    StagePrediction sp;
    sp.stage = st;
    sp.stage_bytes = stage_bytes(chain, st, false);
    sp.pi_l2 = miss_share(static_cast<double>(s.machine.l2_bytes), sp.stage_bytes);
    sp.pi_llc =
        std::min(sp.pi_l2, miss_share(static_cast<double>(s.machine.llc_bytes), p.socket_bytes));
    const double per_access = contention_per_access(s, sp.stage_bytes, p.socket_bytes);
    for (size_t i = st.first; i <= st.last && i < chain.size(); ++i) {
      sp.compute += chain[i].cycles_per_packet;
      sp.contention += chain[i].exposed * chain[i].memory.accesses_per_packet * per_access;
    }
    if (j > 0) {
      sp.sync += consumer_handoff(s);
      sp.frame_lines += received_lines_cycles(s, chain, stages, j);
    }
    if (j + 1 < stages.size()) sp.sync += producer_handoff(s, j == 0);
    // The private annotation line, written again where a later stage read it.
    if (sends_anno_line(chain, stages, j)) sp.frame_lines += s.ring.line_rewrite_cycles;
    // The first stage writes the frame again (RX) once later stages have read its lines.
    if (j == 0 && stages.size() > 1)
      sp.frame_lines += extra_lines_read(s, chain, stages[1].first, chain.size() - 1) *
                        s.ring.line_rewrite_cycles;
    sp.sync += sp.frame_lines;
    // The worker's work outside elements: RX and the loop stay on the first stage; flushing the
    // transmit buffers goes where the packets leave, the last stage.
    if (j == 0) sp.io += s.io_cycles_per_packet - s.tx_cycles_per_packet;
    if (j + 1 == stages.size()) sp.io += s.tx_cycles_per_packet;
    sp.cycles_per_packet = sp.compute + sp.sync + sp.contention + sp.io;
    sp.pps = sp.cycles_per_packet > 0 ? st.cores * hz / sp.cycles_per_packet : 0;
    p.stages.push_back(sp);
  }
  for (size_t j = 0; j < p.stages.size(); ++j)
    if (j == 0 || p.stages[j].pps < p.stages[p.bottleneck].pps) p.bottleneck = j;
  p.pps = p.stages.empty() ? 0 : p.stages[p.bottleneck].pps;
  if (stages.size() <= 1) {
    p.kind = "clone";
    return p;  // Placement{}: cloned
  }
  bool hybrid = false;
  for (size_t j = 0; j < stages.size(); ++j) {
    if (j > 0) p.placement.cuts.push_back(chain[stages[j].first].name);
    p.placement.cores.push_back(stages[j].cores);
    hybrid = hybrid || stages[j].cores > 1;
  }
  p.kind = hybrid ? "hybrid" : "pipeline";
  return p;
}

std::vector<PlacementPrediction> enumerate(const ServerProfile& s,
                                           const std::vector<ChainElement>& chain,
                                           const std::vector<bool>& cut_ok, unsigned cores,
                                           size_t max_cut_sets) {
  std::vector<PlacementPrediction> out;
  if (chain.empty() || cores == 0) return out;
  out.push_back(predict(s, chain, {Stage{0, chain.size() - 1, cores}}));
  std::vector<size_t> points;  // where a stage may begin
  for (size_t i = 1; i < chain.size(); ++i)
    if (i < cut_ok.size() && cut_ok[i]) points.push_back(i);
  const size_t sets = points.size() >= 63 ? SIZE_MAX : (size_t{1} << points.size());
  for (size_t mask = 1; mask < sets && mask <= max_cut_sets; ++mask) {
    std::vector<Stage> stages;
    size_t begin = 0;
    for (size_t b = 0; b < points.size(); ++b) {
      if (!((mask >> b) & 1)) continue;
      stages.push_back(Stage{begin, points[b] - 1, 1});
      begin = points[b];
    }
    stages.push_back(Stage{begin, chain.size() - 1, 1});
    if (stages.size() > cores) continue;
    // The remaining cores one at a time to the stage that bounds the throughput.
    for (unsigned left = cores - static_cast<unsigned>(stages.size()); left > 0; --left) {
      const PlacementPrediction now = predict(s, chain, stages);
      ++stages[now.bottleneck].cores;
    }
    out.push_back(predict(s, chain, stages));
  }
  std::stable_sort(
      out.begin(), out.end(),
      [](const PlacementPrediction& a, const PlacementPrediction& b) { return a.pps > b.pps; });
  return out;
}

std::string explain(const PlacementPrediction& p, const std::vector<ChainElement>& chain) {
  if (p.stages.empty()) return "nothing to place";
  const StagePrediction& b = p.stages[p.bottleneck];
  std::string elems;
  for (size_t i = b.stage.first; i <= b.stage.last && i < chain.size(); ++i)
    elems += (elems.empty() ? "" : " -> ") + chain[i].name;
  const std::pair<const char*, double> terms[] = {{"element work", b.compute},
                                                  {"hand-offs", b.sync},
                                                  {"cache contention", b.contention},
                                                  {"RX/TX", b.io}};
  const auto* top =
      std::max_element(std::begin(terms), std::end(terms),
                       [](const auto& x, const auto& y) { return x.second < y.second; });
  char numbers[256];
  std::snprintf(numbers, sizeof numbers,
                " on %u core%s, %.1f cycles/packet, mostly %s (%.1f); working set ", b.stage.cores,
                b.stage.cores == 1 ? "" : "s", b.cycles_per_packet, top->first, top->second);
  char shares[128];
  std::snprintf(shares, sizeof shares, " on its core (L2 miss share %.2f), ", b.pi_l2);
  char llc[64];
  std::snprintf(llc, sizeof llc, " on the LLC (miss share %.2f)", b.pi_llc);
  return "bottleneck: stage " + std::to_string(p.bottleneck) + " (" + elems + ")" + numbers +
         fmt_bytes(b.stage_bytes) + shares + fmt_bytes(p.socket_bytes) + llc;
}

}  // namespace fulcrum::plan
