#include "elements/balance/policy_balancer.hh"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "elements/balance/device_index.hh"
#include "offload/service.hh"

namespace fulcrum {

Status PolicyBalancer::configure(Args& args) {
  std::string policy = "throughput";
  uint32_t seed = 1;
  std::string sample = "auto";
  policy_.warmup = kWarmupWindows;
  args.positional_file("PROFILE", profile_file_, "profile file written by `fulcrum profile`")
      .key("POLICY", policy, "throughput, latency or energy (paper 001 §5.2)")
      .key("LATENCY_US", policy_.latency_bound_us,
           "p99 bound: only configurations under it (0: none); with POLICY throughput, "
           "latency-bounded throughput")
      .key("WINDOW_MS", window_ms_, "observation window (the thesis' 40 ms time quantum)")
      .key("DELTA", policy_.delta, "the thesis' delta: band around the expected performance")
      .key("LAMBDA", policy_.lambda,
           "a better configuration replaces the current one when better by this factor")
      .key("ALPHA", policy_.alpha, "device batch growth when performing worse (thesis: 2)")
      .key("BETA", policy_.beta, "device batch shrink when performing better (thesis: 2)")
      .key("MAX_AGGREGATE", policy_.max_aggregate,
           "largest device batch the scheduler grows to (0: the largest in the profile; the "
           "offloadable elements' own AGGREGATE caps it too)")
      .key("HEADROOM", policy_.headroom,
           "share of a configuration's throughput it is loaded to at most")
      .key("SAMPLE", sample,
           "online latency: one packet of every SAMPLE batches is timed RX to TX (0: none; "
           "auto: each window sets the interval for about 400 samples in the next)")
      .key("LATENCY_PERSIST", policy_.latency_persist,
           "p99 estimates in a row outside the band around the profile's prediction before the "
           "point learns its latency and the scheduler re-plans")
      .key("SIZE_PERSIST", policy_.size_persist,
           "windows in a row whose mean packet length is nearest another of the profile's "
           "sizes before the scheduler plans at that size")
      .key("RELEASE_IDLE_MS", release_idle_ms_,
           "release the profile's devices after this many ms with nothing to do, 0: never "
           "(-1: 1000 with POLICY energy, else the run's --release-idle-ms)")
      .key("LEARN_PERSIST", policy_.learn_persist,
           "backlogged windows in a row short of the profile, with no device batch left to "
           "grow, before the point learns their mean rate")
      .key("SETTLED_PERSIST", policy_.settled_persist,
           "the same for a point that has carried its profile since it came into force or last "
           "learned: a dip of a few windows is the host's (0: LEARN_PERSIST)")
      .key("DRIFT", policy_.drift,
           "two points of the size in force off their profile by the same factor (within "
           "DELTA) scale the points not yet measured by it")
      .key("HOST_DRIFT", policy_.host_drift,
           "a point that carried its profile and then learns another rate is taken as the "
           "host's drift at once (needs DRIFT): a move must beat it at the same drift")
      .key("WARMUP", policy_.warmup,
           "windows at the start of the run that only watch: start-up teaches no point its rate")
      .key("SEED", seed, "seed of the per-batch draw")
      .key("TRACE", trace_file_,
           "file: every window as \"time_s rate_pps full_share fraction device aggregate "
           "config p99_us frame_bytes\", written at the end of the run");
  if (Status s = args.finish(); !s) return s;
  Result<Policy> p = parse_policy(policy);
  if (!p) return args.error(p.error());
  policy_.policy = p.value();
  sample_auto_ = sample == "auto";
  if (!sample_auto_ && !parse_value(sample, sample_every_))
    return args.error("SAMPLE must be auto or a number of batches (0: no online latency)");
  const auto positive = [](double v) { return v > 0 && std::isfinite(v); };
  if (!(policy_.latency_bound_us >= 0 && std::isfinite(policy_.latency_bound_us)))
    return args.error("LATENCY_US must be a number >= 0");
  if (!positive(window_ms_)) return args.error("WINDOW_MS must be a positive number");
  if (!(policy_.delta > 0 && policy_.delta < 1)) return args.error("DELTA must be in (0, 1)");
  if (!(policy_.lambda >= 1 && std::isfinite(policy_.lambda)))
    return args.error("LAMBDA must be a number >= 1");
  if (!(policy_.alpha > 1 && std::isfinite(policy_.alpha)) ||
      !(policy_.beta > 1 && std::isfinite(policy_.beta)))
    return args.error("ALPHA and BETA must be numbers > 1");
  constexpr uint32_t kMaxAggregate = 256;
  if (policy_.max_aggregate > kMaxAggregate) return args.error("MAX_AGGREGATE must be 0..256");
  if (!(policy_.headroom > 0 && policy_.headroom <= 1))
    return args.error("HEADROOM must be in (0, 1]");
  if (policy_.latency_persist < 1) return args.error("LATENCY_PERSIST must be at least 1");
  if (policy_.size_persist < 1) return args.error("SIZE_PERSIST must be at least 1");
  if (policy_.learn_persist < 1) return args.error("LEARN_PERSIST must be at least 1");
  if (release_idle_ms_ < -1 || release_idle_ms_ > UINT32_MAX)
    return args.error("RELEASE_IDLE_MS must be milliseconds >= 0 (or -1: the policy's default)");
  if (release_idle_ms_ == -1 && policy_.policy == Policy::kEnergy)
    release_idle_ms_ = kEnergyReleaseMs;
  set_seed(seed);
  return {};
}

Status PolicyBalancer::initialize(const InitContext& ctx) {
  const auto window_ns = static_cast<uint64_t>(window_ms_ * 1e6);
  Result<Profile> profile = read_profile(profile_file_);
  if (!profile) return make_error(profile.error());
  const std::vector<ProfilePoint>& points = profile.value().points;
  if (std::any_of(points.begin(), points.end(),
                  [](const ProfilePoint& p) { return p.fraction > 0; })) {
    Result<size_t> devices = run_devices(ctx, name());
    if (!devices) return make_error(devices.error());
    std::vector<bool> used(devices.value(), false);
    for (size_t i = 0; i < points.size(); ++i) {
      if (points[i].fraction == 0) continue;
      const std::string what = profile_file_ + ": point " + std::to_string(i) + ": device " +
                               std::to_string(points[i].device);
      if (Status s = check_device_index(points[i].device, devices.value(), what); !s) return s;
      if (points[i].device >= 0 && static_cast<size_t>(points[i].device) < used.size())
        used[static_cast<size_t>(points[i].device)] = true;
    }
    if (release_idle_ms_ >= 0 && ctx.worker <= 0) release_devices(ctx, used);
  }
  count_bytes(size_classes(points).size() > 1);
  return attach(ctx, "policy-balancer", [&]() -> Result<std::shared_ptr<Shared>> {
    auto shared = std::make_shared<Shared>(window_ns, std::move(profile.value()), policy_);
    if (sample_auto_ || sample_every_ != 0)
      shared->enable_latency(kMinLatencySamples, sample_every_,
                             sample_auto_ ? kTargetLatencySamples : 0);
    return shared;
  });
}

void PolicyBalancer::release_devices(const InitContext& ctx, const std::vector<bool>& used) const {
  Result<std::shared_ptr<const offload::OffloadService>> svc =
      offload::OffloadService::get(ctx.shared);
  if (!svc) return;
  for (size_t d = 0; d < used.size() && d < svc.value()->devices(); ++d)
    if (used[d] && !svc.value()->release_when_idle(d, static_cast<uint32_t>(release_idle_ms_)) &&
        ctx.notes != nullptr)
      ctx.notes->push_back(name() + ": device " + std::to_string(d) +
                           " is driven from several NUMA nodes: it is never released");
}

void PolicyBalancer::counters(std::vector<Counter>& out) const {
  counters_with(out, [&](const PolicyScheduler& s, const BalanceWindow& last, uint64_t windows) {
    constexpr double kPerMille = 1000;
    out.push_back({"config", s.current_index()});
    out.push_back({"fraction_permille",
                   static_cast<uint64_t>(std::lround(s.current().fraction * kPerMille))});
    out.push_back({"aggregate", s.aggregate()});
    out.push_back({"rate_pps", static_cast<uint64_t>(last.rate_pps)});
    out.push_back({"windows", windows});
    out.push_back({"switches", s.switches()});
    out.push_back({"grows", s.grows()});
    out.push_back({"shrinks", s.shrinks()});
    out.push_back({"learned", s.learned()});
    out.push_back({"drifts", s.drifts()});
    constexpr double kNsPerUs = 1000;
    out.push_back({"p99_ns", static_cast<uint64_t>(std::lround(s.measured_p99_us() * kNsPerUs))});
    out.push_back(
        {"predicted_p99_ns", static_cast<uint64_t>(std::lround(s.predicted_p99_us() * kNsPerUs))});
    out.push_back({"latency_replans", s.latency_replans()});
    out.push_back({"latency_samples", last.latency_samples});
    out.push_back({"frame_bytes", static_cast<uint64_t>(std::lround(last.frame_bytes))});
    out.push_back({"size_class_bytes", static_cast<uint64_t>(std::lround(s.size_class_bytes()))});
    out.push_back({"size_switches", s.size_switches()});
  });
}

}  // namespace fulcrum
