#include "runtime/balancing/hill_climber.hh"

#include <algorithm>
#include <cmath>

namespace fulcrum {

HillClimber::HillClimber(const HillClimbConfig& config)
    : c_(config),
      w_(std::clamp(config.initial, 0.0, 1.0)),
      wait_(std::max<uint32_t>(1, config.wait_min)),
      settle_left_(config.settle) {
  c_.wait_min = wait_;
  c_.wait_max = std::max(c_.wait_max, c_.wait_min);
  if (w_ >= 1) dir_ = -1;
}

double HillClimber::observe(double throughput) {
  if (settle_left_ > 0) {
    --settle_left_;
    return w_;
  }
  sum_ += throughput;
  if (++n_ < wait_) return w_;
  const double avg = sum_ / n_;
  sum_ = 0;
  n_ = 0;
  if (have_prev_) {
    const bool fell = avg < prev_avg_;
    const bool changed = prev_avg_ > 0 && std::fabs(avg - prev_avg_) > c_.change * prev_avg_;
    if (fell) {
      dir_ = -dir_;
      ++reversals_;
    }
    if (changed) {
      if (wait_ > c_.wait_min) ++reprobes_;
      wait_ = c_.wait_min;
    } else if (fell) {
      wait_ = std::min(wait_ * 2, c_.wait_max);
    }
  }
  prev_avg_ = avg;
  have_prev_ = true;
  move();
  return w_;
}

void HillClimber::move() {
  // At a bound the probe goes inward: the climb must be able to leave it when the optimum moves.
  if ((dir_ > 0 && w_ >= 1) || (dir_ < 0 && w_ <= 0)) dir_ = -dir_;
  w_ = std::clamp(w_ + dir_ * c_.step, 0.0, 1.0);
  ++moves_;
  settle_left_ = c_.settle;
}

}  // namespace fulcrum
