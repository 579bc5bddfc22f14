// The foundation's benchmark groups: generator rate, NoOp chain, L2 echo, branch cost and the
// IPv4 router next to rte_lpm (issue "Foundation", NBA Fig. 10).
#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/lpm_bench.hh"
#include "bench/measure.hh"
#include "bench/raw_loops.hh"
#include "core/median.hh"
#include "lib/route_table.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kSmallTable = 16384;
constexpr size_t kLargeTable = 500000;
constexpr size_t kLpmLookups = 1 << 24;
constexpr uint64_t kRouteSeed = 7;
constexpr uint32_t kPcapPackets = 1 << 16;
constexpr int kMaxChain = 9;
const char* const kNullPort = "net_null0";
const char* const kNullTxOnly = "net_null1,no-rx=1";

std::string bench_generator(const BenchContext& ctx) {
  const double s = ctx.seconds;
  const double mpps = raw_echo_mpps("gen:size=64,flows=1024", s);
  std::fprintf(stderr, "bench: generator alone %.2f Mpps\n", mpps);
  return Obj()
      .str("what", "built-in generator alone: rx_burst + discard, 64 B")
      .num("mpps", mpps)
      .done();
}

std::string bench_noop_chain(const BenchContext& ctx) {
  const double s = ctx.seconds;
  std::vector<double> ks, ns;
  std::vector<std::string> rows;
  for (int k = 0; k <= kMaxChain; ++k) {
    std::string p = "FromInput";
    for (int i = 0; i < k; ++i) p += " -> NoOp";
    p += " -> ToOutput;";
    Measured m = measure(p, {kNullPort}, s);
    ks.push_back(k);
    ns.push_back(m.mpps > 0 ? 1e3 / m.mpps : 0);
    rows.push_back(
        Obj().num("noops", k).num("mpps", m.mpps).num("ns_per_packet", ns.back()).done());
    std::fprintf(stderr, "bench: noop chain %d: %.2f Mpps\n", k, m.mpps);
  }
  return Obj()
      .str("what", "FromInput -> NoOp x k -> ToOutput over net_null, 64 B")
      .num("ns_per_packet_per_element", slope(ks, ns))
      .raw("points", array(rows))
      .done();
}

std::string bench_l2_echo(const BenchContext& ctx) {
  const double s = ctx.seconds;
  // Pipeline and bare loop alternate, kRepeats times each; medians of each.
  std::vector<double> mpps, cpu, raw_mpps, raw_cpu;
  for (int r = 0; r < kRepeats; ++r) {
    const Measured m = measure_once("FromInput -> EtherMirror -> ToOutput;", {kNullPort},
                                    s / kRepeats, BranchMode::kReuse);
    const RawRate raw = raw_echo(kNullPort, s / kRepeats);
    mpps.push_back(m.mpps), cpu.push_back(m.cpu_mpps);
    raw_mpps.push_back(raw.mpps), raw_cpu.push_back(raw.cpu_mpps);
  }
  const double m = median(mpps), mc = median(cpu);
  const double raw = median(raw_mpps), rc = median(raw_cpu);
  std::fprintf(stderr,
               "bench: l2 echo %.2f Mpps (raw net_null rx+tx %.2f, ratio %.2f); per CPU second "
               "%.2f vs %.2f Mpps (ratio %.2f)\n",
               m, raw, raw > 0 ? m / raw : 0, mc, rc, rc > 0 ? mc / rc : 0);
  return Obj()
      .str("what",
           "L2 echo (EtherMirror) over net_null vs bare rx_burst+tx_burst loop, alternately; "
           "cpu_*: packets per second of the worker thread's CPU time")
      .num("mpps", m)
      .num("raw_loop_mpps", raw)
      .num("ratio", raw > 0 ? m / raw : 0)
      .num("cpu_mpps", mc)
      .num("raw_loop_cpu_mpps", rc)
      .num("cpu_ratio", rc > 0 ? mc / rc : 0)
      .done();
}

std::string bench_branch(const BenchContext& ctx) {
  const double s = ctx.seconds;
  const std::string tail = "s[0] -> EtherMirror -> ToOutput; s[1] -> EtherMirror -> ToOutput;";
  auto pipeline = [&](double f) {
    return "FromInput -> s :: RandomSplit(" + fmt(f) + "); " + tail;
  };
  std::vector<std::string> rows;
  for (double f : {0.01, 0.10, 0.50}) {
    for (BranchMode mode : {BranchMode::kReuse, BranchMode::kSplit}) {
      auto [base, m] = measure_pair(pipeline(0), pipeline(f), {kNullPort}, s, mode);
      const char* name = mode == BranchMode::kReuse ? "reuse" : "split";
      std::fprintf(stderr, "bench: branch %.0f/%.0f %s: %.2f Mpps (no branch %.2f)\n",
                   (1 - f) * 100, f * 100, name, m.mpps, base.mpps);
      rows.push_back(Obj()
                         .num("minority_share", f)
                         .str("mode", name)
                         .num("mpps", m.mpps)
                         .num("no_branch_mpps", base.mpps)
                         .num("ratio_to_no_branch", base.mpps > 0 ? m.mpps / base.mpps : 0)
                         .done());
    }
  }
  return Obj()
      .str("what",
           "RandomSplit(f) -> two EtherMirror paths over net_null, reuse vs naive split; "
           "no branch = RandomSplit(0), measured alternately with each point")
      .raw("points", array(rows))
      .done();
}

std::string router_point(double s, size_t routes, const std::string& dir) {
  const std::string file = dir + "/routes-" + std::to_string(routes) + ".txt";
  if (Status st = write_routes4(file, generate_routes4(routes, kRouteSeed, 2)); !st) return "null";
  const auto load_start = std::chrono::steady_clock::now();
  const bool loaded = load_routes4(file).ok();
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  const std::string pipeline = "FromInput -> CheckIPHeader -> IPLookup(\"" + file +
                               "\") -> DecIPTTL -> EtherRewrite(DEFAULT \"02:00:00:00:00:01 "
                               "02:00:00:00:00:02\") -> ToOutput;";
  const std::string gen = "gen:size=64,flows=65536,dst=routes,routes=" + file;
  Measured from_gen = measure(pipeline, {gen, kNullTxOnly}, s);
  const std::string pcap = dir + "/router-" + std::to_string(routes) + ".pcap";
  Measured from_pcap;
  if (Status st = write_pcap_from_generator(gen, pcap, kPcapPackets); st)
    from_pcap = measure(pipeline, {"net_pcap0,rx_pcap=" + pcap + ",infinite_rx=1", kNullTxOnly}, s);
  const double raw_pcap = raw_echo_mpps("net_pcap1,rx_pcap=" + pcap + ",infinite_rx=1", s);
  LpmBenchResult lpm = bench_lpm(routes, kLpmLookups, kRouteSeed);
  std::fprintf(stderr,
               "bench: router %zu routes (file loads in %.0f ms): gen %.2f Mpps, pcap %.2f Mpps "
               "(raw pcap loop %.2f); "
               "lookups/s ours %.1f M, rte_lpm %.1f M\n",
               routes, load_ms, from_gen.mpps, from_pcap.mpps, raw_pcap, lpm.ours_mlookups_per_s,
               lpm.rte_lpm_mlookups_per_s);
  return Obj()
      .count("routes", routes)
      .num("route_file_load_ms", loaded ? load_ms : -1)
      .num("mpps_from_generator", from_gen.mpps)
      .num("mpps_from_pcap_replay", from_pcap.mpps)
      .num("raw_pcap_replay_loop_mpps", raw_pcap)
      .num("dir24_8_bulk_mlookups", lpm.ours_mlookups_per_s)
      .num("rte_lpm_bulk_mlookups", lpm.rte_lpm_mlookups_per_s)
      .num("router_to_rte_lpm_ratio",
           lpm.rte_lpm_mlookups_per_s > 0 ? from_gen.mpps / lpm.rte_lpm_mlookups_per_s : 0)
      .num("dir24_8_to_rte_lpm_ratio", lpm.rte_lpm_mlookups_per_s > 0
                                           ? lpm.ours_mlookups_per_s / lpm.rte_lpm_mlookups_per_s
                                           : 0)
      .num("build_ms_dir24_8", lpm.build_ms_ours)
      .num("build_ms_rte_lpm", lpm.build_ms_rte)
      .done();
}

std::string bench_ipv4_router(const BenchContext& ctx) {
  std::vector<std::string> rows{router_point(ctx.seconds, kSmallTable, ctx.dir)};
  if (ctx.large_tables) rows.push_back(router_point(ctx.seconds, kLargeTable, ctx.dir));
  return array(rows);
}

}  // namespace

FULCRUM_BENCH_GROUP(10, "generator", bench_generator);
FULCRUM_BENCH_GROUP(20, "noop_chain", bench_noop_chain);
FULCRUM_BENCH_GROUP(30, "l2_echo", bench_l2_echo);
FULCRUM_BENCH_GROUP(40, "branch", bench_branch);
FULCRUM_BENCH_GROUP(50, "ipv4_router", bench_ipv4_router);

}  // namespace fulcrum::bench
