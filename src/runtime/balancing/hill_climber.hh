// HillClimber: NBA's adaptive load-balancing algorithm (paper 000 §3.4), as a pure function of the
// throughput observed per window, so it is tested on synthetic curves without a clock.
//
// The offload fraction w in [0, 1] moves by `step` (NBA's δ = 4 %) towards higher throughput,
// found by perturbation: the current w (the incumbent) is observed for `wait` windows (NBA's
// moving average against jitter), then w ± step (the probe) for `probe` windows. A better probe
// becomes the incumbent and the climb goes on in that direction at once; a worse one sends the
// next probe to the other side, and when both sides have lost, w is at a peak: the incumbent is
// then observed twice as long, up to wait_max (NBA grows its interval from 2 to 32 windows), so
// probing, which never stops (NBA's continuous perturbation, how a moved optimum is found), costs
// ever less. When the incumbent's throughput is off its usual level (a moving average) by more
// than `change` (relative) in two observations in a row, the workload changed: the wait drops
// back to wait_min. After every change of w,
// `settle` windows are skipped (the workers apply it).
//
// Beyond NBA, for curves whose slope per step is below the windows' noise (a GPU whose gain grows
// slowly with w, measured in 20 ms windows), two options, off by default:
//   * scan (`scan_points` n > 0): at the start and after every detected workload change, w = 0,
//     1/n, ..., 1 are each observed for `scan_windows` windows and the climb starts from the best
//     of them, so the climb begins near the optimum instead of walking there one noisy step at a
//     time; a change is then also detected window by window (`change_windows` windows in a row at
//     the incumbent's w off its level by more than `change`), not only per observation. A
//     scanned point's figure is the median of its windows, and the spread estimate leaves out
//     observations off the level, so the dips of a shared host (every w losing a third for a
//     few windows) neither pick the scan's winner nor widen the margin;
//   * margin (`margin` z > 0): a probe wins only when its mean beats the incumbent's by z standard
//     errors of the difference (the windows' relative spread, a moving estimate from the
//     incumbent's own observations), so noise alone does not walk w away from the optimum.
#pragma once

#include <array>
#include <cmath>
#include <cstdint>

#include "runtime/balancing/shared_balancer.hh"

namespace fulcrum {

struct HillClimbConfig {
  double step = 0.04;
  uint32_t settle = 1;
  uint32_t wait_min = 2;
  uint32_t wait_max = 32;
  uint32_t probe = 1;
  double change = 0.2;
  double initial = 0;         // the first w
  uint32_t scan_points = 0;   // n: scan w = 0, 1/n, ..., 1 first and on a workload change; 0: off
  uint32_t scan_windows = 3;  // windows each scanned w is observed (after `settle`), at most 16
  // With the scan: this many windows in a row at the incumbent's w off its level by more than
  // `change` are a workload change (longer than the host-wide dips of a shared machine).
  uint32_t change_windows = 15;
  double margin = 0;  // z: standard errors a probe must win by; 0: any gain (NBA)
};

class HillClimber {
 public:
  explicit HillClimber(const HillClimbConfig& config);

  // The throughput of one more window (any unit, the same every time); returns w from now on.
  double observe(double throughput);

  // As a SharedBalancer controller: steered by the window's rate.
  BalanceChoice observe(const BalanceWindow& w) { return {observe(w.rate_pps)}; }
  BalanceChoice choice() const { return {fraction()}; }

  // The w in use now (the probe's while probing).
  double fraction() const { return scanning_ ? scan_w() : probing_ ? probe_w_ : w_; }
  // The incumbent: the best w found so far.
  double incumbent() const { return w_; }
  uint32_t wait() const { return wait_; }
  uint64_t moves() const { return moves_; }
  uint64_t reversals() const { return reversals_; }
  uint64_t reprobes() const { return reprobes_; }
  uint64_t scans() const { return scans_; }
  bool scanning() const { return scanning_; }
  // The windows' relative standard deviation as estimated so far (0: none yet).
  double noise() const { return std::sqrt(rel_var_); }

 private:
  double start_probe();
  double end_probe(double avg);
  double start_scan();
  double scan_step(double avg);
  double scan_w() const { return static_cast<double>(scan_index_) / c_.scan_points; }

  HillClimbConfig c_;
  double w_;
  double probe_w_ = 0;
  bool probing_ = false;
  int dir_ = 1;
  uint32_t failed_sides_ = 0;
  uint32_t wait_;
  uint32_t settle_left_;
  double sum_ = 0;
  double sum_sq_ = 0;
  uint32_t n_ = 0;
  uint32_t incumbent_n_ = 1;  // windows behind incumbent_avg_
  double rel_var_ = 0;        // moving estimate of the windows' relative variance
  bool scanning_ = false;
  uint32_t scan_index_ = 0;
  double scan_best_w_ = 0;
  double scan_best_avg_ = -1;
  static constexpr uint32_t kChangedObservations = 2;
  static constexpr uint32_t kMaxScanWindows = 16;
  std::array<double, kMaxScanWindows> scan_samples_{};
  uint32_t off_windows_ = 0;
  static constexpr double kLevelWeight = 0.25;
  double incumbent_avg_ = 0;
  double level_ = 0;  // moving average of the incumbent's observations, 0 none yet
  uint32_t changed_streak_ = 0;
  uint64_t moves_ = 0;
  uint64_t reversals_ = 0;
  uint64_t reprobes_ = 0;
  uint64_t scans_ = 0;
};

}  // namespace fulcrum
