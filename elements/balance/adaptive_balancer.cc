#include "elements/balance/adaptive_balancer.hh"

#include <cmath>
#include <string>

#include "elements/balance/device_index.hh"

namespace fulcrum {

Status AdaptiveBalancer::configure(Args& args) {
  uint32_t device = 0, seed = 1;
  args.key("DEVICE", device, "device index for offloaded batches")
      .key("STEP", climb_.step, "NBA's delta: how far w moves each time")
      .key("WINDOW_MS", window_ms_, "observation window (NBA: 0.2 s)")
      .key("SETTLE", climb_.settle, "windows skipped after each change of w")
      .key("WAIT_MIN", climb_.wait_min,
           "windows averaged per observation of the current w while climbing")
      .key("WAIT_MAX", climb_.wait_max,
           "the wait doubles at a peak up to this many windows (NBA: 2 to 32)")
      .key("PROBE", climb_.probe, "windows a probe at w +/- STEP is observed")
      .key("CHANGE", climb_.change,
           "throughput off its level by this share twice in a row (a workload change) re-probes")
      .key("INITIAL", climb_.initial, "w at the start")
      .key("SCAN", climb_.scan_points,
           "beyond NBA: observe w = 0, 1/n, ..., 1 first and after a workload change, climb from "
           "the best (0: off)")
      .key("SCAN_WINDOWS", climb_.scan_windows,
           "windows each scanned w is observed (their median counts), 1..16")
      .key("CHANGE_WINDOWS", climb_.change_windows,
           "with SCAN: windows in a row off the level by CHANGE that are a workload change")
      .key("MARGIN", climb_.margin,
           "beyond NBA: standard errors a probe must win by (0: any gain, NBA)")
      .key("SEED", seed, "seed of the per-batch draw")
      .key("TRACE", trace_file_,
           "file: every window as \"time_s fraction rate_pps\", written at the end of the run");
  if (Status s = args.finish(); !s) return s;
  constexpr uint32_t kMaxDevice = 63;
  if (device > kMaxDevice) return args.error("DEVICE must be 0..63");
  if (!(climb_.step > 0 && climb_.step <= 1)) return args.error("STEP must be in (0, 1]");
  if (!(window_ms_ > 0 && std::isfinite(window_ms_)))
    return args.error("WINDOW_MS must be a positive number");
  if (climb_.wait_min < 1 || climb_.wait_max < climb_.wait_min || climb_.probe < 1)
    return args.error("WAIT_MIN and PROBE must be at least 1 and WAIT_MAX at least WAIT_MIN");
  if (!(climb_.change > 0 && std::isfinite(climb_.change)))
    return args.error("CHANGE must be a positive number");
  constexpr uint32_t kMaxScan = 100;
  if (climb_.scan_points > kMaxScan) return args.error("SCAN must be 0..100");
  constexpr uint32_t kMaxScanWindows = 16;
  if (climb_.scan_windows < 1 || climb_.scan_windows > kMaxScanWindows)
    return args.error("SCAN_WINDOWS must be 1..16");
  if (climb_.change_windows < 1) return args.error("CHANGE_WINDOWS must be at least 1");
  if (!(climb_.margin >= 0 && std::isfinite(climb_.margin)))
    return args.error("MARGIN must be a number >= 0");
  if (!(climb_.initial >= 0 && climb_.initial <= 1))
    return args.error("INITIAL must be between 0 and 1");
  device_ = static_cast<int32_t>(device);
  set_seed(seed);
  return {};
}

Status AdaptiveBalancer::initialize(const InitContext& ctx) {
  Result<size_t> devices = run_devices(ctx, name());
  if (!devices) return make_error(devices.error());
  if (Status s = check_device_index(device_, devices.value(), "DEVICE " + std::to_string(device_));
      !s)
    return s;
  const auto window_ns = static_cast<uint64_t>(window_ms_ * 1e6);
  return attach(ctx, "adaptive-balancer", [&]() -> Result<std::shared_ptr<Shared>> {
    return std::make_shared<Shared>(window_ns, climb_);
  });
}

void AdaptiveBalancer::counters(std::vector<Counter>& out) const {
  counters_with(out, [&](const HillClimber& c, const BalanceWindow& last, uint64_t windows) {
    constexpr double kPerMille = 1000;
    out.push_back(
        {"fraction_permille", static_cast<uint64_t>(std::lround(c.fraction() * kPerMille))});
    out.push_back({"rate_pps", static_cast<uint64_t>(last.rate_pps)});
    out.push_back({"windows", windows});
    out.push_back({"moves", c.moves()});
    out.push_back({"reversals", c.reversals()});
    out.push_back({"reprobes", c.reprobes()});
    out.push_back({"scans", c.scans()});
    out.push_back({"noise_permille", static_cast<uint64_t>(std::lround(c.noise() * kPerMille))});
  });
}

}  // namespace fulcrum
