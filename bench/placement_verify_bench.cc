// Bench group "placement_verify" (issue 11): paper 002's placement model (src/plan/) predicted
// against measured throughput, for every placement that fits this machine's workers (2: cloning
// on both, and each 1+1 cut), on six pipelines:
//   * ipv4_router, ipv6_router, ipsec_gateway, ids, l2_switch: the shipped configs/*.click
//     (found under $FULCRUM_SOURCE_DIR, the working directory or the executable's parent), their
//     files named absolutely, from the generator (their own header comments' traffic) to a
//     transmit-only net_null;
//   * ipv4_router_large: the cache-heavy one, the IPv4 router of configs/ipv4-router.click on
//     generate_routes4(1M) (DIR-24-8: all 32 MiB of TBL24 and its /25+ segments, beyond this
//     machine's LLC) with 262144 flows spread over the routes (16 MiB of generator templates).
// Per pipeline, the planner's own functions (plan/planner.hh): calibrate_machine (per pipeline,
// right before its runs; the ring measured again after them),
// measure_pipeline (one worker, the calibration run), chain_of, make_plan for 2 cores; then every
// placement is run with run_placement (verify_plan's run) kRounds times, the placements
// alternated within a round, and the medians reported: measured Mpps (received per wall-clock
// second), predicted / measured, and per round each worker's stage and share of the run's time on
// a CPU (cpu_s / duration: below 1 when other processes had the core). The prediction of record
// follows the cross-CPU regime: each round's placement is predicted with the hand-off scaled to
// the plain ring measured right before it (plan::follow_regime), and the row's prediction is the
// median of its rounds'; beside it the same model without following ("calibrated": the hand-off
// as calibrated) and the model of the 2026-11-26 run of record ("previous": no frame lines, every
// element charged as if it read the header only) and the model with the plain ring's line scan
// ("plain_ring_lines": no runtime scan reference, RingCost::line_scan_cycles a line, as before the
// thirteenth session of 2026-11-27). A pipelined placement
// forwards only while both its workers have a CPU, so the JSON also holds `cpu_mpps`: the least
// over stages of the stage's packets per CPU second of its workers (a lower bound on what the
// placement does with both CPUs its own: idle polling counts as CPU time), and the round where
// the least-scheduled worker had the most CPU (`best_scheduled`). Beside each prediction, the
// same measurements predicted by the model as it was before the runtime hand-off ("ring_only":
// the plain ring's hand-off, tables at their allocated size), for a comparison in one run. The
// cost of moving lines between this VM's two CPUs switches between two levels (~3.5x apart)
// from one minute to the next: the ring is measured before every run, and `same_regime_*`
// holds the medians over the rounds whose ring was within plan::kSameRegime of the one measured
// right after the calibration's hand-off. The machine's load (/proc/loadavg) is recorded before and
// after.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "lib/route_table.hh"
#include "plan/measure_handoff.hh"
#include "plan/measure_machine.hh"
#include "plan/planner.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {
namespace {

constexpr unsigned kCores = 2;
// A sanitizer build (make test-asan) runs everything several times slower, most of it in
// building each run's pipeline: fewer rounds (two: both orders of the alternation), and the
// machine calibrated once for all pipelines (the hand-off follows the ring measured before each
// run, plan::follow_regime, so one calibration serves them all).
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
constexpr int kRounds = kSanitized ? 2 : 5;
constexpr double kTarget = 0.15;  // |predicted / measured - 1| within 15 %
constexpr size_t kLargeRoutes = 1u << 20;
constexpr uint64_t kLargeRouteSeed = 11;
const char* const kNullTxOnly = "net_null0,no-rx=1";

// The repository's configs/ directory ("" when not found).
std::string configs_dir() {
  std::vector<std::string> roots;
  if (const char* src = std::getenv("FULCRUM_SOURCE_DIR")) roots.emplace_back(src);
  roots.emplace_back(".");
  char exe[4096];
  const ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
  if (n > 0) {
    std::string e(exe, static_cast<size_t>(n));
    e = e.substr(0, e.rfind('/'));  // build/
    roots.push_back(e + "/..");
  }
  for (const std::string& r : roots)
    if (!read_text(r + "/configs/ipv4-router.click").empty()) return r + "/configs";
  return "";
}

void replace_all(std::string& s, const std::string& from, const std::string& to) {
  for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
}

std::string loadavg() {
  std::string s = read_text("/proc/loadavg");
  while (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

struct Subject {
  std::string name;
  std::string what;
  RunOptions options;
};

// The six pipelines, their files named absolutely ("" name: not available).
std::vector<Subject> subjects(const BenchContext& ctx, const std::string& configs) {
  auto config = [&](const std::string& file, std::vector<std::string> files) {
    std::string text = read_text(configs + "/" + file);
    for (const std::string& f : files) replace_all(text, f, configs + "/" + f);
    replace_all(text, "/tmp/fulcrum-ids-alerts.jsonl", ctx.dir + "/placement-ids-alerts.jsonl");
    return text;
  };
  auto subject = [&](std::string name, std::string what, std::string file, std::string text,
                     std::string gen) {
    Subject s;
    s.name = std::move(name);
    s.what = std::move(what);
    s.options.pipeline_file = std::move(file);
    s.options.pipeline_text = std::move(text);
    s.options.ports = {std::move(gen), kNullTxOnly};
    s.options.latency = false;
    return s;
  };
  std::vector<Subject> out;
  out.push_back(
      subject("ipv4_router", "configs/ipv4-router.click, routes-demo.txt", "ipv4-router.click",
              config("ipv4-router.click", {"routes-demo.txt"}),
              "gen:size=64,flows=1024,dst=routes,routes=" + configs + "/routes-demo.txt"));
  out.push_back(subject(
      "ipv6_router", "configs/ipv6-router.click, routes6-demo.txt", "ipv6-router.click",
      config("ipv6-router.click", {"routes6-demo.txt"}),
      "gen:proto=ipv6,size=78,flows=1024,dst=routes,routes=" + configs + "/routes6-demo.txt"));
  out.push_back(subject("ipsec_gateway", "configs/ipsec-gateway.click, sa-demo.txt, 64 B frames",
                        "ipsec-gateway.click", config("ipsec-gateway.click", {"sa-demo.txt"}),
                        "gen:size=64,flows=1024"));
  out.push_back(subject("ids", "configs/ids.click, ids-rules-demo.rules, 512 B frames", "ids.click",
                        config("ids.click", {"ids-rules-demo.rules"}), "gen:size=512,flows=1024"));
  out.push_back(subject("l2_switch", "configs/l2-switch.click (1M-entry MAC table)",
                        "l2-switch.click", config("l2-switch.click", {}),
                        "gen:size=64,flows=1024"));
  const std::string routes = ctx.dir + "/placement-routes-1m.txt";
  if (Status st = write_routes4(routes, generate_routes4(kLargeRoutes, kLargeRouteSeed)); st) {
    std::string text = config("ipv4-router.click", {});
    replace_all(text, "routes-demo.txt", routes);
    out.push_back(subject("ipv4_router_large",
                          "cache-heavy: configs/ipv4-router.click on generate_routes4(1M) "
                          "(TBL24 32 MiB + segments, beyond the LLC), 262144 flows over the "
                          "routes (16 MiB of generator templates)",
                          "ipv4-router-large.click", text,
                          "gen:size=64,flows=262144,dst=routes,routes=" + routes));
  }
  return out;
}

struct Round {
  plan::RingCost ring;     // measured right before the run
  double ring_cycles = 0;  // the ring's enqueue + dequeue measured right before the run
  double predicted = 0;    // Mpps, the model following `ring` (plan::follow_regime)
  double plain_lines = 0;  // the same with the plain ring's line scan (no scan reference)
  bool matched = false;    // the ring of the calibration's regime (plan::same_regime)
  double mpps = 0;
  double cpu_mpps = 0;
  double min_share = 0;
  double full_ring_share = 0;  // of the producer's bursts, those that met a full ring
  std::vector<std::string> workers;
};

Round round_of(const RunReport& r) {
  Round out;
  out.mpps = r.mpps_in();
  out.min_share = 1;
  std::map<unsigned, double> stage_rate;  // per stage: packets per CPU second of its workers
  for (const WorkerReport& w : r.per_worker) {
    const double share = r.duration_s > 0 ? w.cpu_s / r.duration_s : 0;
    out.min_share = std::min(out.min_share, share);
    const double rate = w.cpu_s > 0 ? static_cast<double>(w.stage_packets) / w.cpu_s : 0;
    stage_rate[w.stage] += rate;
    out.workers.push_back(Obj()
                              .count("stage", w.stage)
                              .num("cpu", w.cpu)
                              .count("stage_packets", w.stage_packets)
                              .num("cpu_share", share)
                              .num("cpu_mpps", rate / 1e6)
                              .done());
  }
  for (const RingReport& ring : r.rings) {
    const double bursts = static_cast<double>(ring.enqueued) / std::max(1u, r.batch);
    out.full_ring_share = bursts > 0 ? static_cast<double>(ring.back_pressure) / bursts : 0;
  }
  out.cpu_mpps = stage_rate.empty() ? 0 : 1e300;
  for (const auto& [stage, rate] : stage_rate) out.cpu_mpps = std::min(out.cpu_mpps, rate / 1e6);
  return out;
}

std::string ratio_json(double predicted, double measured) {
  return fmt(measured > 0 ? predicted / measured : 0);
}

bool within(double predicted, double measured) {
  return measured > 0 && std::abs(predicted / measured - 1) <= kTarget;
}

std::string handoff_json(const plan::Calibration& c) {
  std::vector<std::string> points;
  for (const plan::HandoffPoint& h : c.handoff.points) {
    std::fprintf(stderr,
                 "placement_verify: runtime hand-off at %u B: producer %.1f, consumer %.1f "
                 "cycles/packet (%s; ring: enqueue %.1f, dequeue %.1f)\n",
                 h.frame_bytes, h.producer_cycles_per_packet, h.consumer_cycles_per_packet,
                 h.consumer_bound ? "consumer bound" : "producer bound",
                 c.ring.enqueue_cycles_per_packet, c.ring.dequeue_cycles_per_packet);
    points.push_back(Obj()
                         .count("frame_bytes", h.frame_bytes)
                         .num("producer_cycles_per_packet", h.producer_cycles_per_packet)
                         .num("consumer_cycles_per_packet", h.consumer_cycles_per_packet)
                         .num("clone_io_cycles_per_packet", h.clone_io_cycles_per_packet)
                         .num("producer_io_cycles_per_packet", h.producer_io_cycles_per_packet)
                         .raw("consumer_bound", h.consumer_bound ? "true" : "false")
                         .num("ring_cycles", h.ring_cycles)
                         .done());
  }
  std::fprintf(stderr, "placement_verify: hand-off of one regime: %s (%u attempt%s)\n",
               c.handoff.consistent ? "yes" : "no", c.handoff.attempts,
               c.handoff.attempts == 1 ? "" : "s");
  return array(points, "\n        ");
}

// The predicted Mpps of placement `x` by the model of `server` on the chain `chain`.
double predicted_mpps(const plan::ServerProfile& server,
                      const std::vector<plan::ChainElement>& chain,
                      const plan::PlacementPrediction& x) {
  std::vector<plan::Stage> stages;
  for (const plan::StagePrediction& st : x.stages) stages.push_back(st.stage);
  return plan::predict(server, chain, stages).pps / 1e6;
}

// `machine`: the machine part of the calibration, measured once for all pipelines (a sanitizer
// build); nullptr: measured now, for this pipeline.
std::string verify_subject(const Subject& s, double seconds,
                           const plan::Calibration* machine_once) {
  Result<PipelineConfig> config = load_pipeline(s.options);
  if (!config) return Obj().str("pipeline", s.name).str("error", config.error()).done();
  // The machine part (the ring, the runtime hand-off) right before this pipeline's runs: on this
  // VM the cost of moving lines between the two CPUs changes by 3x from one minute to the next
  // (the hypervisor places the virtual CPUs), so a calibration minutes old can be of the other
  // kind. The ring is measured again after the runs to show whether it changed meanwhile.
  Result<plan::Calibration> machine = machine_once != nullptr
                                          ? Result<plan::Calibration>(*machine_once)
                                          : plan::calibrate_machine(kDefaultBatch);
  if (!machine) return Obj().str("pipeline", s.name).str("error", machine.error()).done();
  plan::Calibration cal = machine.value();
  const std::string handoff = handoff_json(cal);
  // The regime the hand-off was measured in: the ring right after it (calibrate_machine measures
  // the ring before the hand-off's 7 s of runs, and the regime can change in between).
  Result<plan::RingCost> ring_at_handoff = plan::measure_ring(kDefaultBatch, cal.machine.cpus);
  if (!ring_at_handoff)
    return Obj().str("pipeline", s.name).str("error", ring_at_handoff.error()).done();
  const double cal_ring = ring_at_handoff.value().enqueue_cycles_per_packet +
                          ring_at_handoff.value().dequeue_cycles_per_packet;
  Result<plan::PipelineMeasure> m = plan::measure_pipeline(s.options, plan::kDefaultMeasureSeconds);
  if (!m) return Obj().str("pipeline", s.name).str("error", m.error()).done();
  cal.pipeline = m.value();
  Result<plan::Chain> chain = plan::chain_of(config.value(), cal);
  if (!chain) return Obj().str("pipeline", s.name).str("error", chain.error()).done();
  // The model without following the regime (the hand-off as calibrated), and the model of the
  // 2026-11-26 run of record besides (no frame lines: every element read as if it read the
  // header, as the hand-off's reference does), from the same measurements.
  const plan::Plan p = plan::make_plan(cal, chain.value(), kCores);
  plan::Chain header_chain = chain.value();
  for (plan::ChainElement& e : header_chain.isolated) e.reads = PacketReads::kHeaders;
  std::map<std::string, double> previous_mpps;
  for (const plan::PlacementPrediction& x : p.placements)
    previous_mpps[to_string(x.placement)] = predicted_mpps(p.server, header_chain.isolated, x);
  // The model as it was before the runtime hand-off and the touched working sets (the plain
  // ring's hand-off, tables at their allocated size), predicted from the same measurements.
  plan::Calibration ring_only = cal;
  ring_only.handoff.points.clear();
  for (plan::ElementMeasure& e : ring_only.pipeline.elements)
    if (e.memory.table_bytes > 0) {
      e.memory.working_set_bytes = e.memory.table_bytes;
      e.memory.table_bytes = 0;
    }
  Result<plan::Chain> ring_chain = plan::chain_of(config.value(), ring_only);
  if (!ring_chain) return Obj().str("pipeline", s.name).str("error", ring_chain.error()).done();
  std::map<std::string, double> ring_mpps;
  for (const plan::PlacementPrediction& x :
       plan::make_plan(ring_only, ring_chain.value(), kCores).placements)
    ring_mpps[to_string(x.placement)] = x.pps / 1e6;

  std::vector<std::vector<Round>> rounds(p.placements.size());
  for (int r = 0; r < kRounds; ++r)
    for (size_t k = 0; k < p.placements.size(); ++k) {
      // Alternate the order so drift in the machine's load does not favour one placement.
      const size_t i = r % 2 == 0 ? k : p.placements.size() - 1 - k;
      Result<plan::RingCost> ring_now = plan::measure_ring(kDefaultBatch, cal.machine.cpus);
      if (!ring_now) return Obj().str("pipeline", s.name).str("error", ring_now.error()).done();
      Result<RunReport> rep = plan::run_placement(p, p.placements[i].placement, s.options, seconds);
      if (!rep) {
        std::fprintf(stderr, "bench: placement_verify: %s %s: %s\n", s.name.c_str(),
                     to_string(p.placements[i].placement).c_str(), rep.error().c_str());
        return Obj().str("pipeline", s.name).str("error", rep.error()).done();
      }
      Round round = round_of(rep.value());
      round.ring = ring_now.value();
      round.ring_cycles = plan::ring_cycles(ring_now.value());
      round.matched = plan::same_regime(round.ring_cycles, cal_ring);
      const plan::ServerProfile now = plan::follow_regime(p.server, ring_now.value());
      round.predicted = predicted_mpps(now, p.chain.isolated, p.placements[i]);
      plan::ServerProfile plain = now;
      plain.handoff.scan = plan::HandoffPoint{};
      round.plain_lines = predicted_mpps(plain, p.chain.isolated, p.placements[i]);
      rounds[i].push_back(round);
    }

  Result<plan::RingCost> ring_after = plan::measure_ring(kDefaultBatch, cal.machine.cpus);
  if (!ring_after) return Obj().str("pipeline", s.name).str("error", ring_after.error()).done();
  std::fprintf(stderr,
               "placement_verify: %s: ring enqueue / dequeue %.1f / %.1f before, %.1f / %.1f "
               "after its runs\n",
               s.name.c_str(), cal.ring.enqueue_cycles_per_packet,
               cal.ring.dequeue_cycles_per_packet, ring_after.value().enqueue_cycles_per_packet,
               ring_after.value().dequeue_cycles_per_packet);

  std::vector<std::string> rows;
  size_t hits = 0, ring_hits = 0, calibrated_hits = 0, previous_hits = 0, plain_hits = 0;
  size_t matched_placements = 0, matched_hits = 0, matched_ring_hits = 0;
  for (size_t i = 0; i < p.placements.size(); ++i) {
    const plan::PlacementPrediction& x = p.placements[i];
    std::vector<double> mpps, cpu, share, matched_mpps, followed, round_ratio, plain_lines;
    const Round* best = &rounds[i].front();
    std::vector<std::string> per_round;
    for (const Round& r : rounds[i]) {
      mpps.push_back(r.mpps);
      followed.push_back(r.predicted);
      plain_lines.push_back(r.plain_lines);
      round_ratio.push_back(r.mpps > 0 ? r.predicted / r.mpps : 0);
      if (r.matched) matched_mpps.push_back(r.mpps);
      cpu.push_back(r.cpu_mpps);
      share.push_back(r.min_share);
      if (r.min_share > best->min_share) best = &r;
      per_round.push_back(Obj()
                              .num("mpps", r.mpps)
                              .num("cpu_mpps", r.cpu_mpps)
                              .num("min_cpu_share", r.min_share)
                              .num("ring_cycles_before", r.ring_cycles)
                              .num("line_read_cycles_before", r.ring.line_read_cycles)
                              .num("line_rewrite_cycles_before", r.ring.line_rewrite_cycles)
                              .num("predicted_mpps", r.predicted)
                              .num("full_ring_share", r.full_ring_share)
                              .raw("same_regime", r.matched ? "true" : "false")
                              .raw("workers", array(r.workers, "\n              "))
                              .done());
    }
    // The model of record: frame lines, the hand-off following each round's ring (the median of
    // the rounds' predictions).
    const double predicted = median(followed), measured = median(mpps), per_cpu = median(cpu);
    const double calibrated = x.pps / 1e6;
    const double previous = previous_mpps[to_string(x.placement)];
    const double ring_predicted = ring_mpps[to_string(x.placement)];
    const double plain = median(plain_lines);
    hits += within(predicted, measured) ? 1 : 0;
    plain_hits += within(plain, measured) ? 1 : 0;
    calibrated_hits += within(calibrated, measured) ? 1 : 0;
    previous_hits += within(previous, measured) ? 1 : 0;
    ring_hits += within(ring_predicted, measured) ? 1 : 0;
    const double matched = matched_mpps.empty() ? 0 : median(matched_mpps);
    if (!matched_mpps.empty()) {
      ++matched_placements;
      matched_hits += within(predicted, matched) ? 1 : 0;
      matched_ring_hits += within(ring_predicted, matched) ? 1 : 0;
    }
    std::fprintf(stderr,
                 "placement_verify: %-18s %-34s predicted %7.3f measured %7.3f Mpps (ratio %.3f; "
                 "not following the regime %.3f; previous model %.3f; ring-only model %.3f; per "
                 "CPU second %7.3f, ratio %.3f; least "
                 "worker CPU share %.2f; calibration's regime in %zu of %zu rounds: %7.3f, ratio "
                 "%.3f)\n",
                 s.name.c_str(), to_string(x.placement).c_str(), predicted, measured,
                 measured > 0 ? predicted / measured : 0, measured > 0 ? calibrated / measured : 0,
                 measured > 0 ? previous / measured : 0,
                 measured > 0 ? ring_predicted / measured : 0, per_cpu,
                 per_cpu > 0 ? predicted / per_cpu : 0, median(share), matched_mpps.size(),
                 rounds[i].size(), matched, matched > 0 ? predicted / matched : 0);
    rows.push_back(
        Obj()
            .str("placement", to_string(x.placement))
            .str("kind", x.kind)
            .num("predicted_mpps", predicted)
            .num("measured_mpps", measured)
            .raw("ratio", ratio_json(predicted, measured))
            .raw("within_15pct", within(predicted, measured) ? "true" : "false")
            .num("median_round_ratio", median(round_ratio))
            .num("calibrated_predicted_mpps", calibrated)
            .raw("calibrated_ratio", ratio_json(calibrated, measured))
            .raw("calibrated_within_15pct", within(calibrated, measured) ? "true" : "false")
            .num("previous_predicted_mpps", previous)
            .raw("previous_ratio", ratio_json(previous, measured))
            .raw("previous_within_15pct", within(previous, measured) ? "true" : "false")
            .num("plain_ring_lines_predicted_mpps", plain)
            .raw("plain_ring_lines_ratio", ratio_json(plain, measured))
            .raw("plain_ring_lines_within_15pct", within(plain, measured) ? "true" : "false")
            .num("ring_only_predicted_mpps", ring_predicted)
            .raw("ring_only_ratio", ratio_json(ring_predicted, measured))
            .raw("ring_only_within_15pct", within(ring_predicted, measured) ? "true" : "false")
            .count("same_regime_rounds", matched_mpps.size())
            .num("same_regime_measured_mpps", matched)
            .raw("same_regime_ratio", ratio_json(predicted, matched))
            .raw("same_regime_within_15pct", within(predicted, matched) ? "true" : "false")
            .raw("same_regime_ring_only_within_15pct",
                 within(ring_predicted, matched) ? "true" : "false")
            .num("cpu_mpps", per_cpu)
            .raw("cpu_ratio", ratio_json(predicted, per_cpu))
            .num("min_cpu_share", median(share))
            .num("best_scheduled_mpps", best->mpps)
            .num("best_scheduled_min_cpu_share", best->min_share)
            .raw("best_scheduled_ratio", ratio_json(predicted, best->mpps))
            .raw("rounds", array(per_round, "\n          "))
            .done());
  }
  return Obj()
      .str("pipeline", s.name)
      .str("what", s.what)
      .num("calibration_mpps", cal.pipeline.mpps)
      .str("predicted_best", p.placements.empty() ? "" : to_string(p.placements.front().placement))
      .count("placements", p.placements.size())
      .count("within_15pct", hits)
      .count("calibrated_within_15pct", calibrated_hits)
      .count("previous_within_15pct", previous_hits)
      .count("plain_ring_lines_within_15pct", plain_hits)
      .count("ring_only_within_15pct", ring_hits)
      .count("same_regime_placements", matched_placements)
      .count("same_regime_within_15pct", matched_hits)
      .count("same_regime_ring_only_within_15pct", matched_ring_hits)
      .raw("handoff", handoff)
      .num("handoff_spread_consumer_cycles", cal.handoff.spread.consumer_cycles_per_packet)
      .num("handoff_scan_consumer_cycles", cal.handoff.scan.consumer_cycles_per_packet)
      .num("scan_line_cycles", plan::scan_line_cycles(p.server))
      .raw("leaves_by_several_ports", p.server.spread ? "true" : "false")
      .raw("handoff_consistent", cal.handoff.consistent ? "true" : "false")
      .count("handoff_attempts", cal.handoff.attempts)
      .num("ring_cycles_after_handoff", cal_ring)
      .num("line_read_cycles", cal.ring.line_read_cycles)
      .num("line_rewrite_cycles", cal.ring.line_rewrite_cycles)
      .num("line_scan_cycles", cal.ring.line_scan_cycles)
      .num("ring_enqueue_before", cal.ring.enqueue_cycles_per_packet)
      .num("ring_dequeue_before", cal.ring.dequeue_cycles_per_packet)
      .num("ring_enqueue_after", ring_after.value().enqueue_cycles_per_packet)
      .num("ring_dequeue_after", ring_after.value().dequeue_cycles_per_packet)
      .num("frame_bytes", cal.pipeline.frame_bytes)
      .num("handoff_producer_cycles", plan::producer_handoff(p.server, true))
      .num("handoff_consumer_cycles", plan::consumer_handoff(p.server))
      .raw("rows", array(rows, "\n      "))
      .done();
}

std::string bench_placement_verify(const BenchContext& ctx) {
  const std::string configs = configs_dir();
  if (configs.empty()) {
    std::fprintf(stderr,
                 "bench: placement_verify: no configs/ (set FULCRUM_SOURCE_DIR): skipped\n");
    return "null";
  }
  const std::string load_before = loadavg();
  const double seconds = std::max(0.05, ctx.seconds / kRounds);
  std::vector<std::string> rows;
  std::optional<plan::Calibration> machine_once;
  if (kSanitized) {
    Result<plan::Calibration> m = plan::calibrate_machine(kDefaultBatch);
    if (!m) return Obj().str("error", m.error()).done();
    machine_once = m.value();
  }
  for (const Subject& s : subjects(ctx, configs)) {
    if (!ctx.large_tables && s.name == "ipv4_router_large") continue;
    rows.push_back(verify_subject(s, seconds, machine_once ? &*machine_once : nullptr));
  }
  return Obj()
      .str("what",
           "paper 002's placement model (fulcrum plan, 2 cores) predicted vs measured per "
           "placement: medians of kRounds alternated runs of --seconds/kRounds each; ratio = "
           "predicted / measured; cpu_mpps: least over stages of its packets per CPU second")
      .count("cores", kCores)
      .count("rounds", kRounds)
      .raw("sanitized", kSanitized ? "true" : "false")
      .num("seconds_per_run", seconds)
      .num("target", kTarget)
      .str("loadavg_before", load_before)
      .str("loadavg_after", loadavg())
      .raw("pipelines", array(rows, "\n    "))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(73, "placement_verify", bench_placement_verify);

}  // namespace fulcrum::bench
