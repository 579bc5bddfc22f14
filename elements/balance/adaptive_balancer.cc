#include "elements/balance/adaptive_balancer.hh"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "core/shared_storage.hh"

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
  if (!(climb_.initial >= 0 && climb_.initial <= 1))
    return args.error("INITIAL must be between 0 and 1");
  device_ = static_cast<int32_t>(device);
  state_ = seed == 0 ? 1 : seed;
  return {};
}

Status AdaptiveBalancer::initialize(const InitContext& ctx) {
  const uint64_t window_ns = static_cast<uint64_t>(window_ms_ * 1e6);
  using Shared = SharedBalancer<HillClimber>;
  Result<std::shared_ptr<const Shared>> shared = shared_or_own<Shared>(
      ctx.shared, "adaptive-balancer:" + name(), [&]() -> Result<std::shared_ptr<Shared>> {
        return std::make_shared<Shared>(window_ns, climb_);
      });
  if (!shared) return make_error(shared.error());
  shared_ = shared.value();
  slot_ = shared_->attach();
  full_batch_ = ctx.batch;
  writes_trace_ = !trace_file_.empty() && ctx.worker == 0;
  if (!trace_file_.empty()) shared_->enable_trace();
  // Each worker draws its own sequence.
  state_ += static_cast<uint64_t>(ctx.worker) * 0x9E3779B97F4A7C15ull;
  if (state_ == 0) state_ = 1;
  return {};
}

uint64_t AdaptiveBalancer::now_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

void AdaptiveBalancer::counters(std::vector<Counter>& out) const {
  out.push_back({"offloaded", offloaded_});
  out.push_back({"kept", kept_});
  if (!shared_) return;
  shared_->inspect([&](const HillClimber& c, const BalanceWindow& last, uint64_t windows) {
    constexpr double kPerMille = 1000;
    out.push_back(
        {"fraction_permille", static_cast<uint64_t>(std::lround(c.fraction() * kPerMille))});
    out.push_back({"rate_pps", static_cast<uint64_t>(last.rate_pps)});
    out.push_back({"windows", windows});
    out.push_back({"moves", c.moves()});
    out.push_back({"reversals", c.reversals()});
    out.push_back({"reprobes", c.reprobes()});
  });
}

void AdaptiveBalancer::finish() {
  if (!writes_trace_) return;
  const auto trace = shared_->trace();
  std::FILE* f = std::fopen(trace_file_.c_str(), "w");
  bool ok = f != nullptr && std::fprintf(f, "time_s fraction rate_pps\n") > 0;
  for (size_t i = 0; ok && i < trace.size(); ++i)
    ok = std::fprintf(f, "%.4f %.4f %.0f\n", trace[i].t_s, trace[i].choice.fraction,
                      trace[i].window.rate_pps) > 0;
  const int err = errno;
  if (f != nullptr && std::fclose(f) != 0) ok = false;
  if (!ok)
    trace_loss_ = OutputLoss{"balancer trace " + trace_file_, "windows", trace.size() + 1,
                             std::strerror(err != 0 ? err : errno)};
}

void AdaptiveBalancer::output_losses(std::vector<OutputLoss>& out) const {
  if (trace_loss_) out.push_back(*trace_loss_);
}

}  // namespace fulcrum
