// The offload benchmark group (NBA Fig. 2 and 12): the IPv4 router with IPLookupOffload, its
// throughput against the share of batches offloaded (FixedFraction 0, 0.1, ..., 1) at 64 and
// 1024 B, and against the aggregation size at full offload, next to the CPU-only router
// (IPLookup) measured in the same run. The device is the first of `fulcrum devices`: PoCL's
// OpenCL CPU device on machines without a GPU, where the "device" competes with the worker for
// the same cores, so the curve shows the cost of the offload path rather than a GPU's gain.
#include <cstdio>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "lib/route_table.hh"
#include "offload/registry.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kRoutes = 16384;
constexpr uint64_t kRouteSeed = 7;
constexpr int kFractionSteps = 10;
constexpr uint32_t kDefaultAggregate = 32;
const char* const kNullTxOnly = "net_null0,no-rx=1";
const char* const kRewrite =
    "EtherRewrite(0 02:00:00:00:00:10 02:00:00:00:01:10, 1 02:00:00:00:00:11 02:00:00:00:01:11)";

std::string router(const std::string& lookup_and_balancer) {
  return "FromInput -> CheckIPHeader -> " + lookup_and_balancer + " -> DecIPTTL -> " + kRewrite +
         " -> ToOutput;";
}

std::string offload(const std::string& routes, double w, uint32_t aggregate) {
  return "FixedFraction(" + fmt(w) + ") -> IPLookupOffload(" + routes + ", AGGREGATE " +
         std::to_string(aggregate) + ")";
}

std::string size_point(const BenchContext& ctx, const std::string& routes, uint32_t size) {
  const std::vector<std::string> ports = {
      "gen:size=" + std::to_string(size) + ",flows=65536,dst=routes,routes=" + routes, kNullTxOnly};
  const Measured cpu = measure(router("IPLookup(" + routes + ")"), ports, ctx.seconds);
  std::vector<std::string> points;
  double best = 0, best_w = 0;
  for (int step = 0; step <= kFractionSteps; ++step) {
    const double w = static_cast<double>(step) / kFractionSteps;
    const Measured m = measure(router(offload(routes, w, kDefaultAggregate)), ports, ctx.seconds);
    if (m.mpps > best) best = m.mpps, best_w = w;
    points.push_back(Obj()
                         .num("offload_fraction", w)
                         .num("mpps", m.mpps)
                         .num("gbps", m.mpps * size * 8 / 1000)
                         .num("vs_cpu_router", cpu.mpps > 0 ? m.mpps / cpu.mpps : 0)
                         .done());
    std::fprintf(stderr, "bench: offload router %u B, w %.1f: %.2f Mpps (CPU router %.2f)\n", size,
                 w, m.mpps, cpu.mpps);
  }
  return Obj()
      .count("frame_bytes", size)
      .num("cpu_router_mpps", cpu.mpps)
      .num("best_mpps", best)
      .num("best_offload_fraction", best_w)
      .raw("by_fraction", array(points, "\n        "))
      .done();
}

std::string offload_router(const BenchContext& ctx) {
  const auto devices = offload::discover_devices();
  if (devices.empty()) return Obj().str("skipped", "no offload device").done();
  const std::string routes = ctx.dir + "/offload-routes.txt";
  if (Status s = write_routes4(routes, generate_routes4(kRoutes, kRouteSeed, 2)); !s)
    return Obj().str("error", s.error()).done();
  std::vector<std::string> sizes;
  for (uint32_t size : {64u, 1024u}) sizes.push_back(size_point(ctx, routes, size));
  std::vector<std::string> aggregation;
  const std::vector<std::string> ports = {"gen:size=64,flows=65536,dst=routes,routes=" + routes,
                                          kNullTxOnly};
  for (uint32_t a : {1u, 8u, 32u, 64u}) {
    const Measured m = measure(router(offload(routes, 1.0, a)), ports, ctx.seconds);
    aggregation.push_back(Obj().count("aggregate_batches", a).num("mpps", m.mpps).done());
    std::fprintf(stderr, "bench: offload router device-only, aggregate %u: %.2f Mpps\n", a, m.mpps);
  }
  return Obj()
      .str("device", devices.front()->label())
      .count("routes", kRoutes)
      .raw("sizes", array(sizes))
      .raw("device_only_by_aggregation_64B", array(aggregation))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(95, "offload_router", offload_router);

}  // namespace fulcrum::bench
