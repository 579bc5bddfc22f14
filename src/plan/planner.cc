#include "plan/planner.hh"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "core/graph.hh"
#include "core/memory_profile.hh"
#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "io/mempool.hh"
#include "plan/measure_handoff.hh"
#include "plan/measure_machine.hh"

namespace fulcrum::plan {
namespace {

using nlohmann::json;

constexpr std::string_view kInputClass = "FromInput";
constexpr std::string_view kOutputClass = "ToOutput";
constexpr unsigned kScalingCores[] = {1, 2, 4, 8, 16, 32, 64};
constexpr double kMega = 1e6;
constexpr double kKiB = 1024;

std::string printf_string(const char* format, ...) __attribute__((format(printf, 1, 2)));
std::string printf_string(const char* format, ...) {
  va_list ap;
  va_start(ap, format);
  va_list again;
  va_copy(again, ap);
  const int n = std::vsnprintf(nullptr, 0, format, ap);
  va_end(ap);
  std::string out(n > 0 ? static_cast<size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

std::string bytes_text(double b) {
  if (b >= kKiB * kKiB) return printf_string("%.1f MiB", b / (kKiB * kKiB));
  if (b >= kKiB) return printf_string("%.0f KiB", b / kKiB);
  return printf_string("%.0f B", b);
}

const std::vector<std::string>& assumptions() {
  static const std::vector<std::string> a = {
      "the CPU is the bottleneck (no NIC, PCIe or memory-bandwidth limit; paper 002 §3.1)",
      "each element costs in isolation what it cost in the calibration run less the contention "
      "the model puts on it there (C(i))",
      "a table access hits a cache level with probability size/working set (paper 002 §3.2, "
      "assumption 3), per private L2 (per stage) and per shared LLC (all stages)",
      "a hand-off between stages costs what it cost the runtime on a reference pipeline cut "
      "on two cores (its consumer reading then writing the header), linear in the frame's "
      "cache lines between the measured frame sizes, scaled to the plain ring measured before "
      "the prediction (the machine's cross-CPU regime), whatever the distance between cores",
      "a stage with an element that reads the whole frame (ElementTraits::reads) pays for each "
      "line of the frame as it crosses the cut (the size its first element received in the "
      "calibration run) beyond the header: a dependent read from the other core for an element "
      "that reads each line as it comes to it (a cipher, a MAC), what it cost beyond a scan's "
      "work for one that asks for the lines a few packets ahead (the IDS); the first stage pays "
      "for writing those lines again; an element reading part of the payload is charged as a "
      "header reader",
      "a table whose element counts its keys (the MAC table) is touched only on its keys' "
      "lines (keys x lines per key, at most the table), as many keys as the calibration run "
      "saw",
      "a stage on k cores (hybrid) runs k times as fast: flows spread evenly by hash, no "
      "reordering cost, no state that every core writes for each packet (an IPsec SA's "
      "sequence counter is)",
      "predictions beyond this machine's cores assume more cores of the same kind sharing one "
      "LLC of the measured size",
  };
  return a;
}

json batch_point_json(const BatchPoint& p) {
  return {
      {"batch", p.batch},         {"group", p.group},  {"cycles_per_packet", p.cycles_per_packet},
      {"compute", p.compute},     {"stall", p.stall},  {"overhead", p.overhead},
      {"pollution", p.pollution}, {"memory", p.memory}};
}

json placement_json(const PlacementPrediction& p, const Chain& chain) {
  json stages = json::array();
  for (const StagePrediction& s : p.stages) {
    json names = json::array();
    for (size_t i = s.stage.first; i <= s.stage.last && i < chain.isolated.size(); ++i)
      names.push_back(chain.isolated[i].name);
    stages.push_back({{"elements", names},
                      {"cores", s.stage.cores},
                      {"cycles_per_packet", s.cycles_per_packet},
                      {"compute", s.compute},
                      {"sync", s.sync},
                      {"frame_lines", s.frame_lines},
                      {"contention", s.contention},
                      {"io", s.io},
                      {"working_set_bytes", s.stage_bytes},
                      {"pi_l2", s.pi_l2},
                      {"pi_llc", s.pi_llc},
                      {"mpps", s.pps / kMega}});
  }
  return {{"placement", to_string(p.placement)},
          {"kind", p.kind},
          {"mpps", p.pps / kMega},
          {"bottleneck_stage", p.bottleneck},
          {"measured_mpps", p.measured_pps >= 0 ? json(p.measured_pps / kMega) : json(nullptr)},
          {"why", explain(p, chain.isolated)},
          {"stages", stages}};
}

// The sink of the replica built to read the elements' memory profiles; it never sees a packet.
class DropSink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    batch.for_each([](uint32_t, Packet* p) { rte_pktmbuf_free(p); });
    batch.set_count(0);
  }
};

constexpr unsigned kProfilePoolSize = 1023;

// Every MemoryProfiled element's profile, by element name, from one replica built here (its
// tables loaded again: the run's are gone with it).
Result<std::map<std::string, MemoryProfile>> memory_profiles(const RunOptions& options) {
  Result<PipelineConfig> config = load_pipeline(options);
  if (!config) return make_error(config.error());
  static int serial = 0;
  Result<rte_mempool*> pool =
      create_packet_pool("plan_profile_" + std::to_string(serial++), kProfilePoolSize);
  if (!pool) return make_error(pool.error());
  PoolHandle pool_handle(pool.value());
  SharedStorage shared;
  DropSink sink;
  InitContext ctx;
  ctx.workers = 1;
  ctx.batch = options.batch;
  ctx.ports = static_cast<int>(options.ports.size());
  ctx.strict_rules = options.strict_rules;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = pool_handle.get();
  Result<std::unique_ptr<Pipeline>> replica = Pipeline::build(config.value(), ctx, options.branch);
  if (!replica) return make_error(replica.error());
  std::map<std::string, MemoryProfile> out;
  for (const Node& n : replica.value()->nodes())
    if (const auto* m = dynamic_cast<const MemoryProfiled*>(n.element.get()); m != nullptr)
      out[n.element->name()] = m->memory_profile();
  return out;
}

// The class's traits; an unknown class reads headers and leaves the annotation line alone.
const ElementTraits& traits_of(const std::string& class_name) {
  static constexpr ElementTraits kUnknown{};
  const ElementClassInfo* info = Registry::instance().find(class_name);
  return info != nullptr ? *info->traits : kUnknown;
}

}  // namespace

MemoryProfile bound_by_keys(const MemoryProfile& m, const ElementReport& run) {
  if (m.bytes_per_key <= 0 || m.keys_counter.empty()) return m;
  uint64_t keys = 0;
  for (const auto& [name, value] : run.counters)
    if (name == m.keys_counter) keys = value;
  const double touched = static_cast<double>(std::max<uint64_t>(keys, 1)) * m.bytes_per_key;
  if (touched >= static_cast<double>(m.working_set_bytes)) return m;
  MemoryProfile out = m;
  out.table_bytes = m.working_set_bytes;
  out.working_set_bytes = static_cast<size_t>(touched);
  return out;
}

Result<Calibration> calibrate_machine(unsigned batch) {
  Result<MachineInfo> info = read_machine_info();
  if (!info) return make_error(info.error());
  Calibration c;
  c.created = "fulcrum plan --calibrate";
  c.machine = info.value();
  c.memory = measure_memory_latency(c.machine);
  Result<RingCost> ring = measure_ring(batch, c.machine.cpus);
  if (!ring) return make_error(ring.error());
  c.ring = ring.value();
  Result<HandoffCost> handoff = measure_handoff(batch, c.machine.cpus);
  if (!handoff) return make_error(handoff.error());
  c.handoff = handoff.value();
  return c;
}

Result<PipelineMeasure> measure_pipeline(const RunOptions& options, double seconds) {
  // One cloned worker: the measurement is of the whole chain on one core.
  RunOptions o = options;
  o.placement = Placement{};
  o.workers = 1;
  o.seconds = seconds;
  o.packets = 0;
  o.progress = false;
  o.latency = false;
  Result<RunReport> report = run(o);
  if (!report) return make_error(report.error());
  Result<std::map<std::string, MemoryProfile>> memory = memory_profiles(o);
  if (!memory) return make_error(memory.error());
  const RunReport& r = report.value();
  if (r.packets_in == 0)
    return make_error("the pipeline received no packets in " + std::to_string(seconds) +
                      " s: calibrate it on a traffic source (--port gen:...)");
  PipelineMeasure m;
  m.file = options.pipeline_file;
  m.batch = options.batch;
  m.workers = 1;
  m.seconds = r.duration_s;
  m.mpps = r.mpps_in();
  m.frame_bytes = static_cast<double>(r.bytes_in) / static_cast<double>(r.packets_in);
  uint64_t element_cycles = 0;
  for (const ElementReport& e : r.elements) {
    element_cycles += e.cycles;
    ElementMeasure em;
    em.name = e.name;
    em.class_name = e.class_name;
    em.cycles_per_packet =
        e.in_packets > 0 ? static_cast<double>(e.cycles) / static_cast<double>(e.in_packets) : 0;
    em.cycles_per_batch =
        e.batches > 0 ? static_cast<double>(e.cycles) / static_cast<double>(e.batches) : 0;
    em.packet_share = static_cast<double>(e.in_packets) / static_cast<double>(r.packets_in);
    em.frame_bytes = e.frame_bytes;
    if (const auto it = memory.value().find(e.name); it != memory.value().end())
      em.memory = bound_by_keys(it->second, e);
    m.elements.push_back(std::move(em));
  }
  const double busy = r.duration_s * r.tsc_hz;
  m.io_cycles_per_packet = std::max(
      0.0, (busy - static_cast<double>(element_cycles)) / static_cast<double>(r.packets_in));
  uint64_t flush_cycles = 0;
  for (const WorkerReport& w : r.per_worker) flush_cycles += w.tx_flush_cycles;
  m.tx_cycles_per_packet = std::min(m.io_cycles_per_packet, static_cast<double>(flush_cycles) /
                                                                static_cast<double>(r.packets_in));
  uint64_t sent = 0;
  for (const PortReport& port : r.ports) sent += port.tx_packets;
  unsigned spread = 0;
  for (const PortReport& port : r.ports)
    spread += static_cast<double>(port.tx_packets) >= kSpreadPortShare * static_cast<double>(sent)
                  ? 1
                  : 0;
  m.out_ports = std::max(1u, spread);
  return m;
}

Result<Chain> chain_of(const PipelineConfig& config, const Calibration& c) {
  const auto& els = config.elements;
  size_t start = els.size();
  for (size_t i = 0; i < els.size(); ++i)
    if (els[i].class_name == kInputClass) {
      start = i;
      break;
    }
  if (start == els.size()) return make_error("the pipeline has no FromInput: nothing to place");
  std::map<std::string, const ElementMeasure*> measured;
  for (const ElementMeasure& e : c.pipeline.elements) measured[e.name] = &e;

  std::vector<size_t> path;
  std::vector<int> on_path(els.size(), -1);
  for (size_t at = start; on_path[at] < 0;) {
    on_path[at] = static_cast<int>(path.size());
    path.push_back(at);
    const auto next =
        std::find_if(config.connections.begin(), config.connections.end(),
                     [at](const ConfigConnection& k) { return k.from == at && k.from_port == 0; });
    if (next == config.connections.end()) break;
    at = next->to;
  }
  Chain chain;
  for (size_t i : path) {
    const auto it = measured.find(els[i].name);
    if (it == measured.end())
      return make_error("the calibration has no measurement of element " + els[i].name +
                        " (calibrate this pipeline: fulcrum plan CONFIG --calibrate)");
    ChainElement e;
    e.name = els[i].name;
    e.class_name = els[i].class_name;
    const ElementTraits& traits = traits_of(els[i].class_name);
    e.reads = traits.reads;
    e.anno = traits.anno;
    e.cycles_per_packet = it->second->cycles_per_packet * it->second->packet_share;
    e.memory = it->second->memory;
    e.frame_bytes = it->second->frame_bytes;
    chain.measured.push_back(e);
  }
  // Elements off the path: into the path element they are reached from (breadth first back).
  for (size_t i = 0; i < els.size(); ++i) {
    if (on_path[i] >= 0) continue;
    std::vector<size_t> frontier = {i};
    std::set<size_t> seen = {i};
    int into = -1;
    while (!frontier.empty() && into < 0) {
      std::vector<size_t> next;
      for (size_t f : frontier)
        for (const ConfigConnection& k : config.connections) {
          if (k.to != f || !seen.insert(k.from).second) continue;
          if (on_path[k.from] >= 0 && into < 0) into = on_path[k.from];
          next.push_back(k.from);
        }
      frontier = std::move(next);
    }
    if (into < 0) into = static_cast<int>(chain.measured.size()) - 1;
    const auto it = measured.find(els[i].name);
    if (it == measured.end()) continue;
    ChainElement& host = chain.measured[static_cast<size_t>(into)];
    host.cycles_per_packet += it->second->cycles_per_packet * it->second->packet_share;
    host.memory.working_set_bytes += it->second->memory.working_set_bytes;
    host.memory.accesses_per_packet +=
        it->second->memory.accesses_per_packet * it->second->packet_share;
    const ElementTraits& traits = traits_of(els[i].class_name);
    host.reads = costlier_reads(host.reads, traits.reads);
    host.anno |= traits.anno;
    chain.folded.push_back(els[i].name + " (into " + host.name + ")");
  }
  chain.cut_ok.assign(chain.measured.size(), false);
  for (size_t i = 1; i < chain.measured.size(); ++i)
    chain.cut_ok[i] = chain.measured[i].class_name != kOutputClass;
  chain.isolated = isolate(server_profile(c), chain.measured, std::max(1u, c.pipeline.workers));
  return chain;
}

Plan make_plan(const Calibration& c, const Chain& chain, unsigned cores, const RingCost* ring_now) {
  Plan p;
  p.cores = std::max(1u, cores);
  p.pipeline = c.pipeline.file;
  p.calibration_source = c.created;
  p.server = server_profile(c);
  if (ring_now != nullptr) p.server = follow_regime(p.server, *ring_now);
  p.chain = chain;
  p.placements = enumerate(p.server, chain.isolated, chain.cut_ok, p.cores);
  for (unsigned n : kScalingCores) {
    const std::vector<PlacementPrediction> all =
        enumerate(p.server, chain.isolated, chain.cut_ok, n);
    if (all.empty()) continue;
    ScalingRow row;
    row.cores = n;
    row.best = all.front();
    row.clone = *std::find_if(all.begin(), all.end(),
                              [](const PlacementPrediction& x) { return x.placement.cloned(); });
    p.scaling.push_back(row);
  }
  for (const ChainElement& e : chain.measured) {
    if (e.memory.prefetch_group == 0) continue;
    LookupAdvice a;
    a.element = e.name;
    a.class_name = e.class_name;
    a.memory = e.memory;
    const LookupProfile lp = to_lookup_profile(e.memory);
    a.now = predict_batch(p.server.machine, p.server.memory, lp, p.server.batch,
                          e.memory.prefetch_group);
    a.at_batch =
        choose_batch(p.server.machine, p.server.memory, lp, {p.server.batch}, group_grid());
    a.best = choose_batch(p.server.machine, p.server.memory, lp, batch_grid(), group_grid());
    p.lookups.push_back(a);
  }
  p.assumptions = assumptions();
  return p;
}

std::string plan_text(const Plan& p) {
  const ServerProfile& s = p.server;
  std::string o;
  o += printf_string("fulcrum plan: %s on %u core%s (calibration: %s)\n", p.pipeline.c_str(),
                     p.cores, p.cores == 1 ? "" : "s", p.calibration_source.c_str());
  o += printf_string(
      "machine: %u CPUs, L1d %s, L2 %s per core, LLC %s as measured (sysfs: %s shared by %u), "
      "TSC %.3f GHz\n",
      s.machine.cpus, bytes_text(static_cast<double>(s.machine.l1d_bytes)).c_str(),
      bytes_text(static_cast<double>(s.machine.l2_bytes)).c_str(),
      bytes_text(static_cast<double>(s.machine.llc_bytes)).c_str(),
      bytes_text(static_cast<double>(s.machine.llc_sysfs_bytes)).c_str(), s.machine.llc_shared_cpus,
      s.machine.tsc_hz / 1e9);
  o += printf_string(
      "memory latency (cycles): L1 %.1f, L2 %.1f, LLC %.1f, DRAM %.1f; %.1f misses overlap\n",
      s.memory.l1_cycles, s.memory.l2_cycles, s.memory.llc_cycles, s.memory.dram_cycles,
      s.memory.parallel_misses);
  if (s.memory.has_group_lines()) {
    auto row = [](const std::array<double, kProbedGroups>& v) {
      std::string r;
      for (double x : v) r += printf_string("%s%.1f", r.empty() ? "" : " ", x);
      return r;
    };
    o += "memory lines read in groups of 1..64 (cycles/line): prefetched a group ahead " +
         row(s.memory.group_ahead_line_cycles) + "; within the group " +
         row(s.memory.group_within_line_cycles) + "\n";
  }
  o += printf_string(
      "ring hand-off (cycles/packet, bursts of %u, %s): enqueue %.1f, dequeue %.1f (both on one "
      "core: %.1f); of which per burst: enqueue %.1f, dequeue %.1f\n",
      s.ring.batch, s.ring.cross_core ? "two cores" : "one core only",
      s.ring.enqueue_cycles_per_packet, s.ring.dequeue_cycles_per_packet,
      s.ring.same_core_cycles_per_packet, s.ring.enqueue_cycles_per_burst,
      s.ring.dequeue_cycles_per_burst);
  o += printf_string(
      "a frame's line beyond the header (cycles): read from the other core %.1f (scanned, beyond "
      "the scan's work: %.1f), written again once read %.1f\n",
      s.ring.line_read_cycles, line_cycles(s.ring), s.ring.line_rewrite_cycles);
  if (s.handoff.points.empty()) {
    o += "runtime hand-off: not measured (one CPU, or a format-1 calibration): the ring's costs "
         "stand in\n";
  } else {
    o += "runtime hand-off (cycles/packet, reference pipeline cut on 1+1):";
    for (const HandoffPoint& h : s.handoff.points)
      o += printf_string(" %u B: producer %.1f, consumer %.1f%s;", h.frame_bytes,
                         h.producer_cycles_per_packet, h.consumer_cycles_per_packet,
                         h.consumer_bound ? " (consumer bound)" : "");
    if (s.handoff.spread.frame_bytes != 0)
      o += printf_string(" routed over two ports at %u B: consumer %.1f;",
                         s.handoff.spread.frame_bytes, s.handoff.spread.consumer_cycles_per_packet);
    if (s.handoff.scan.frame_bytes != 0)
      o += printf_string(
          " payloads scanned at %u B: consumer %.1f, %.1f a line beyond the header "
          "now;",
          s.handoff.scan.frame_bytes, s.handoff.scan.consumer_cycles_per_packet,
          scan_line_cycles(s));
    o += printf_string(" this pipeline's %.0f B frames%s: producer %.1f, consumer %.1f\n",
                       s.frame_bytes, s.spread ? " leaving by several ports" : "",
                       producer_handoff(s, true), consumer_handoff(s));
    // Which cross-CPU regime the points were measured in, and the one they are carried to.
    const double measured_ring = s.handoff.points.front().ring_cycles;
    if (s.ring_now > 0 && measured_ring > 0)
      o += printf_string(
          "  (measured with the ring at %.1f cycles, carried to the ring measured now, %.1f: "
          "each side's share of the ring follows it, the rest stays as measured)\n",
          measured_ring, s.ring_now);
  }
  o += printf_string(
      "RX/TX and loop: %.1f cycles/packet, of which transmit flushes %.1f (on the last stage when "
      "cut); batch %u\n",
      s.io_cycles_per_packet, s.tx_cycles_per_packet, s.batch);
  o += "\nelements (cycles per received packet: measured -> in isolation C(i); working set S(i); "
       "table accesses N(i)):\n";
  for (size_t i = 0; i < p.chain.measured.size(); ++i) {
    const ChainElement& m = p.chain.measured[i];
    o += printf_string(
        "  %-28s %-14s %8.1f -> %8.1f  %10s  %4.1f%s%s\n", m.name.c_str(), m.class_name.c_str(),
        m.cycles_per_packet, p.chain.isolated[i].cycles_per_packet,
        bytes_text(static_cast<double>(m.memory.working_set_bytes)).c_str(),
        m.memory.accesses_per_packet, m.memory.per_worker ? "  per worker" : "",
        m.memory.table_bytes > 0 ? ("  (touched lines; table " +
                                    bytes_text(static_cast<double>(m.memory.table_bytes)) + ")")
                                       .c_str()
                                 : "");
  }
  for (const std::string& f : p.chain.folded) o += "  folded: " + f + "\n";

  o += printf_string("\nplacements on %u core%s, predicted (paper 002's model), best first:\n",
                     p.cores, p.cores == 1 ? "" : "s");
  o += printf_string("  %-3s %-9s %9s  %s\n", "#", "kind", "Mpps", "--placement");
  for (size_t i = 0; i < p.placements.size(); ++i) {
    const PlacementPrediction& x = p.placements[i];
    o += printf_string("  %-3zu %-9s %9.3f  %s\n", i + 1, x.kind.c_str(), x.pps / kMega,
                       to_string(x.placement).c_str());
    if (x.measured_pps >= 0)
      o += printf_string("        measured: %.3f Mpps (predicted / measured %.3f)\n",
                         x.measured_pps / kMega, x.measured_pps > 0 ? x.pps / x.measured_pps : 0);
    for (size_t j = 0; j < x.stages.size(); ++j) {
      const StagePrediction& st = x.stages[j];
      o += printf_string(
          "        stage %zu: %s..%s on %u: %.1f cycles/packet = work %.1f + hand-off %.1f (of "
          "which frame and annotation lines %.1f) + contention %.1f + RX/TX %.1f -> %.3f Mpps%s\n",
          j, p.chain.isolated[st.stage.first].name.c_str(),
          p.chain.isolated[st.stage.last].name.c_str(), st.stage.cores, st.cycles_per_packet,
          st.compute, st.sync, st.frame_lines, st.contention, st.io, st.pps / kMega,
          j == x.bottleneck ? "  <- bottleneck" : "");
    }
    o += "        " + explain(x, p.chain.isolated) + "\n";
  }
  if (!p.placements.empty())
    o += printf_string("\nbest: --placement \"%s\" (%.3f Mpps predicted)\n",
                       to_string(p.placements.front().placement).c_str(),
                       p.placements.front().pps / kMega);

  if (!p.lookups.empty()) {
    o += "\nbatch size and prefetch group (paper 003's model), predicted cycles per lookup:\n";
    for (const LookupAdvice& a : p.lookups) {
      o += printf_string(
          "  %s (%s): working set %s, %.1f levels; compute %.1f, per call %.1f, per group %.1f "
          "cycles\n",
          a.element.c_str(), a.class_name.c_str(),
          bytes_text(static_cast<double>(a.memory.working_set_bytes)).c_str(), a.memory.levels,
          a.memory.compute_cycles, a.memory.call_cycles, a.memory.group_cycles);
      o += printf_string(
          "    now: batch %u, PREFETCH %u -> %.1f; best PREFETCH at batch %u: %u -> %.1f; best "
          "of all: --batch %u, PREFETCH %u -> %.1f (stall %.1f, overhead %.1f, pollution %.1f)\n",
          a.now.batch, a.now.group, a.now.cycles_per_packet, a.at_batch.batch, a.at_batch.group,
          a.at_batch.cycles_per_packet, a.best.batch, a.best.group, a.best.cycles_per_packet,
          a.best.stall, a.best.overhead, a.best.pollution);
    }
  }

  o += "\nscaling: PREDICTIONS of the model, not measurements (this machine has " +
       std::to_string(s.machine.cpus) + " CPUs):\n";
  o += printf_string("  %6s %12s %12s  %s\n", "cores", "clone Mpps", "best Mpps", "best placement");
  for (const ScalingRow& r : p.scaling)
    o += printf_string("  %6u %12.3f %12.3f  %s\n", r.cores, r.clone.pps / kMega,
                       r.best.pps / kMega, to_string(r.best.placement).c_str());
  o += "\nassumptions:\n";
  for (const std::string& a : p.assumptions) o += "  - " + a + "\n";
  return o;
}

std::string plan_json(const Plan& p) {
  json elements = json::array();
  for (size_t i = 0; i < p.chain.measured.size(); ++i) {
    const ChainElement& m = p.chain.measured[i];
    elements.push_back({{"name", m.name},
                        {"class", m.class_name},
                        {"measured_cycles_per_packet", m.cycles_per_packet},
                        {"isolated_cycles_per_packet", p.chain.isolated[i].cycles_per_packet},
                        {"working_set_bytes", m.memory.working_set_bytes},
                        {"table_bytes", m.memory.table_bytes},
                        {"accesses_per_packet", m.memory.accesses_per_packet},
                        {"per_worker", m.memory.per_worker},
                        {"reads_whole_frame", reads_whole_frame(m.reads)},
                        {"reads_ahead", m.reads == PacketReads::kWholeFrameAhead},
                        {"cut_ok", static_cast<bool>(p.chain.cut_ok[i])}});
  }
  json placements = json::array();
  for (const PlacementPrediction& x : p.placements)
    placements.push_back(placement_json(x, p.chain));
  json lookups = json::array();
  for (const LookupAdvice& a : p.lookups)
    lookups.push_back({{"element", a.element},
                       {"class", a.class_name},
                       {"working_set_bytes", a.memory.working_set_bytes},
                       {"now", batch_point_json(a.now)},
                       {"best_at_batch", batch_point_json(a.at_batch)},
                       {"best", batch_point_json(a.best)}});
  json scaling = json::array();
  for (const ScalingRow& r : p.scaling)
    scaling.push_back({{"cores", r.cores},
                       {"clone_mpps", r.clone.pps / kMega},
                       {"best_mpps", r.best.pps / kMega},
                       {"best_placement", to_string(r.best.placement)},
                       {"prediction", true}});
  const json j = {{"pipeline", p.pipeline},
                  {"cores", p.cores},
                  {"calibration", p.calibration_source},
                  {"handoff",
                   {{"runtime_measured", !p.server.handoff.points.empty()},
                    {"ring_now", p.server.ring_now},
                    {"line_read_cycles", p.server.ring.line_read_cycles},
                    {"line_rewrite_cycles", p.server.ring.line_rewrite_cycles},
                    {"line_cycles_charged", scan_line_cycles(p.server)},
                    {"plain_ring_line_scan_cycles", line_cycles(p.server.ring)},
                    {"frame_bytes", p.server.frame_bytes},
                    {"leaves_by_several_ports", p.server.spread},
                    {"producer_cycles_per_packet", producer_handoff(p.server, true)},
                    {"consumer_cycles_per_packet", consumer_handoff(p.server)}}},
                  {"elements", elements},
                  {"folded", p.chain.folded},
                  {"placements", placements},
                  {"best", p.placements.empty() ? "" : to_string(p.placements.front().placement)},
                  {"lookups", lookups},
                  {"scaling", scaling},
                  {"assumptions", p.assumptions}};
  return j.dump(2) + "\n";
}

Result<RunReport> run_placement(const Plan& p, const Placement& x, const RunOptions& options,
                                double seconds) {
  RunOptions o = options;
  o.placement = x;
  o.workers = static_cast<int>(p.cores);
  o.seconds = seconds;
  o.packets = 0;
  o.progress = false;
  return run(o);
}

Result<size_t> verify_plan(Plan& p, const RunOptions& options, double seconds) {
  size_t ran = 0;
  for (PlacementPrediction& x : p.placements) {
    Result<RunReport> r = run_placement(p, x.placement, options, seconds);
    if (!r) return make_error(to_string(x.placement) + ": " + r.error());
    x.measured_pps = r.value().mpps_in() * kMega;
    ++ran;
  }
  return ran;
}

bool calibration_matches(const Calibration& c, const PipelineConfig& config) {
  if (c.pipeline.elements.empty() || c.pipeline.file != config.file) return false;
  std::set<std::string> names;
  for (const ElementMeasure& e : c.pipeline.elements) names.insert(e.name);
  return std::all_of(config.elements.begin(), config.elements.end(),
                     [&](const ConfigElement& e) { return names.count(e.name) != 0; });
}

Result<Placement> auto_placement(const RunOptions& options, unsigned cores,
                                 const std::string& calibration_file) {
  Result<PipelineConfig> config = load_pipeline(options);
  if (!config) return make_error(config.error());
  Result<Calibration> cal = calibration_file.empty() ? calibrate_machine(options.batch)
                                                     : read_calibration(calibration_file);
  if (!cal) return make_error(cal.error());
  if (!calibration_matches(cal.value(), config.value())) {
    Result<PipelineMeasure> m = measure_pipeline(options, kDefaultMeasureSeconds);
    if (!m) return make_error(m.error());
    cal.value().pipeline = m.value();
  }
  Result<Chain> chain = chain_of(config.value(), cal.value());
  if (!chain) return make_error(chain.error());
  Result<RingCost> now = measure_ring(options.batch, cal.value().machine.cpus);
  if (!now) return make_error(now.error());
  const Plan p = make_plan(cal.value(), chain.value(), cores, &now.value());
  if (p.placements.empty()) return Placement{};
  return p.placements.front().placement;
}

}  // namespace fulcrum::plan
