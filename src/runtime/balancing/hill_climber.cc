#include "runtime/balancing/hill_climber.hh"

#include <algorithm>
#include <cmath>
#include <span>

#include "core/median.hh"

namespace fulcrum {
namespace {

constexpr double kNoiseWeight = 0.25;  // of each new spread in the moving estimate

}  // namespace

HillClimber::HillClimber(const HillClimbConfig& config)
    : c_(config),
      w_(std::clamp(config.initial, 0.0, 1.0)),
      wait_(std::max<uint32_t>(1, config.wait_min)),
      settle_left_(config.settle) {
  c_.wait_min = wait_;
  c_.probe = std::max<uint32_t>(1, c_.probe);
  c_.wait_max = std::max(c_.wait_max, c_.wait_min);
  c_.scan_windows = std::clamp<uint32_t>(c_.scan_windows, 1, kMaxScanWindows);
  c_.change_windows = std::max<uint32_t>(1, c_.change_windows);
  if (c_.scan_points > 0) start_scan();
}

double HillClimber::observe(double throughput) {
  if (settle_left_ > 0) {
    --settle_left_;
    return fraction();
  }
  // With the scan on, a workload change is also seen window by window: change_windows windows in
  // a row at the incumbent's w, each off its level by more than `change`, scan again at once
  // (NBA's check below waits for two whole observations, up to 2 x wait_max windows).
  if (c_.scan_points > 0 && !scanning_ && !probing_ && level_ > 0) {
    off_windows_ = std::fabs(throughput - level_) > c_.change * level_ ? off_windows_ + 1 : 0;
    if (off_windows_ >= c_.change_windows) {
      ++reprobes_;
      return start_scan();
    }
  }
  if (scanning_) scan_samples_[n_] = throughput;
  sum_ += throughput;
  sum_sq_ += throughput * throughput;
  if (++n_ < (scanning_ ? c_.scan_windows : probing_ ? c_.probe : wait_)) return fraction();
  const uint32_t n = n_;
  const double avg = sum_ / n;
  // The windows' relative spread, from every observation of one w over two windows or more,
  // except (with the scan) those off the incumbent's level: a dip of the whole host.
  const bool off_level_obs = c_.scan_points > 0 && level_ > 0 && !scanning_ &&
                             std::fabs(avg - level_) > c_.change * level_;
  if (n >= 2 && avg > 0 && !off_level_obs) {
    const double var = std::max(0.0, (sum_sq_ - n * avg * avg) / (n - 1)) / (avg * avg);
    rel_var_ = rel_var_ > 0 ? rel_var_ + kNoiseWeight * (var - rel_var_) : var;
  }
  sum_ = 0;
  sum_sq_ = 0;
  n_ = 0;
  if (scanning_) {
    return scan_step(median_in_place(std::span(scan_samples_.data(), static_cast<size_t>(n))));
  }
  if (probing_) return end_probe(avg);
  // A workload change: the incumbent's throughput leaves the level it held (a moving average of
  // its observations) by more than `change`, twice in a row (once is a jitter of this machine).
  const bool off_level = level_ > 0 && std::fabs(avg - level_) > c_.change * level_;
  changed_streak_ = off_level ? changed_streak_ + 1 : 0;
  if (changed_streak_ >= kChangedObservations) {
    if (wait_ > c_.wait_min || c_.scan_points > 0) ++reprobes_;
    if (c_.scan_points > 0) return start_scan();
    wait_ = c_.wait_min;
    changed_streak_ = 0;
    level_ = avg;
  } else {
    level_ = level_ > 0 ? level_ + kLevelWeight * (avg - level_) : avg;
  }
  incumbent_avg_ = avg;
  incumbent_n_ = n;
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
  // With a margin, the probe must beat the incumbent by z standard errors of the difference of
  // the two means (probe windows against the incumbent's), from the windows' spread so far.
  const double margin =
      c_.margin > 0
          ? c_.margin * incumbent_avg_ * std::sqrt(rel_var_ * (1.0 / c_.probe + 1.0 / incumbent_n_))
          : 0;
  if (avg > incumbent_avg_ + margin) {
    // Better: the probe is the incumbent, measured already; climb on in the same direction.
    w_ = probe_w_;
    ++moves_;
    failed_sides_ = 0;
    wait_ = c_.wait_min;
    incumbent_avg_ = avg;
    incumbent_n_ = c_.probe;
    // The window-by-window change check compares with the new w's level, not the old one's.
    if (c_.scan_points > 0) level_ = avg;
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

double HillClimber::start_scan() {
  scanning_ = true;
  probing_ = false;
  off_windows_ = 0;
  sum_ = 0;
  sum_sq_ = 0;
  n_ = 0;
  scan_index_ = 0;
  scan_best_avg_ = -1;
  ++scans_;
  settle_left_ = c_.settle;
  return scan_w();
}

double HillClimber::scan_step(double avg) {
  if (avg > scan_best_avg_) {
    scan_best_avg_ = avg;
    scan_best_w_ = scan_w();
  }
  if (scan_index_ < c_.scan_points) {
    ++scan_index_;
    settle_left_ = c_.settle;
    return scan_w();
  }
  // The climb starts at the best scanned w, observed afresh (the scan's figure for it was one of
  // n + 1 draws, the luckiest): a new level, the shortest wait, probes inward from a bound.
  scanning_ = false;
  w_ = scan_best_w_;
  level_ = 0;
  changed_streak_ = 0;
  failed_sides_ = 0;
  wait_ = c_.wait_min;
  dir_ = w_ >= 1 ? -1 : 1;
  settle_left_ = c_.settle;
  return w_;
}

}  // namespace fulcrum
