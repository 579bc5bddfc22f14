// The adaptive balancer against the best static split (issue 17; NBA §3.4, Fig. 13): for each
// offloadable application and device profile, in the same run,
//   * the static sweep: FixedFraction(w) at w = 0, 0.1, ..., 1, three passes (up, down, up),
//     each point the median of its three: the best of eleven single noisy points is biased high
//     (the luckiest of eleven), most where the curve is flat; the best single point is reported
//     beside it;
//   * AdaptiveBalancer (NBA's hill climbing, 20 ms windows), its steady state, the w it settles
//     at, the static curve's value there, and its trace (every window's time, w and Mpps, in the
//     JSON, for tools/plot_adaptive.py); then the same with SCAN 4, MARGIN 1 (beyond NBA: a
//     coarse scan first, probes that must win by a standard error);
//   * PolicyBalancer (the thesis' scheduler, throughput policy) on a profile of the same
//     pipeline made in the run (CPU; w = 0.25, 0.5, 1), its steady state and mean w.
// Each balancer runs once per pass, right after that pass of the sweep (profile, then: sweep up,
// balancers; sweep down, balancers; sweep up, balancers): its figure is the median of its three
// runs (the trace shown is the median run's), and beside it the paired ratio, each run over the
// best static point of its own pass, the median of the three (`*_vs_pass_best`): on a machine
// whose speed drifts over minutes, a balancer run is compared with the sweep it ran next to.
// Throughput is transmitted packets per second over the second half of each run (the first half
// is the climb, and start-up for the static points alike). Devices: the first one the backends
// find (PoCL's OpenCL CPU device on machines without a GPU, where it shares the two cores with the
// worker) and two emulated profiles (offload/emu/), one GPU-like fast and one slow: emulated
// figures are a model's, labelled so, never a GPU's.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "bench/offload_apps.hh"
#include "core/median.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_spec.hh"
#include "runtime/balancing/profile.hh"
#include "runtime/balancing/profiler.hh"
#include "runtime/runtime.hh"
#include "runtime/steady_rate.hh"

namespace fulcrum::bench {
namespace {

constexpr int kFractionSteps = 10;
constexpr uint32_t kAggregate = 32;
constexpr double kWindowMs = 20;
constexpr int kStaticPasses = 3;
constexpr double kPointShare = 0.5;    // of --seconds, per static point and pass
constexpr double kAdaptiveShare = 4;   // of --seconds, the adaptive run
constexpr double kMinAdaptiveS = 3;    // at least 150 windows
constexpr double kSteadyFrom = 0.5;    // the steady state is the second half of a run
constexpr double kProfileShare = 0.4;  // of --seconds, per profile point (PolicyBalancer's)
constexpr double kMega = 1e6;

struct Profile {
  const char* name;
  const char* emu;  // the emulated device's model; nullptr: the first real device
  // The device thread pinned to a CPU the worker does not use (own_core_env), and tasks that
  // fill (kOwnCoreFlush): the emulated device computes on a core of its own.
  bool own_core = false;
};

const Profile kProfiles[] = {
    {"first-device", nullptr},
    {"emu-fast", "h2d_gbps=12,d2h_gbps=12,launch_us=5,kernel_mpps=150,lat_us=20"},
    {"emu-slow", "h2d_gbps=3,d2h_gbps=3,launch_us=50,kernel_mpps=3,lat_us=100"},
    {"emu-fast-own-core", "h2d_gbps=12,d2h_gbps=12,launch_us=5,kernel_mpps=150,lat_us=20", true},
    {"emu-native-own-core",
     "h2d_gbps=12,d2h_gbps=12,launch_us=5,kernel_mpps=150,lat_us=20,native=1", true},
};

struct Rate {
  double mpps = 0;  // transmitted, steady state
  bool balanced = false;
};

Rate steady_rate(const std::string& pipe, const std::vector<std::string>& ports, double seconds) {
  RunOptions o;
  o.pipeline_file = "adaptive.click";
  o.pipeline_text = pipe;
  o.ports = ports;
  o.seconds = seconds;
  SteadyRate steady(kSteadyFrom);
  steady.attach(o);
  Result<RunReport> r = run(o);
  if (!r) {
    std::fprintf(stderr, "bench: %s\n", r.error().c_str());
    return {};
  }
  return {steady.pps(r.value().mpps_out() * kMega) / kMega, r.value().balanced()};
}

struct TraceSummary {
  double mean_w_steady = 0;
  size_t windows = 0;
  std::string json;     // [[time_s, w, Mpps, ...], ...] for tools/plot_adaptive.py
  size_t switches = 0;  // PolicyBalancer: changes of the profile point in force
};

// The mean offloaded share over a trace's second half (from kSteadyFrom of its last window's
// time), and the trace's window count.
void summarise_w(const std::vector<std::pair<double, double>>& tw, TraceSummary& s) {
  s.windows = tw.size();
  if (tw.empty()) return;
  double sum = 0;
  size_t n = 0;
  for (const auto& [time, w] : tw)
    if (time >= tw.back().first * kSteadyFrom) sum += w, ++n;
  s.mean_w_steady = n > 0 ? sum / static_cast<double>(n) : 0;
}

TraceSummary read_trace(const std::string& path) {
  std::ifstream in(path);
  std::string header;
  std::getline(in, header);
  std::vector<std::pair<double, double>> tw;
  std::vector<std::string> rows;
  double t = 0, w = 0, rate = 0;
  while (in >> t >> w >> rate) {
    tw.emplace_back(t, w);
    rows.push_back("[" + fmt(t) + ", " + fmt(w) + ", " + fmt(rate / kMega) + "]");
  }
  TraceSummary s;
  s.json = array(rows, " ");
  summarise_w(tw, s);
  return s;
}

// A PolicyBalancer trace ("time_s rate_pps full_share fraction device aggregate config ..."): the
// mean offloaded share over its second half, its windows, every window as [time_s, w, Mpps,
// aggregate, config, full_share] (JSON) and how often the profile point in force changed.
TraceSummary read_policy_trace(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  std::vector<std::pair<double, double>> tw;
  std::vector<std::string> rows;
  TraceSummary s;
  int last_config = -1;
  while (std::getline(in, line)) {
    std::istringstream f(line);
    double t = 0, rate = 0, full = 0, w = 0;
    int device = 0, config = 0;
    unsigned aggregate = 0;
    if (!(f >> t >> rate >> full >> w >> device >> aggregate >> config)) continue;
    tw.emplace_back(t, w);
    rows.push_back("[" + fmt(t) + ", " + fmt(w) + ", " + fmt(rate / kMega) + ", " +
                   std::to_string(aggregate) + ", " + std::to_string(config) + ", " + fmt(full) +
                   "]");
    if (last_config >= 0 && config != last_config) ++s.switches;
    last_config = config;
  }
  s.json = array(rows, " ");
  summarise_w(tw, s);
  return s;
}

std::string counts_json(const std::vector<size_t>& counts) {
  std::vector<std::string> each;
  for (size_t c : counts) each.push_back(std::to_string(c));
  return array(each, " ");
}

// The static curve (same run) at `w`, over its best.
double curve_at(const std::vector<double>& static_mpps, double w, double best) {
  const double at = w * kFractionSteps;
  const size_t lo = std::min<size_t>(static_cast<size_t>(at), kFractionSteps - 1);
  const double v =
      static_mpps[lo] + (static_mpps[lo + 1] - static_mpps[lo]) * (at - static_cast<double>(lo));
  return best > 0 ? v / best : 0;
}

struct Point {
  std::string json;
  double ratio = 0;         // adaptive over the best static point
  double policy_ratio = 0;  // PolicyBalancer over the best static point
  double scan_ratio = 0;    // AdaptiveBalancer(SCAN 4, MARGIN 1) over the best static point
  // The same, each run over the best static point of its own pass, the median of the passes.
  double paired = 0, scan_paired = 0, policy_paired = 0;
};

// One balancer's runs, one per pass: each next to that pass of the static sweep, so that the
// machine's drift over minutes hits both sides of the comparison alike.
struct BalancerRuns {
  std::vector<double> mpps;
  std::vector<double> pass_ratio;  // its rate over the best static point of the same pass
  std::vector<double> w;           // mean offloaded share over the run's second half
  std::vector<size_t> windows;     // observation windows, per run
  std::vector<std::string> trace;  // the balancer's trace (JSON), per run
  std::vector<size_t> switches;    // PolicyBalancer's point changes, per run (0 for the others)
  bool balanced = true;

  void add(const Rate& r, double pass_best, TraceSummary t) {
    mpps.push_back(r.mpps);
    pass_ratio.push_back(pass_best > 0 ? r.mpps / pass_best : 0);
    w.push_back(t.mean_w_steady);
    windows.push_back(t.windows);
    trace.push_back(std::move(t.json));
    switches.push_back(t.switches);
    balanced &= r.balanced;
  }
  // The run whose rate is the median (the upper one, as core/median.hh).
  size_t median_run() const {
    std::vector<size_t> order(mpps.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return mpps[a] < mpps[b]; });
    return order.empty() ? 0 : order[order.size() / 2];
  }
  double median_mpps() const { return mpps.empty() ? 0 : mpps[median_run()]; }
  double median_w() const { return w.empty() ? 0 : w[median_run()]; }
  size_t median_windows() const { return windows.empty() ? 0 : windows[median_run()]; }
  const std::string& median_trace() const { return trace[median_run()]; }
  // Each run against its own pass's best static point, the median over the passes.
  double paired_ratio() const { return median(pass_ratio); }
  std::string mpps_json() const {
    std::vector<std::string> each;
    for (double m : mpps) each.push_back(fmt(m));
    return array(each, " ");
  }
};

Point point(const App& app, const Files& f, uint32_t size, const Profile& p, int device,
            const BenchContext& ctx) {
  const std::vector<std::string> ports = {traffic(app, f, size), kNullTxOnly};
  const auto pipeline = [&](const char* tmpl, const Files& files, const std::string& balancer,
                            uint32_t aggregate) {
    return p.own_core ? own_core_pipeline(bench::pipeline(tmpl, files, balancer, aggregate))
                      : bench::pipeline(tmpl, files, balancer, aggregate);
  };
  const std::string dev = ", DEVICE " + std::to_string(device);
  const std::string stem =
      ctx.dir + "/adaptive-" + p.name + "-" + app.name + "-" + std::to_string(size);
  const double point_s = ctx.seconds * kPointShare;
  const double adaptive_s = std::max(kMinAdaptiveS, ctx.seconds * kAdaptiveShare);

  // PolicyBalancer (throughput policy) on a profile of the same pipeline made first: the CPU
  // alone and w = 0.25, 0.5, 1 on this device, flat out, AGGREGATE 32.
  RunOptions base;
  base.pipeline_file = "adaptive.click";
  base.pipeline_text = pipeline(app.offload, f, kCpuOnly, kAggregate);
  base.ports = ports;
  ProfileSweep sweep;
  sweep.fractions = {0.25, 0.5, 1};
  sweep.aggregates = {kAggregate};
  sweep.rates.clear();
  sweep.seconds = ctx.seconds * kProfileShare;
  sweep.devices = {device};
  Result<fulcrum::Profile> profile = profile_pipeline(base, sweep);
  const std::string profile_file = stem + ".profile.json";
  const bool have_profile = profile && write_profile(profile.value(), profile_file);
  if (!have_profile)
    std::fprintf(stderr, "bench: adaptive %s %s: profile: %s\n", p.name, app.name,
                 profile ? "cannot write it" : profile.error().c_str());

  std::vector<std::vector<double>> passes(kFractionSteps + 1);
  bool balanced = true;
  double best_single = 0;
  BalancerRuns nba, scan, policy;
  for (int pass = 0; pass < kStaticPasses; ++pass) {
    double pass_best = 0;
    for (int i = 0; i <= kFractionSteps; ++i) {
      const int step = pass % 2 == 0 ? i : kFractionSteps - i;
      const double w = static_cast<double>(step) / kFractionSteps;
      const Rate r =
          steady_rate(pipeline(app.offload, f, "FixedFraction(" + fmt(w) + dev + ")", kAggregate),
                      ports, point_s);
      balanced &= r.balanced;
      best_single = std::max(best_single, r.mpps);
      pass_best = std::max(pass_best, r.mpps);
      passes[step].push_back(r.mpps);
    }
    const std::string n = std::to_string(pass);
    // AdaptiveBalancer with `args` after its window and device, traced into stem + `suffix`.
    const auto climb = [&](const std::string& args, const std::string& suffix, BalancerRuns& out) {
      const std::string trace = stem + suffix + n;
      const Rate r = steady_rate(pipeline(app.offload, f,
                                          "AdaptiveBalancer(WINDOW_MS " + fmt(kWindowMs) + dev +
                                              args + ", TRACE \"" + trace + "\")",
                                          kAggregate),
                                 ports, adaptive_s);
      out.add(r, pass_best, read_trace(trace));
    };
    climb("", ".trace", nba);
    // Beyond NBA: the same climb after a coarse scan, probes winning by a margin (SCAN, MARGIN).
    climb(", SCAN 4, MARGIN 1", ".scan.trace", scan);
    if (have_profile) {
      const std::string ptrace = stem + ".policy.trace" + n;
      const Rate r = steady_rate(pipeline(app.offload, f,
                                          "PolicyBalancer(\"" + profile_file +
                                              "\", POLICY throughput, TRACE \"" + ptrace + "\")",
                                          kAggregate),
                                 ports, adaptive_s);
      policy.add(r, pass_best, read_policy_trace(ptrace));
    }
  }
  balanced &= nba.balanced && scan.balanced && policy.balanced;
  const std::string profile_json = have_profile ? read_text(profile_file) : "";
  std::vector<std::string> rows;
  std::vector<double> static_mpps;
  double best = 0, best_w = 0;
  for (int step = 0; step <= kFractionSteps; ++step) {
    const double w = static_cast<double>(step) / kFractionSteps;
    const double mid = median(passes[step]);
    std::vector<std::string> each;
    for (double m : passes[step]) each.push_back(fmt(m));
    if (mid > best) best = mid, best_w = w;
    rows.push_back(Obj()
                       .num("offload_fraction", w)
                       .num("mpps", mid)
                       .raw("passes_mpps", array(each, " "))
                       .done());
    static_mpps.push_back(mid);
  }
  const auto over_best = [&](const BalancerRuns& b) {
    return best > 0 ? b.median_mpps() / best : 0;
  };
  // The static curve (same run) at the w a balancer settled at, over its best: where the
  // balancer operates, judged without the noise of comparing separate runs' rates.
  const auto curve = [&](const BalancerRuns& b) {
    return curve_at(static_mpps, b.median_w(), best);
  };
  const double ratio = over_best(nba), scan_ratio = over_best(scan),
               policy_ratio = over_best(policy);
  std::fprintf(stderr,
               "bench: adaptive %s %s %u B: best static %.3f Mpps at w=%.1f, adaptive %.3f Mpps "
               "(%.1f %%; paired by pass %.1f %%) settling at w~%.2f (static curve there: %.1f "
               "%% of best); with SCAN 4, MARGIN 1 %.3f Mpps (%.1f %%; paired %.1f %%) at w~%.2f "
               "(curve there: %.1f %%); policy %.3f Mpps (%.1f %%; paired %.1f %%) at w~%.2f "
               "(curve there: %.1f %%; %zu point switches)\n",
               p.name, app.name, size, best, best_w, nba.median_mpps(), ratio * 100,
               nba.paired_ratio() * 100, nba.median_w(), curve(nba) * 100, scan.median_mpps(),
               scan_ratio * 100, scan.paired_ratio() * 100, scan.median_w(), curve(scan) * 100,
               policy.median_mpps(), policy_ratio * 100, policy.paired_ratio() * 100,
               policy.median_w(), curve(policy) * 100,
               policy.switches.empty() ? size_t{0} : policy.switches[policy.median_run()]);
  return {Obj()
              .str("app", app.name)
              .count("frame_bytes", size)
              .raw("static", array(rows, "\n          "))
              .num("best_static_mpps", best)
              .num("best_static_fraction", best_w)
              .num("best_single_static_mpps", best_single)
              .num("adaptive_mpps", nba.median_mpps())
              .raw("adaptive_passes_mpps", nba.mpps_json())
              .num("adaptive_vs_best_static", ratio)
              .num("adaptive_vs_pass_best", nba.paired_ratio())
              .num("adaptive_mean_fraction_steady", nba.median_w())
              .num("static_curve_at_adaptive_fraction_vs_best", curve(nba))
              .count("adaptive_windows", nba.median_windows())
              .num("adaptive_seconds", adaptive_s)
              .raw("trace", nba.median_trace())
              .num("scan_mpps", scan.median_mpps())
              .raw("scan_passes_mpps", scan.mpps_json())
              .num("scan_vs_best_static", scan_ratio)
              .num("scan_vs_pass_best", scan.paired_ratio())
              .num("scan_mean_fraction_steady", scan.median_w())
              .num("static_curve_at_scan_fraction_vs_best", curve(scan))
              .raw("scan_trace", scan.median_trace())
              .num("policy_mpps", policy.median_mpps())
              .raw("policy_passes_mpps", policy.mpps_json())
              .num("policy_vs_best_static", policy_ratio)
              .num("policy_vs_pass_best", policy.paired_ratio())
              .num("policy_mean_fraction_steady", policy.median_w())
              .num("static_curve_at_policy_fraction_vs_best", curve(policy))
              .count("policy_windows", policy.median_windows())
              .raw("policy_switches", counts_json(policy.switches))
              .raw("policy_trace", policy.trace.empty() ? "[]" : policy.median_trace())
              .raw("policy_profile", profile_json.empty() ? "null" : profile_json)
              .raw("balanced", balanced ? "true" : "false")
              .done(),
          ratio,
          policy_ratio,
          scan_ratio,
          nba.paired_ratio(),
          scan.paired_ratio(),
          policy.paired_ratio()};
}

std::string adaptive(const BenchContext& ctx) {
  Files files;
  if (Status s = write_files(ctx.dir, files); !s) return Obj().str("error", s.error()).done();
  offload::set_emulated_devices({});
  const size_t real = offload::discover_devices().size();
  std::vector<std::string> profiles;
  std::vector<double> ratios, scan_ratios, paired, scan_paired, policy_paired;
  for (const Profile& p : kProfiles) {
    if (!bench_selected("FULCRUM_BENCH_PROFILES", p.name)) continue;
    std::string label;
    if (p.emu == nullptr) {
      offload::set_emulated_devices({});
      if (real == 0) {
        profiles.push_back(Obj().str("profile", p.name).str("skipped", "no device").done());
        continue;
      }
      label = offload::discover_devices().front()->label();
    } else {
      Result<offload::EmuSpec> spec = offload::parse_emu_spec(p.emu);
      if (!spec) return Obj().str("error", spec.error()).done();
      offload::set_emulated_devices({spec.value()});
      label = "emulated: " + std::string(p.emu);
    }
    const OwnCore own_core(p.own_core);
    if (p.own_core)
      label += " (device thread on CPU " + own_core.cpus() + ", FLUSH_US " +
               std::to_string(kOwnCoreFlushUs) + ")";
    const int device = p.emu == nullptr ? 0 : static_cast<int>(real);
    std::vector<std::string> apps;
    for (const App& app : offload_apps()) {
      if (std::string(app.name) == "md5" || missing_class(app) != nullptr ||
          !bench_selected("FULCRUM_BENCH_APPS", app.name))
        continue;
      std::vector<uint32_t> sizes = {app.sizes.front()};
      if (app.chain) sizes.push_back(app.sizes.back());
      for (uint32_t size : sizes) {
        Point pt = point(app, files, size, p, device, ctx);
        apps.push_back(std::move(pt.json));
        ratios.push_back(pt.ratio);
        scan_ratios.push_back(pt.scan_ratio);
        paired.push_back(pt.paired);
        scan_paired.push_back(pt.scan_paired);
        policy_paired.push_back(pt.policy_paired);
      }
    }
    profiles.push_back(Obj()
                           .str("profile", p.name)
                           .str("device", label)
                           .raw("emulated", p.emu != nullptr ? "true" : "false")
                           .raw("device_thread_own_core", p.own_core ? "true" : "false")
                           .raw("apps", array(apps, "\n      "))
                           .done());
  }
  offload::set_emulated_devices({});
  const auto min_of = [](const std::vector<double>& v) {
    return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
  };
  const auto mean_of = [](const std::vector<double>& v) {
    double m = 0;
    for (double r : v) m += r / static_cast<double>(v.size());
    return m;
  };
  return Obj()
      .str("what",
           "AdaptiveBalancer (NBA's hill climbing, 20 ms windows; then with SCAN 4, MARGIN 1) and "
           "PolicyBalancer (throughput "
           "policy, on a profile made in the run) against a static sweep of the offload fraction "
           "measured in the same run, per application and device profile; Mpps transmitted over "
           "the second half of each run; emulated devices are models")
      .num("adaptive_vs_best_static_min", min_of(ratios))
      .num("adaptive_vs_best_static_mean", mean_of(ratios))
      .num("scan_vs_best_static_min", min_of(scan_ratios))
      .num("scan_vs_best_static_mean", mean_of(scan_ratios))
      .num("adaptive_vs_pass_best_min", min_of(paired))
      .num("adaptive_vs_pass_best_mean", mean_of(paired))
      .num("scan_vs_pass_best_min", min_of(scan_paired))
      .num("scan_vs_pass_best_mean", mean_of(scan_paired))
      .num("policy_vs_pass_best_min", min_of(policy_paired))
      .num("policy_vs_pass_best_mean", mean_of(policy_paired))
      .raw("profiles", array(profiles, "\n    "))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(96, "adaptive", adaptive);

}  // namespace fulcrum::bench
