// Per-packet cost (issue 16): the IPv4 router's pipeline cost above I/O and its cost per
// element, on the page size this process runs on and (from a child process) on the other one,
// and the router's scaling from one worker to two.
//
//   * router_cost: the router of the "ipv4_router" group (16k routes) from pcap replay to a
//     transmit-only net_null, and `FromInput -> ToOutput` on the same ports, measured alternately
//     (kRepeats each, medians). Cost above I/O = 1/rate(router) - 1/rate(I/O), in ns per packet:
//     the figure to set beside another framework's measured the same way. Per element: the TSC
//     cycles the graph counts inside each element's process_batch, per packet it took. When this
//     process runs on hugepages, the same group runs again in a child on 4 KiB pages (--no-huge)
//     and the other way round when hugepages can be had, so one `fulcrum bench` prints both.
//   * scaling: the router from the generator to net_null on one worker and on two (each its own
//     generator queue and TX queue); the ratio is the two-worker rate over the one-worker rate.
//     Per worker of the two: its rate, the share of the run's time its thread was on a CPU
//     (cpu_share: below 1 when other processes take the core) and its rate per CPU second;
//     cpu_efficiency: packets per CPU second of both workers over one worker's (1: nothing lost
//     to sharing between workers; the wall-clock ratio then only says how much CPU they got).
#include <rte_eal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/lpm_bench.hh"
#include "bench/measure.hh"
#include "io/eal.hh"
#include "io/mempool.hh"
#include "lib/route_table.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kRoutes = 16384;
constexpr uint64_t kRouteSeed = 7;
constexpr uint32_t kPcapPackets = 1 << 16;
constexpr double kNsPerSecond = 1e9;
const char* const kNullTxOnly = "net_null1,no-rx=1";
const char* const kRouterCostGroup = "router_cost";

std::string router_pipeline(const std::string& routes) {
  return "FromInput -> CheckIPHeader -> IPLookup(\"" + routes +
         "\") -> DecIPTTL -> EtherRewrite(DEFAULT \"02:00:00:00:00:01 02:00:00:00:00:02\") -> "
         "ToOutput;";
}

// Writes the route file and returns its path ("" when it cannot be written).
std::string routes_file(const std::string& dir) {
  const std::string file = dir + "/cost-routes-" + std::to_string(kRoutes) + ".txt";
  if (Status st = write_routes4(file, generate_routes4(kRoutes, kRouteSeed, 2)); !st) return "";
  return file;
}

struct ElementCost {
  std::string name, class_name;
  uint64_t cycles = 0, packets = 0;
};

// What this process measures: rates (medians), the cost above I/O, per-element cycles (sums
// over the router's runs).
std::string measure_cost(const BenchContext& ctx) {
  const std::string routes = routes_file(ctx.dir);
  if (routes.empty()) return "null";
  const std::string gen = "gen:size=64,flows=65536,dst=routes,routes=" + routes;
  const std::string pcap = ctx.dir + "/cost-router.pcap";
  if (Status st = write_pcap_from_generator(gen, pcap, kPcapPackets); !st) return "null";
  const std::vector<std::string> ports = {"net_pcap0,rx_pcap=" + pcap + ",infinite_rx=1",
                                          kNullTxOnly};
  const std::string router = router_pipeline(routes);
  const std::string io = "FromInput -> ToOutput;";
  const double s = ctx.seconds / kRepeats;
  std::vector<double> io_mpps, router_mpps, io_cpu, router_cpu;
  std::vector<ElementCost> costs;
  double tsc_hz = 0;
  bool balanced = true;
  for (int r = 0; r < kRepeats; ++r) {
    Result<RunReport> a = run_pipeline(io, ports, s, 1);
    Result<RunReport> b = run_pipeline(router, ports, s, 1);
    if (!a || !b) {
      std::fprintf(stderr, "bench: %s\n", (!a ? a.error() : b.error()).c_str());
      return "null";
    }
    io_mpps.push_back(a.value().mpps_in());
    router_mpps.push_back(b.value().mpps_in());
    io_cpu.push_back(cpu_mpps(a.value()));
    router_cpu.push_back(cpu_mpps(b.value()));
    balanced &= a.value().balanced() && b.value().balanced();
    tsc_hz = b.value().tsc_hz;
    costs.resize(b.value().elements.size());
    for (size_t i = 0; i < costs.size(); ++i) {
      const ElementReport& e = b.value().elements[i];
      costs[i].name = e.name;
      costs[i].class_name = e.class_name;
      costs[i].cycles += e.cycles;
      costs[i].packets += e.in_packets;
    }
  }
  const double io_rate = median_of(io_mpps), router_rate = median_of(router_mpps);
  const double above = io_rate > 0 && router_rate > 0 ? 1e3 / router_rate - 1e3 / io_rate : 0;
  const double io_c = median_of(io_cpu), router_c = median_of(router_cpu);
  const double above_cpu = io_c > 0 && router_c > 0 ? 1e3 / router_c - 1e3 / io_c : 0;
  std::vector<std::string> rows;
  double sum = 0;
  for (const ElementCost& c : costs) {
    const double ns =
        c.packets > 0 && tsc_hz > 0
            ? static_cast<double>(c.cycles) / static_cast<double>(c.packets) / tsc_hz * kNsPerSecond
            : 0;
    sum += ns;
    rows.push_back(
        Obj()
            .str("element", c.name)
            .str("class", c.class_name)
            .num("ns_per_packet", ns)
            .num("cycles_per_packet",
                 c.packets > 0 ? static_cast<double>(c.cycles) / static_cast<double>(c.packets) : 0)
            .done());
  }
  const bool huge = rte_eal_has_hugepages() != 0;
  std::fprintf(stderr,
               "bench: router cost (%s): router %.2f Mpps, FromInput -> ToOutput %.2f Mpps on the "
               "same ports: %.2f ns/packet above I/O (elements' own cycles %.2f ns/packet); "
               "per CPU second %.2f vs %.2f Mpps: %.2f ns/packet above I/O\n",
               huge ? "hugepages" : "4 KiB pages", router_rate, io_rate, above, sum, router_c, io_c,
               above_cpu);
  return Obj()
      .str("pages", huge ? "hugepages" : "4k")
      .str("packet_pools", packet_pool_memory())
      .num("router_mpps", router_rate)
      .num("io_mpps", io_rate)
      .num("ns_per_packet_above_io", above)
      .num("elements_ns_per_packet", sum)
      .num("router_cpu_mpps", router_c)
      .num("io_cpu_mpps", io_c)
      .num("cpu_ns_per_packet_above_io", above_cpu)
      .raw("balanced", balanced ? "true" : "false")
      .raw("per_element", array(rows, "\n        "))
      .done();
}

// `fulcrum bench --only router_cost` in a child process on the other page size; its group's JSON
// or "null" (with the reason on stderr).
std::string cost_in_child(const BenchContext& ctx, bool no_huge) {
  const std::string out = ctx.dir + "/router-cost-child.json";
  const std::string seconds = fmt(ctx.seconds);
  std::vector<std::string> args = {"fulcrum", "bench", "--only", kRouterCostGroup,  "--seconds",
                                   seconds,   "--out", out,      "--no-other-pages"};
  if (no_huge) args.emplace_back("--no-huge");
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    execv("/proc/self/exe", argv.data());
    _exit(127);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status) ||
      WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "bench: router cost on the other page size: the child run failed\n");
    return "null";
  }
  std::stringstream text;
  text << std::ifstream(out).rdbuf();
  const std::string json = text.str();
  const std::string key = "\"" + std::string(kRouterCostGroup) + "\": ";
  const size_t at = json.find(key);
  const size_t end = json.rfind('}');  // the end of the whole object
  if (at == std::string::npos || end == std::string::npos || end <= at) return "null";
  const std::string group = json.substr(at + key.size(), end - at - key.size());
  // The child's group is {"this_process": {...}}: take the inner object.
  const std::string inner = "\"this_process\": ";
  const size_t in = group.find(inner);
  const size_t close = group.rfind('}');
  if (in == std::string::npos || close == std::string::npos) return "null";
  std::string obj = group.substr(in + inner.size(), close - in - inner.size());
  while (!obj.empty() && (obj.back() == '\n' || obj.back() == ' ')) obj.pop_back();
  return obj;
}

std::string bench_router_cost(const BenchContext& ctx) {
  const std::string here = measure_cost(ctx);
  Obj o;
  o.str("what",
        "IPv4 router (CheckIPHeader, IPLookup 16k routes, DecIPTTL, EtherRewrite) from pcap "
        "replay to net_null vs FromInput -> ToOutput on the same ports, alternately; "
        "ns_per_packet_above_io = 1e3/router_mpps - 1e3/io_mpps; per_element: TSC cycles inside "
        "each element per packet (its process_batch and the hand-off of its output); cpu_*: "
        "rates per second of the worker thread's CPU time (what a shared core leaves)");
  o.raw("this_process", here);
  if (!ctx.other_pages) return o.done();
  const bool huge = rte_eal_has_hugepages() != 0;
  if (huge) {
    o.raw("other_pages", cost_in_child(ctx, true));
  } else if (hugepages_available()) {
    o.raw("other_pages", cost_in_child(ctx, false));
  } else {
    o.raw("other_pages", "null");
    o.str("note", "no free hugepages: scripts/hugepages.sh (as root) reserves them");
  }
  return o.done();
}

std::string bench_scaling(const BenchContext& ctx) {
  const std::string routes = routes_file(ctx.dir);
  if (routes.empty()) return "null";
  const std::string gen = "gen:size=64,flows=65536,dst=routes,routes=" + routes;
  const std::vector<std::string> ports = {gen, kNullTxOnly};
  const std::string router = router_pipeline(routes);
  const double s = ctx.seconds / kRepeats;
  std::vector<double> one, two, one_cpu, two_cpu;
  std::vector<std::string> per_worker;
  for (int r = 0; r < kRepeats; ++r) {
    Result<RunReport> a = run_pipeline(router, ports, s, 1);
    Result<RunReport> b = run_pipeline(router, ports, s, 2);
    if (!a || !b) {
      std::fprintf(stderr, "bench: %s\n", (!a ? a.error() : b.error()).c_str());
      return "null";
    }
    one.push_back(a.value().mpps_in());
    two.push_back(b.value().mpps_in());
    one_cpu.push_back(cpu_mpps(a.value()));
    two_cpu.push_back(cpu_mpps(b.value()));
    if (r == kRepeats - 1)
      for (const WorkerReport& w : b.value().per_worker)
        per_worker.push_back(
            Obj()
                .num("cpu", w.cpu)
                .num("mpps", b.value().duration_s > 0
                                 ? static_cast<double>(w.rx_packets) / b.value().duration_s / 1e6
                                 : 0)
                .num("cpu_share", b.value().duration_s > 0 ? w.cpu_s / b.value().duration_s : 0)
                .num("cpu_mpps",
                     w.cpu_s > 0 ? static_cast<double>(w.rx_packets) / w.cpu_s / 1e6 : 0)
                .done());
  }
  const double m1 = median_of(one), m2 = median_of(two);
  const double c1 = median_of(one_cpu), c2 = median_of(two_cpu);
  const long cores = sysconf(_SC_NPROCESSORS_ONLN);
  std::fprintf(stderr,
               "bench: router scaling: 1 worker %.2f Mpps, 2 workers %.2f Mpps (%.2fx; %ld CPUs "
               "online, the control thread shares the first worker's CPU when there are 2); per "
               "CPU second of the workers %.2f vs %.2f Mpps (efficiency %.2f)\n",
               m1, m2, m1 > 0 ? m2 / m1 : 0, cores, c1, c2, c1 > 0 ? c2 / c1 : 0);
  return Obj()
      .str("what",
           "IPv4 router (16k routes) from the generator to net_null, 1 worker vs 2 workers "
           "(a generator queue and a TX queue each), alternately")
      .count("cpus_online", static_cast<uint64_t>(cores))
      .num("one_worker_mpps", m1)
      .num("two_workers_mpps", m2)
      .num("ratio", m1 > 0 ? m2 / m1 : 0)
      .num("one_worker_cpu_mpps", c1)
      .num("two_workers_cpu_mpps", c2)
      .num("cpu_efficiency", c1 > 0 ? c2 / c1 : 0)
      .raw("two_workers_per_worker", array(per_worker, "\n        "))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(55, "router_cost", bench_router_cost);
FULCRUM_BENCH_GROUP(56, "scaling", bench_scaling);

}  // namespace fulcrum::bench
