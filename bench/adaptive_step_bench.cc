// Step changes in traffic and how the balancers follow them (issue 17): for AdaptiveBalancer
// (NBA's hill climbing, 20 ms windows; and with SCAN 4, MARGIN 1) and PolicyBalancer (the thesis'
// scheduler, energy policy, 40 ms windows, on a profile of the same pipeline made in the same run
// at 64 and 1500 B), on the IPsec gateway with an emulated GPU-like device (offload/emu/: a model,
// labelled so) and the first real device (PoCL's OpenCL CPU device on machines without a GPU), two
// experiments each:
//   * size: the generator flat out at 64 B, stepped to 1500 B halfway through the run
//     (gen:...,step_after=S,step_size=1500);
//   * rate: the generator flat out (100 %), stepped to 20 % of the best throughput of the profile
//     (gen:...,step_after=S,step_rate=PPS).
// From the balancer's trace (every window: time, w, rate, profile point) it computes the
// re-convergence time (runtime/balancing/reconvergence.hh; band: 1.5 STEP of w for
// AdaptiveBalancer, the exact profile point for PolicyBalancer), the rates before and after the
// step, and from the run's report the balance line: packets in = out + dropped + queued, 0 lost.
// tools/plot_adaptive.py draws w and throughput over time around the step.
// Comparing PolicyBalancer settings on one host, on the same profile:
// FULCRUM_BENCH_POLICY_ARGS holds variants separated by ';', each appended to PolicyBalancer's
// arguments and run in turn (e.g. "SETTLED_PERSIST 0;;SETTLED_PERSIST 0;" runs that setting and
// the default, alternated twice); FULCRUM_BENCH_BALANCERS (nba, nba-scan, policy; default all)
// and FULCRUM_BENCH_STEPS (size, rate; default both) pick the balancers and steps run.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "bench/offload_apps.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_spec.hh"
#include "runtime/balancing/profiler.hh"
#include "runtime/balancing/reconvergence.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kAggregate = 32;
constexpr uint32_t kSmall = 64, kLarge = 1500;  // the size step, bytes
constexpr double kRateShare = 0.2;              // the rate step: to 20 % of the best throughput
constexpr double kRunShare = 6;                 // of --seconds, each run; the step at half
constexpr double kMinRunS = 4;
constexpr double kProfileShare = 0.5;  // of --seconds, each profile point
constexpr double kAdaptiveWindowMs = 20;
constexpr double kClimbStep = 0.04;  // AdaptiveBalancer's STEP (its default, NBA's delta)
constexpr double kAdaptiveBand = 1.5 * kClimbStep;
constexpr double kPolicyBand = 0;  // the profile point itself
constexpr double kTail = 0.25;     // the final value: median of the last quarter after the step
constexpr double kMega = 1e6;
constexpr double kMs = 1e3;

struct DeviceProfile {
  const char* name;
  const char* emu;        // nullptr: the first real device
  bool own_core = false;  // the device thread on a CPU of its own (offload_apps.hh, OwnCore)
};

const DeviceProfile kDevices[] = {
    {"emu-fast", "h2d_gbps=12,d2h_gbps=12,launch_us=5,kernel_mpps=150,lat_us=20"},
    {"first-device", nullptr},
    {"emu-fast-own-core", "h2d_gbps=12,d2h_gbps=12,launch_us=5,kernel_mpps=150,lat_us=20", true},
    {"emu-native-own-core",
     "h2d_gbps=12,d2h_gbps=12,launch_us=5,kernel_mpps=150,lat_us=20,native=1", true},
};

// FULCRUM_BENCH_POLICY_ARGS' variants (one empty variant, the defaults, when it is not set).
std::vector<std::string> policy_variants() {
  const char* env = std::getenv("FULCRUM_BENCH_POLICY_ARGS");
  std::vector<std::string> out;
  std::string_view rest = env == nullptr ? "" : env;
  for (;;) {
    const size_t semi = rest.find(';');
    out.emplace_back(rest.substr(0, semi));
    if (semi == std::string_view::npos) return out;
    rest = rest.substr(semi + 1);
  }
}

std::string text_for(const DeviceProfile& d, std::string text) {
  return d.own_core ? own_core_pipeline(std::move(text)) : text;
}

struct Window {
  double t = 0, w = 0, rate = 0;
  int config = -1;
};

// AdaptiveBalancer's trace: "time_s fraction rate_pps"; PolicyBalancer's: "time_s rate_pps
// full_share fraction device aggregate config".
std::vector<Window> read_trace(const std::string& path, bool policy) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<Window> out;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    Window w;
    double full = 0, device = 0, aggregate = 0;
    const bool ok = policy ? static_cast<bool>(f >> w.t >> w.rate >> full >> w.w >> device >>
                                               aggregate >> w.config)
                           : static_cast<bool>(f >> w.t >> w.w >> w.rate);
    if (ok) out.push_back(w);
  }
  return out;
}

// Mean rate of the windows ending in [from, to).
double mean_rate(const std::vector<Window>& w, double from, double to) {
  double sum = 0;
  size_t n = 0;
  for (const Window& x : w)
    if (x.t >= from && x.t < to) sum += x.rate, ++n;
  return n > 0 ? sum / static_cast<double>(n) : 0;
}

struct Setup {
  const App* app;
  const Files* files;
  int device;  // index for AdaptiveBalancer's DEVICE
  std::string profile_file;
  double best_pps;  // the profile's best throughput: "100 %"
  double seconds;
};

// `scan`: AdaptiveBalancer with SCAN 4, MARGIN 1 (beyond NBA; it scans again on the step).
// `policy_args`: appended to PolicyBalancer's arguments (a variant; empty: the defaults).
std::string experiment(const Setup& s, const DeviceProfile& d, bool policy, bool size_step,
                       const BenchContext& ctx, bool scan = false,
                       const std::string& policy_args = "") {
  const char* balancer_name = policy ? "PolicyBalancer"
                              : scan ? "AdaptiveBalancer+SCAN"
                                     : "AdaptiveBalancer";
  const char* step_name = size_step ? "size" : "rate";
  const std::string trace = ctx.dir + "/adaptive_step-" + d.name + "-" +
                            (policy ? "policy"
                             : scan ? "adaptive-scan"
                                    : "adaptive") +
                            "-" + step_name + ".trace";
  const std::string balancer =
      policy ? "PolicyBalancer(\"" + s.profile_file + "\", POLICY energy, TRACE \"" + trace + "\"" +
                   (policy_args.empty() ? "" : ", " + policy_args) + ")"
             : "AdaptiveBalancer(WINDOW_MS " + fmt(kAdaptiveWindowMs) + ", DEVICE " +
                   std::to_string(s.device) + (scan ? ", SCAN 4, MARGIN 1" : "") + ", TRACE \"" +
                   trace + "\")";
  const double step_s = s.seconds / 2;
  const double light_pps = s.best_pps * kRateShare;
  const std::string step =
      ",step_after=" + fmt(step_s) +
      (size_step ? ",step_size=" + std::to_string(kLarge) : ",step_rate=" + fmt(light_pps));
  RunOptions o;
  o.pipeline_file = "adaptive_step.click";
  o.pipeline_text = text_for(d, pipeline(s.app->offload, *s.files, balancer, kAggregate));
  o.ports = {traffic(*s.app, *s.files, kSmall) + step, kNullTxOnly};
  o.seconds = s.seconds;
  Obj j;
  j.str("balancer", balancer_name).str("step", step_name);
  if (policy && !policy_args.empty()) j.str("policy_args", policy_args);
  Result<RunReport> r = run(o);
  if (!r) return j.str("error", r.error()).done();
  const RunReport& rep = r.value();
  const std::vector<Window> w = read_trace(trace, policy);
  std::vector<double> t, v;
  std::vector<std::string> rows;
  for (const Window& x : w) {
    t.push_back(x.t);
    v.push_back(policy ? static_cast<double>(x.config) : x.w);
    rows.push_back("[" + fmt(x.t) + ", " + fmt(x.w) + ", " + fmt(x.rate / kMega) + ", " +
                   std::to_string(x.config) + "]");
  }
  const double band = policy ? kPolicyBand : kAdaptiveBand;
  const Reconvergence rc = reconvergence(t, v, step_s, band, kTail);
  const double end = w.empty() ? s.seconds : w.back().t;
  const double before = mean_rate(w, step_s / 2, step_s);
  const double after = mean_rate(w, step_s + (end - step_s) / 2, end + 1);
  const uint32_t after_size = size_step ? kLarge : kSmall;
  const int64_t lost = static_cast<int64_t>(rep.packets_in + rep.packets_created) -
                       static_cast<int64_t>(rep.packets_out + rep.dropped + rep.queued);
  std::fprintf(stderr,
               "bench: adaptive_step %s %s%s%s%s %s step: %.3f -> %.3f Mpps (%.2f -> %.2f Gbit/s), "
               "%s %.0f ms (%zu windows, final %s %.2f, max off %.2f; reacted %.0f ms, first at "
               "final %.0f ms), in %llu out %llu dropped %llu queued %llu lost %lld\n",
               d.name, balancer_name, policy_args.empty() ? "" : " (", policy_args.c_str(),
               policy_args.empty() ? "" : ")", step_name, before / kMega, after / kMega,
               gbps(before / kMega, kSmall), gbps(after / kMega, after_size),
               rc.converged ? "re-converged in" : "NOT re-converged, run",
               rc.converged ? rc.time_s * kMs : (end - step_s) * kMs, rc.windows,
               policy ? "profile point" : "w", rc.final_value, rc.max_excursion,
               rc.reacted ? rc.reaction_s * kMs : -1, rc.arrived ? rc.arrival_s * kMs : -1,
               static_cast<unsigned long long>(rep.packets_in),
               static_cast<unsigned long long>(rep.packets_out),
               static_cast<unsigned long long>(rep.dropped),
               static_cast<unsigned long long>(rep.queued), static_cast<long long>(lost));
  j.str("traffic", o.ports[0])
      .num("step_s", step_s)
      .num("seconds", s.seconds)
      .num("window_ms", policy ? 40 : kAdaptiveWindowMs)
      .str("decision", policy ? "profile point" : "w")
      .num("band", band)
      .raw("reconverged", rc.converged ? "true" : "false")
      .num("reconvergence_ms", rc.converged ? rc.time_s * kMs : -1)
      .count("reconvergence_windows", rc.windows)
      .num("reaction_ms", rc.reacted ? rc.reaction_s * kMs : -1)
      .num("first_arrival_ms", rc.arrived ? rc.arrival_s * kMs : -1)
      .count("windows_after_step", rc.after_step)
      .num("final_value", rc.final_value)
      .num("max_excursion", rc.max_excursion)
      .num("before_mpps", before / kMega)
      .num("after_mpps", after / kMega)
      .num("before_gbps", gbps(before / kMega, kSmall))
      .num("after_gbps", gbps(after / kMega, after_size))
      .count("packets_in", rep.packets_in + rep.packets_created)
      .count("packets_out", rep.packets_out)
      .count("dropped", rep.dropped)
      .count("queued", rep.queued)
      .raw("lost", std::to_string(lost))
      .raw("balanced", rep.balanced() ? "true" : "false");
  if (size_step) j.count("from_bytes", kSmall).count("to_bytes", kLarge);
  if (!size_step) j.num("from_pps", 0).num("to_pps", light_pps);
  return j.raw("trace", array(rows, " ")).done();
}

// The device's experiments, or why there are none.
std::string device_runs(const DeviceProfile& d, const App& app, const Files& files, size_t real,
                        const BenchContext& ctx) {
  Obj j;
  j.str("profile", d.name);
  std::string label;
  int device = 0;
  if (d.emu == nullptr) {
    offload::set_emulated_devices({});
    if (real == 0) return j.str("skipped", "no device").done();
    label = offload::discover_devices().front()->label();
  } else {
    Result<offload::EmuSpec> spec = offload::parse_emu_spec(d.emu);
    if (!spec) return j.str("error", spec.error()).done();
    offload::set_emulated_devices({spec.value()});
    label = "emulated: " + std::string(d.emu);
    device = static_cast<int>(real);
  }
  const OwnCore own_core(d.own_core);
  if (d.own_core)
    label += " (device thread on CPU " + own_core.cpus() + ", FLUSH_US " +
             std::to_string(kOwnCoreFlushUs) + ")";
  j.str("device", label)
      .raw("emulated", d.emu != nullptr ? "true" : "false")
      .raw("device_thread_own_core", d.own_core ? "true" : "false");
  // The profile PolicyBalancer runs on: the traffic flat out at the sizes before and after the
  // size step (64 and 1500 B; `fulcrum profile --sizes`), so the scheduler plans each size with
  // the rates measured at it.
  RunOptions base;
  base.pipeline_file = "adaptive_step.click";
  base.pipeline_text = text_for(d, pipeline(app.offload, files, kCpuOnly, kAggregate));
  base.ports = {traffic(app, files, kSmall), kNullTxOnly};
  ProfileSweep sweep;
  sweep.fractions = {0.25, 0.5, 1};
  sweep.aggregates = {4, 32};
  sweep.seconds = ctx.seconds * kProfileShare;
  sweep.devices = {device};
  sweep.sizes = {kSmall, kLarge};
  Result<Profile> profile = profile_pipeline(base, sweep);
  if (!profile) return j.str("error", profile.error()).done();
  Setup s{&app,   &files,
          device, ctx.dir + "/adaptive_step-" + d.name + ".profile.json",
          0,      std::max(kMinRunS, ctx.seconds * kRunShare)};
  if (Status st = write_profile(profile.value(), s.profile_file); !st)
    return j.str("error", st.error()).done();
  std::vector<std::string> points;
  const double small_class = size_classes(profile.value().points).front();
  for (const ProfilePoint& p : profile.value().points) {
    // "100 %" for the rate step (at 64 B): the best of the 64 B points.
    if (p.frame_bytes <= small_class * (1 + kSizeClassTolerance))
      s.best_pps = std::max(s.best_pps, p.throughput_pps);
    points.push_back(Obj()
                         .count("device", static_cast<uint64_t>(p.device))
                         .num("fraction", p.fraction)
                         .count("aggregate", p.aggregate)
                         .num("frame_bytes", p.frame_bytes)
                         .num("mpps", p.throughput_pps / kMega)
                         .done());
  }
  std::vector<std::string> runs;
  for (bool size_step : {true, false}) {
    if (!bench_selected("FULCRUM_BENCH_STEPS", size_step ? "size" : "rate")) continue;
    if (bench_selected("FULCRUM_BENCH_BALANCERS", "nba"))
      runs.push_back(experiment(s, d, false, size_step, ctx));
    if (bench_selected("FULCRUM_BENCH_BALANCERS", "policy"))
      for (const std::string& v : policy_variants())
        runs.push_back(experiment(s, d, true, size_step, ctx, false, v));
    if (bench_selected("FULCRUM_BENCH_BALANCERS", "nba-scan"))
      runs.push_back(experiment(s, d, false, size_step, ctx, true));
  }
  return j.num("best_profile_mpps", s.best_pps / kMega)
      .raw("profile_points", array(points, "\n      "))
      .raw("runs", array(runs, "\n      "))
      .done();
}

std::string adaptive_step(const BenchContext& ctx) {
  Files files;
  if (Status s = write_files(ctx.dir, files); !s) return Obj().str("error", s.error()).done();
  const App* app = nullptr;
  for (const App& a : offload_apps())
    if (std::string(a.name) == "ipsec-gateway") app = &a;
  if (app == nullptr || missing_class(*app) != nullptr)
    return Obj().str("skipped", "no offloadable IPsec gateway in this binary").done();
  offload::set_emulated_devices({});
  const size_t real = offload::discover_devices().size();
  std::vector<std::string> devices;
  for (const DeviceProfile& d : kDevices)
    if (bench_selected("FULCRUM_BENCH_PROFILES", d.name))
      devices.push_back(device_runs(d, *app, files, real, ctx));
  offload::set_emulated_devices({});
  return Obj()
      .str("what",
           "step changes in traffic (64 -> 1500 B; flat out -> 20 % of the profile's best) "
           "halfway through a run of the IPsec gateway, for AdaptiveBalancer (20 ms windows) and "
           "PolicyBalancer (energy policy, 40 ms windows); emulated devices are models")
      .str("reconvergence",
           "from the step to the start of the first window after which the decision (w: within "
           "1.5 STEP = 0.06; the profile point: equal) stays at its final value, the median of "
           "the last quarter of the windows after the step; reaction_ms: to the start of the first "
           "window off the decision before the step; first_arrival_ms: to the start of the first "
           "window at the final value (-1: none)")
      .raw("devices", array(devices, "\n    "))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(98, "adaptive_step", adaptive_step);

}  // namespace fulcrum::bench
