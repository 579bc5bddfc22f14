// The batch manager's dispatch rule and FlowShader's dynamic unprocessed-message threshold
// (paper 004 §III-A "Dispatching" and §III-B).
//
//   DispatchRule      a round is due when the unprocessed messages of all flows reach the
//                     threshold, or the oldest of them has waited the timeout (default 100 ms,
//                     the paper's recommendation and its setting in §VI).
//   DynamicThreshold  starts at 32 with the direction "plus"; at the end of each measuring period
//                     the throughput variation r = (T_curr - T_prev) / T_prev decides: r > r_thresh
//                     (0.5 %) moves the threshold one step (32) in the current direction;
//                     r < -r_thresh flips the direction and moves one step; otherwise it stays.
//                     The first period has no previous throughput: it moves one step "plus" (the
//                     search has to start somewhere). The threshold stays within [step, max].
//   ThroughputMeter   messages finished per period (default 1 s; the paper does not give its
//                     period, only that convergence takes 20-30 s at step 32) feeding the above.
#pragma once

#include <algorithm>
#include <cstdint>

namespace fulcrum::l7 {

inline constexpr uint64_t kNsPerMs = 1000000;
inline constexpr uint64_t kDefaultTimeoutNs = 100 * kNsPerMs;
inline constexpr uint64_t kDefaultPeriodNs = 1000 * kNsPerMs;

struct DispatchRule {
  uint32_t threshold = 32;
  uint64_t timeout_ns = kDefaultTimeoutNs;

  bool due(uint64_t unprocessed, uint64_t oldest_ns, uint64_t now_ns) const {
    if (unprocessed == 0) return false;
    return unprocessed >= threshold || now_ns >= oldest_ns + timeout_ns;
  }
  // When the oldest message's timeout fires.
  uint64_t deadline(uint64_t oldest_ns) const { return oldest_ns + timeout_ns; }
};

class DynamicThreshold {
 public:
  struct Params {
    uint32_t start = 32;
    uint32_t step = 32;
    double r_thresh = 0.005;
    uint32_t max = 1u << 16;
  };

  DynamicThreshold() : DynamicThreshold(Params{}) {}
  explicit DynamicThreshold(Params p) : p_(p), value_(std::clamp(p.start, p.step, p.max)) {}

  uint32_t value() const { return value_; }
  bool plus() const { return plus_; }
  const Params& params() const { return p_; }

  // The throughput of the period that just ended (any unit, > 0).
  void update(double throughput) {
    if (prev_ > 0) {
      const double r = (throughput - prev_) / prev_;
      if (r < -p_.r_thresh) {
        plus_ = !plus_;
        move();
      } else if (r > p_.r_thresh) {
        move();
      }
    } else {
      move();
    }
    prev_ = throughput;
  }

 private:
  void move() {
    const int64_t next = static_cast<int64_t>(value_) + (plus_ ? 1 : -1) * int64_t{p_.step};
    value_ = static_cast<uint32_t>(std::clamp<int64_t>(next, p_.step, p_.max));
  }

  Params p_;
  uint32_t value_;
  bool plus_ = true;
  double prev_ = 0;
};

class ThroughputMeter {
 public:
  explicit ThroughputMeter(uint64_t period_ns = kDefaultPeriodNs) : period_ns_(period_ns) {}

  // Counts `messages` finished at `now_ns`; returns the messages per second of a period that
  // ended, or a negative number while the period runs.
  double add(uint64_t now_ns, uint64_t messages) {
    if (start_ns_ == 0) start_ns_ = now_ns;
    count_ += messages;
    if (now_ns < start_ns_ + period_ns_) return -1;
    const double rate = static_cast<double>(count_) * 1e9 / static_cast<double>(now_ns - start_ns_);
    start_ns_ = now_ns;
    count_ = 0;
    return rate;
  }

 private:
  uint64_t period_ns_;
  uint64_t start_ns_ = 0;
  uint64_t count_ = 0;
};

}  // namespace fulcrum::l7
