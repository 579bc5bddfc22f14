// The thesis' policy scheduler against the static configurations of its own profile, measured in
// the same run (issue 17; paper 001 §5–6). For the IPsec gateway at 1500 B (the heaviest
// per-packet work of the offload applications) on the CPU and an emulated GPU-like device
// (offload/emu/: a model, labelled so, never a GPU's figures; it runs the CPU function on a
// device thread, so on a machine with few cores no mix beats the CPU alone):
//   1. `fulcrum profile`'s sweep (profiler.hh): the CPU alone and the device at w = 0.25, 0.5, 1
//      with 4 and 32 batches per task;
//   2. PolicyBalancer with each policy, the generator flat out for the first half of the run,
//      then stepped down to 20 % of the best static throughput (the thesis' Fig. 6.2 load
//      changes). From its trace (40 ms windows):
//        * backlogged phase: Mpps over its second half, against the best static throughput;
//        * light phase: the configuration in force at the end, its power at the offered rate
//          (the profile's power line) against the least power any static point needs to carry
//          that rate, and its profiled p99 against the lowest p99 among the points that carry it;
//        * windows to settle after the step (until the configuration stops changing).
// Power is the profile's: RAPL where readable, else the model of profiler.hh (said so).
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "bench/offload_apps.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_spec.hh"
#include "runtime/balancing/profiler.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {
namespace {

constexpr const char* kEmu = "h2d_gbps=12,d2h_gbps=12,launch_us=5,kernel_mpps=150,lat_us=20";
constexpr uint32_t kAggregate = 32;  // the offloadable element's: the largest the sweep uses
constexpr double kLightShare = 0.2;  // the light phase offers this share of the best throughput
constexpr double kPolicyShare = 6;   // of --seconds, each policy run
constexpr double kMinPolicyS = 3;    // at least 75 windows
constexpr double kProfileShare = 0.5;
constexpr double kMega = 1e6;
constexpr double kHeadroom = 0.9;  // PolicyBalancer's default

struct Window {
  double t = 0, rate = 0;
  int config = -1;
};

std::vector<Window> read_trace(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<Window> out;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    Window w;
    double full = 0, fraction = 0, device = 0, aggregate = 0;
    if (f >> w.t >> w.rate >> full >> fraction >> device >> aggregate >> w.config) out.push_back(w);
  }
  return out;
}

std::string run_policy(const std::string& policy, const Profile& profile,
                       const std::string& profile_file, const char* tmpl, const Files& f,
                       const std::string& gen, const BenchContext& ctx) {
  double best = 0;
  for (const ProfilePoint& p : profile.points) best = std::max(best, p.throughput_pps);
  const double seconds = std::max(kMinPolicyS, ctx.seconds * kPolicyShare);
  const double step_s = seconds / 2;
  const double light = best * kLightShare;
  const std::string trace = ctx.dir + "/policy-" + policy + ".trace";
  RunOptions o;
  o.pipeline_file = "policy.click";
  o.pipeline_text = pipeline(
      tmpl, f,
      "PolicyBalancer(\"" + profile_file + "\", POLICY " + policy + ", TRACE \"" + trace + "\")",
      kAggregate);
  o.ports = {gen + ",step_after=" + fmt(step_s) + ",step_rate=" + fmt(light), kNullTxOnly};
  o.seconds = seconds;
  o.latency = true;
  Result<RunReport> r = run(o);
  if (!r) return Obj().str("policy", policy).str("error", r.error()).done();
  const std::vector<Window> w = read_trace(trace);
  double heavy_sum = 0;
  size_t heavy_n = 0;
  int last_config = -1;
  size_t settle = 0;
  std::vector<std::string> rows;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i].t >= step_s / 2 && w[i].t < step_s) heavy_sum += w[i].rate, ++heavy_n;
    if (w[i].t >= step_s && w[i].config != last_config) settle = i;
    last_config = w[i].config;
    rows.push_back("[" + fmt(w[i].t) + ", " + fmt(w[i].rate / kMega) + ", " +
                   std::to_string(w[i].config) + "]");
  }
  size_t first_light = w.size();
  for (size_t i = 0; i < w.size(); ++i)
    if (w[i].t >= step_s) {
      first_light = i;
      break;
    }
  const double heavy = heavy_n > 0 ? heavy_sum / static_cast<double>(heavy_n) : 0;
  Obj o_json;
  o_json.str("policy", policy)
      .num("backlogged_mpps", heavy / kMega)
      .num("backlogged_vs_best_static", best > 0 ? heavy / best : 0)
      .num("light_offered_mpps", light / kMega)
      .count("windows", w.size())
      .count("windows_to_settle_after_step", settle >= first_light ? settle - first_light + 1 : 0)
      .num("run_p99_us", r.value().latency.p99_us)
      .raw("balanced", r.value().balanced() ? "true" : "false");
  if (last_config >= 0 && static_cast<size_t>(last_config) < profile.points.size()) {
    const ProfilePoint& end = profile.points[static_cast<size_t>(last_config)];
    double least_w = std::numeric_limits<double>::infinity();
    double least_p99 = std::numeric_limits<double>::infinity();
    for (const ProfilePoint& p : profile.points) {
      if (p.throughput_pps * kHeadroom < light) continue;
      least_w = std::min(least_w, p.power_at(light));
      least_p99 = std::min(least_p99, p.p99_us);
    }
    o_json.count("light_config", static_cast<uint64_t>(last_config))
        .num("light_power_w", end.power_at(light))
        .num("light_power_vs_least_static", least_w > 0 ? end.power_at(light) / least_w : 0)
        .num("light_profiled_p99_us", end.p99_us)
        .num("light_p99_vs_lowest_static", least_p99 > 0 ? end.p99_us / least_p99 : 0);
  }
  std::fprintf(stderr,
               "bench: policy %s: backlogged %.3f Mpps (%.0f %% of best static %.3f), light "
               "phase config %d, settled in %zu windows\n",
               policy.c_str(), heavy / kMega, best > 0 ? 100 * heavy / best : 0, best / kMega,
               last_config, settle >= first_light ? settle - first_light + 1 : 0);
  return o_json.raw("trace", array(rows, " ")).done();
}

std::string policy(const BenchContext& ctx) {
  Files files;
  if (Status s = write_files(ctx.dir, files); !s) return Obj().str("error", s.error()).done();
  const App* app = nullptr;
  for (const App& a : offload_apps())
    if (std::string(a.name) == "ipsec-gateway") app = &a;
  if (app == nullptr || missing_class(*app) != nullptr)
    return Obj().str("skipped", "no offloadable IPsec gateway in this binary").done();
  const size_t real = offload::discover_devices().size();
  Result<offload::EmuSpec> spec = offload::parse_emu_spec(kEmu);
  if (!spec) return Obj().str("error", spec.error()).done();
  offload::set_emulated_devices({spec.value()});
  const std::string gen = traffic(*app, files, app->sizes.back());

  RunOptions base;
  base.pipeline_file = "policy.click";
  base.pipeline_text = pipeline(app->offload, files, kCpuOnly, kAggregate);
  base.ports = {gen, kNullTxOnly};
  ProfileSweep sweep;
  sweep.fractions = {0.25, 0.5, 1};
  sweep.aggregates = {4, 32};
  sweep.seconds = ctx.seconds * kProfileShare;
  sweep.devices = {static_cast<int32_t>(real)};  // the emulated device, after the real ones
  Result<Profile> profile = profile_pipeline(base, sweep);
  if (!profile) {
    offload::set_emulated_devices({});
    return Obj().str("error", profile.error()).done();
  }
  const std::string profile_file = ctx.dir + "/policy.profile.json";
  if (Status s = write_profile(profile.value(), profile_file); !s)
    return Obj().str("error", s.error()).done();
  std::vector<std::string> points;
  for (const ProfilePoint& p : profile.value().points)
    points.push_back(Obj()
                         .count("device", static_cast<uint64_t>(p.device))
                         .num("fraction", p.fraction)
                         .count("aggregate", p.aggregate)
                         .num("mpps", p.throughput_pps / kMega)
                         .num("p99_us", p.p99_us)
                         .num("power_w", p.power_w)
                         .num("idle_w", p.idle_w)
                         .done());
  std::vector<std::string> runs;
  for (const char* pol : {"throughput", "latency", "energy"})
    runs.push_back(run_policy(pol, profile.value(), profile_file, app->offload, files, gen, ctx));
  offload::set_emulated_devices({});
  const bool measured = !profile.value().points.empty() && profile.value().points[0].power_measured;
  return Obj()
      .str(
          "what",
          "PolicyBalancer per policy against the static points of its own profile, measured in "
          "the same run: IPsec gateway, 1500 B, the generator flat out then stepped to 20 % of the "
          "best static throughput; the device is emulated (a model)")
      .str("device", std::string("emulated: ") + kEmu)
      .str("power", measured ? "RAPL" : "modelled (profiler.hh PowerModel defaults)")
      .raw("profile", array(points, "\n      "))
      .raw("policies", array(runs, "\n    "))
      .done();
}

FULCRUM_BENCH_GROUP(97, "policy", policy);

}  // namespace
}  // namespace fulcrum::bench
