// HillClimber: NBA's adaptive load-balancing algorithm (paper 000 §3.4), as a pure function of the
// throughput observed per window, so it is tested on synthetic curves without a clock.
//
// The offload fraction w in [0, 1] moves by `step` (NBA's δ = 4 %) in the direction that raised
// throughput: after each move, `settle` windows are skipped (the workers apply the new w), then
// `wait` windows are averaged (NBA's moving average against jitter) and compared with the average
// at the previous w; a fall reverses the direction. Each reversal means w is near a peak, so the
// wait doubles, up to wait_max (NBA grows its interval from 2 to 32 windows); a change of the
// throughput by more than `change` (relative) between two observations means the workload
// changed, so the wait drops back to wait_min and the climb re-probes at full speed. w keeps
// moving by one step at the peak (NBA's continuous perturbation), so a new optimum is found.
#pragma once

#include <cstdint>

namespace fulcrum {

struct HillClimbConfig {
  double step = 0.04;
  uint32_t settle = 1;
  uint32_t wait_min = 2;
  uint32_t wait_max = 32;
  double change = 0.2;
  double initial = 0;  // the first w
};

class HillClimber {
 public:
  explicit HillClimber(const HillClimbConfig& config);

  // The throughput of one more window (any unit, the same every time); returns w from now on.
  double observe(double throughput);

  double fraction() const { return w_; }
  uint32_t wait() const { return wait_; }
  uint64_t moves() const { return moves_; }
  uint64_t reversals() const { return reversals_; }
  uint64_t reprobes() const { return reprobes_; }

 private:
  void move();

  HillClimbConfig c_;
  double w_;
  int dir_ = 1;
  uint32_t wait_;
  uint32_t settle_left_;
  double sum_ = 0;
  uint32_t n_ = 0;
  double prev_avg_ = 0;
  bool have_prev_ = false;
  uint64_t moves_ = 0;
  uint64_t reversals_ = 0;
  uint64_t reprobes_ = 0;
};

}  // namespace fulcrum
