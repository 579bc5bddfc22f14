// The offload sweep (issue 4; NBA Fig. 2 and Fig. 12): for each offloadable application of
// kApps, with its balancer substituted by CPUOnly, DeviceOnly or FixedFraction(w):
//   * per frame size, Mpps and Gbps at offload fractions 0, 10, ..., 100 % (0 % is CPUOnly,
//     100 % DeviceOnly), the CPU-only and device-only figures, the best split and its fraction,
//     next to the same application without the offload layer (the plain CPU elements) measured
//     in the same run;
//   * device-only Mpps over AGGREGATE 1, 4, 16, 32, 64 at the smallest size;
//   * per mode (CPU-only, device-only, best split) RX-to-TX latency percentiles at saturation
//     (generator as fast as it goes) and at half the mode's saturated rate (RunOptions::latency);
//   * for a chain of offloadable elements (the IPsec gateway: AES then HMAC), device-only per
//     frame size as separate elements (CHAIN false: each copies the packets in and out), chained
//     (FUSE false: two kernels on the same device buffers) and fused (one kernel), NBA's
//     modular-versus-monolithic comparison.
// An application whose element classes are not in this binary is listed as skipped. The device
// is the first of `fulcrum devices`: PoCL's OpenCL CPU device on machines without a GPU, where
// it competes with the worker for the same two cores, so the curves show the cost of the
// offload path there, not a GPU's gain. docs/benchmarks.md describes the method.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "bench/offload_apps.hh"
#include "core/registry.hh"
#include "offload/discovery.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {
namespace {

constexpr int kFractionSteps = 10;
constexpr uint32_t kDefaultAggregate = 32;
constexpr uint32_t kAggregates[] = {1, 4, 16, 32, 64};
// Share of --seconds per measured point: the sweep has ~50 points per application, so below
// kMedianSeconds a point is one run (the default run stays short), from there the median of
// kRepeats runs, as the other groups measure.
constexpr double kPointShare = 0.1;
constexpr double kMedianSeconds = 2;
constexpr double kLatencyShare = 0.1;
constexpr double kBelowSaturation = 0.5;  // offered load as a share of the saturated rate
constexpr double kMega = 1e6;
struct Latency {
  double offered_mpps = 0;  // 0: saturation
  double achieved_mpps = 0;
  RunReport::Latency l;
};

// One run with per-packet latency; `rate_pps` 0 runs the generator flat out.
Latency latency_run(const std::string& pipeline, const std::string& traffic, double rate_pps,
                    double seconds) {
  RunOptions o;
  o.pipeline_file = "offload-sweep.click";
  o.pipeline_text = pipeline;
  o.ports = {rate_pps > 0 ? traffic + ",rate=" + fmt(rate_pps) : traffic, kNullTxOnly};
  o.seconds = seconds;
  o.latency = true;
  Result<RunReport> r = run(o);
  if (!r) {
    std::fprintf(stderr, "bench: %s\n", r.error().c_str());
    return {};
  }
  return Latency{rate_pps / kMega, r.value().mpps_in(), r.value().latency};
}

std::string latency_json(const Latency& x) {
  return Obj()
      .str("load", x.offered_mpps > 0 ? "below saturation" : "saturation")
      .num("offered_mpps", x.offered_mpps)
      .num("achieved_mpps", x.achieved_mpps)
      .count("samples", x.l.samples)
      .num("p50_us", x.l.p50_us)
      .num("p90_us", x.l.p90_us)
      .num("p99_us", x.l.p99_us)
      .num("p99_9_us", x.l.p999_us)
      .num("max_us", x.l.max_us)
      .done();
}

Measured measure_point(const std::string& pipe, const std::vector<std::string>& ports, double s,
                       const BenchContext& ctx) {
  if (ctx.seconds >= kMedianSeconds) return measure(pipe, ports, s);
  return measure_once(pipe, ports, s, BranchMode::kReuse);
}

struct SizeResult {
  std::string json;
  double best_w = 0;
};

SizeResult size_point(const App& app, const Files& f, uint32_t size, double point_s,
                      const BenchContext& ctx) {
  const std::vector<std::string> ports = {traffic(app, f, size), kNullTxOnly};
  const Measured plain = measure_point(pipeline(app.plain, f), ports, point_s, ctx);
  std::vector<std::string> rows;
  double cpu = 0, dev = 0, best = 0, best_w = 0;
  bool balanced = plain.balanced;
  for (int step = 0; step <= kFractionSteps; ++step) {
    const double w = static_cast<double>(step) / kFractionSteps;
    const std::string b = step == 0 ? kCpuOnly : step == kFractionSteps ? kDeviceOnly : fraction(w);
    const Measured m =
        measure_point(pipeline(app.offload, f, b, kDefaultAggregate), ports, point_s, ctx);
    balanced &= m.balanced;
    if (step == 0) cpu = m.mpps;
    if (step == kFractionSteps) dev = m.mpps;
    if (m.mpps > best) best = m.mpps, best_w = w;
    rows.push_back(Obj()
                       .num("offload_fraction", w)
                       .num("mpps", m.mpps)
                       .num("gbps", gbps(m.mpps, size))
                       .done());
    std::fprintf(stderr, "bench: offload %s %u B, %3.0f %%: %.3f Mpps (plain %.3f)\n", app.name,
                 size, w * 100, m.mpps, plain.mpps);
  }
  return {Obj()
              .count("frame_bytes", size)
              .num("plain_cpu_mpps", plain.mpps)
              .num("cpu_only_mpps", cpu)
              .num("cpu_only_gbps", gbps(cpu, size))
              .num("device_only_mpps", dev)
              .num("device_only_gbps", gbps(dev, size))
              .num("best_mpps", best)
              .num("best_gbps", gbps(best, size))
              .num("best_offload_fraction", best_w)
              .num("best_vs_cpu_only", cpu > 0 ? best / cpu : 0)
              .raw("balanced", balanced ? "true" : "false")
              .raw("by_fraction", array(rows, "\n          "))
              .done(),
          best_w};
}

// Device-only with the chain's elements separate, chained and fused, at one frame size.
std::string chain_point(const App& app, const Files& f, uint32_t size, double point_s,
                        const BenchContext& ctx) {
  const std::vector<std::string> ports = {traffic(app, f, size), kNullTxOnly};
  auto device_only = [&](const char* chain) {
    return measure_point(pipeline(app.offload, f, kDeviceOnly, kDefaultAggregate, chain), ports,
                         point_s, ctx)
        .mpps;
  };
  const double separate = device_only(", CHAIN false");
  const double chained = device_only(", FUSE false");
  const double fused = device_only("");
  std::fprintf(stderr,
               "bench: offload %s %u B device-only: separate %.3f, chained %.3f, fused "
               "%.3f Mpps\n",
               app.name, size, separate, chained, fused);
  return Obj()
      .count("frame_bytes", size)
      .num("separate_mpps", separate)
      .num("chained_mpps", chained)
      .num("fused_mpps", fused)
      .num("separate_vs_fused", fused > 0 ? separate / fused : 0)
      .num("chained_vs_fused", fused > 0 ? chained / fused : 0)
      .num("chained_vs_separate", separate > 0 ? chained / separate : 0)
      .done();
}

std::string app_point(const App& app, const Files& f, const BenchContext& ctx) {
  if (const char* cls = missing_class(app))
    return Obj()
        .str("app", app.name)
        .str("skipped", std::string("element class ") + cls + " is not in this binary")
        .done();
  const double point_s = ctx.seconds * kPointShare;
  std::vector<std::string> sizes;
  double best_w_small = 0;
  for (uint32_t size : app.sizes) {
    SizeResult r = size_point(app, f, size, point_s, ctx);
    if (size == app.sizes.front()) best_w_small = r.best_w;
    sizes.push_back(std::move(r.json));
  }
  const uint32_t small = app.sizes.front();
  const std::vector<std::string> ports = {traffic(app, f, small), kNullTxOnly};
  std::vector<std::string> aggregation;
  for (uint32_t a : kAggregates) {
    const Measured m = measure_point(pipeline(app.offload, f, kDeviceOnly, a), ports, point_s, ctx);
    aggregation.push_back(Obj()
                              .count("aggregate_batches", a)
                              .num("mpps", m.mpps)
                              .num("gbps", gbps(m.mpps, small))
                              .done());
    std::fprintf(stderr, "bench: offload %s device-only, AGGREGATE %u: %.3f Mpps\n", app.name, a,
                 m.mpps);
  }
  std::vector<std::string> chaining;
  if (app.chain) {
    for (uint32_t size : app.sizes) chaining.push_back(chain_point(app, f, size, point_s, ctx));
  }
  struct Mode {
    const char* name;
    std::string balancer;
  };
  const Mode modes[] = {{"cpu_only", kCpuOnly},
                        {"device_only", kDeviceOnly},
                        {"best_split", best_w_small == 0   ? std::string(kCpuOnly)
                                       : best_w_small == 1 ? std::string(kDeviceOnly)
                                                           : fraction(best_w_small)}};
  std::vector<std::string> latency;
  const double latency_s = ctx.seconds * kLatencyShare;
  for (const Mode& mode : modes) {
    const std::string pipe = pipeline(app.offload, f, mode.balancer, kDefaultAggregate);
    const Latency sat = latency_run(pipe, ports[0], 0, latency_s);
    const Latency below =
        latency_run(pipe, ports[0], sat.achieved_mpps * kMega * kBelowSaturation, latency_s);
    for (const Latency& x : {sat, below})
      std::fprintf(stderr,
                   "bench: offload %s %s latency, %s: p50 %.1f p99 %.1f p99.9 %.1f us at %.3f "
                   "Mpps\n",
                   app.name, mode.name, x.offered_mpps > 0 ? "below saturation" : "saturation",
                   x.l.p50_us, x.l.p99_us, x.l.p999_us, x.achieved_mpps);
    latency.push_back(
        Obj()
            .str("mode", mode.name)
            .str("balancer", mode.balancer)
            .raw("points", array({latency_json(sat), latency_json(below)}, "\n          "))
            .done());
  }
  return Obj()
      .str("app", app.name)
      .count("aggregate_batches", kDefaultAggregate)
      .raw("sizes", array(sizes, "\n      "))
      .raw("device_only_by_aggregation", array(aggregation, "\n      "))
      .raw("device_only_by_chaining", array(chaining, "\n      "))
      .count("latency_frame_bytes", small)
      .raw("latency", array(latency, "\n      "))
      .done();
}

std::string offload_sweep(const BenchContext& ctx) {
  const auto devices = offload::discover_devices();
  if (devices.empty()) return Obj().str("skipped", "no offload device").done();
  Files files;
  if (Status s = write_files(ctx.dir, files); !s) return Obj().str("error", s.error()).done();
  std::vector<std::string> apps;
  for (const App& app : offload_apps()) apps.push_back(app_point(app, files, ctx));
  return Obj()
      .str("what",
           "per offloadable application: Mpps/Gbps by offload fraction (0 % CPUOnly, 100 % "
           "DeviceOnly, FixedFraction between; AGGREGATE 32) per frame size next to the plain "
           "CPU pipeline; device-only by AGGREGATE; RX-to-TX latency percentiles per mode at "
           "saturation and at half the saturated rate; Gbps counts frame bytes only")
      .str("device", devices.front()->label())
      .num("seconds_per_point", ctx.seconds * kPointShare)
      .count("runs_per_point", ctx.seconds >= kMedianSeconds ? kRepeats : 1)
      .raw("apps", array(apps, "\n    "))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(95, "offload_sweep", offload_sweep);

}  // namespace fulcrum::bench
