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
  c_.probe = std::max<uint32_t>(1, c_.probe);
  c_.wait_max = std::max(c_.wait_max, c_.wait_min);
}

double HillClimber::observe(double throughput) {
  if (settle_left_ > 0) {
    --settle_left_;
    return fraction();
  }
  sum_ += throughput;
  if (++n_ < (probing_ ? c_.probe : wait_)) return fraction();
  const double avg = sum_ / n_;
  sum_ = 0;
  n_ = 0;
  if (probing_) return end_probe(avg);
  // A workload change: the incumbent's throughput leaves the level it held (a moving average of
  // its observations) by more than `change`, twice in a row (once is a jitter of this machine).
  const bool off_level = level_ > 0 && std::fabs(avg - level_) > c_.change * level_;
  changed_streak_ = off_level ? changed_streak_ + 1 : 0;
  if (changed_streak_ >= kChangedObservations) {
    if (wait_ > c_.wait_min) ++reprobes_;
    wait_ = c_.wait_min;
    changed_streak_ = 0;
    level_ = avg;
  } else {
    level_ = level_ > 0 ? level_ + kLevelWeight * (avg - level_) : avg;
  }
  incumbent_avg_ = avg;
  return start_probe();
}

double HillClimber::start_probe() {
  // At a bound the only probe goes inward.
  if ((dir_ > 0 && w_ >= 1) || (dir_ < 0 && w_ <= 0)) dir_ = -dir_;
  probe_w_ = std::clamp(w_ + dir_ * c_.step, 0.0, 1.0);
  probing_ = true;
  settle_left_ = c_.settle;
  return probe_w_;
}

double HillClimber::end_probe(double avg) {
  probing_ = false;
  if (avg > incumbent_avg_) {
    // Better: the probe is the incumbent, measured already; climb on in the same direction.
    w_ = probe_w_;
    ++moves_;
    failed_sides_ = 0;
    wait_ = c_.wait_min;
    incumbent_avg_ = avg;
    return start_probe();
  }
  dir_ = -dir_;
  ++reversals_;
  const bool at_bound = w_ <= 0 || w_ >= 1;
  if (++failed_sides_ >= 2 || at_bound) {
    failed_sides_ = 0;
    wait_ = std::min(wait_ * 2, c_.wait_max);
  }
  settle_left_ = c_.settle;
  return w_;
}

}  // namespace fulcrum
