#include "elements/balance/adaptive_balancer.hh"

#include <chrono>
#include <cmath>

#include "core/registry.hh"
#include "core/shared_storage.hh"

namespace fulcrum {

Status AdaptiveBalancer::configure(Args& args) {
  uint32_t device = 0, seed = 1;
  args.key("DEVICE", device)
      .key("STEP", climb_.step)
      .key("WINDOW_MS", window_ms_)
      .key("SETTLE", climb_.settle)
      .key("WAIT_MIN", climb_.wait_min)
      .key("WAIT_MAX", climb_.wait_max)
      .key("CHANGE", climb_.change)
      .key("INITIAL", climb_.initial)
      .key("SEED", seed);
  if (Status s = args.finish(); !s) return s;
  constexpr uint32_t kMaxDevice = 63;
  if (device > kMaxDevice) return args.error("DEVICE must be 0..63");
  if (!(climb_.step > 0 && climb_.step <= 1)) return args.error("STEP must be in (0, 1]");
  if (!(window_ms_ > 0 && std::isfinite(window_ms_)))
    return args.error("WINDOW_MS must be a positive number");
  if (climb_.wait_min < 1 || climb_.wait_max < climb_.wait_min)
    return args.error("WAIT_MIN must be at least 1 and WAIT_MAX at least WAIT_MIN");
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
  Result<std::shared_ptr<const SharedFraction>> shared = shared_or_own<SharedFraction>(
      ctx.shared, "adaptive-balancer:" + name(), [&]() -> Result<std::shared_ptr<SharedFraction>> {
        return std::make_shared<SharedFraction>(climb_, window_ns);
      });
  if (!shared) return make_error(shared.error());
  shared_ = shared.value();
  slot_ = shared_->attach();
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
  const SharedFraction::Snapshot s = shared_->snapshot();
  constexpr double kPerMille = 1000;
  out.push_back({"fraction_permille", static_cast<uint64_t>(std::lround(s.fraction * kPerMille))});
  out.push_back({"rate_pps", static_cast<uint64_t>(s.last_rate)});
  out.push_back({"windows", s.windows});
  out.push_back({"moves", s.moves});
  out.push_back({"reversals", s.reversals});
  out.push_back({"reprobes", s.reprobes});
}

FULCRUM_REGISTER_ELEMENT(AdaptiveBalancer);

}  // namespace fulcrum
