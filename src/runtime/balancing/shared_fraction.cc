#include "runtime/balancing/shared_fraction.hh"

#include <cmath>

namespace fulcrum {
namespace {

uint64_t threshold_of(double w) {
  return w >= 1 ? uint64_t{1} << 32 : static_cast<uint64_t>(w * SharedFraction::kScale);
}

}  // namespace

SharedFraction::SharedFraction(const HillClimbConfig& config, uint64_t window_ns)
    : window_ns_(window_ns), climber_(config) {
  threshold_.store(threshold_of(climber_.fraction()), std::memory_order_relaxed);
}

void SharedFraction::update(uint64_t now_ns) const {
  std::unique_lock lock(mu_, std::try_to_lock);
  if (!lock.owns_lock() || now_ns < next_ns_.load(std::memory_order_relaxed)) return;
  uint64_t packets = 0;
  for (const Slot& s : slots_) packets += s.packets.load(std::memory_order_relaxed);
  if (last_ns_ != 0 && now_ns > last_ns_) {
    last_rate_ =
        static_cast<double>(packets - last_packets_) * 1e9 / static_cast<double>(now_ns - last_ns_);
    ++windows_;
    const double w = climber_.observe(last_rate_);
    threshold_.store(threshold_of(w), std::memory_order_relaxed);
    if (tracing_) trace_.push_back({static_cast<double>(now_ns - first_ns_) / 1e9, w, last_rate_});
  } else {
    first_ns_ = now_ns;
  }
  last_ns_ = now_ns;
  last_packets_ = packets;
  next_ns_.store(now_ns + window_ns_, std::memory_order_relaxed);
}

SharedFraction::Snapshot SharedFraction::snapshot() const {
  std::lock_guard lock(mu_);
  return {climber_.fraction(),  last_rate_,          windows_,       climber_.moves(),
          climber_.reversals(), climber_.reprobes(), climber_.wait()};
}

}  // namespace fulcrum
