// PolicyScheduler: the thesis' online adaptation algorithm (paper 001 §5.2) over a profile,
// driven by one observation window at a time (no clock: tests feed it windows).
//
// Each window:
//  1. The demand: the measured rate or, when most batches arrived full (the input is backlogged:
//     the pipeline runs at its capacity), more than the current configuration carries. The
//     policy's best configuration for it (profile.hh, choose) replaces the current one only when
//     the current one does not carry the demand (with a band of DELTA around its headroom) or
//     the new one's figure of merit beats the current one's by the factor LAMBDA (hysteresis:
//     noise never makes it alternate between competing configurations). Backlogged (flat out)
//     with nothing that carries the demand, it moves only to a point whose throughput beats
//     the current one's by LAMBDA (unless the latency bound forces it). A switch takes the
//     point's device batch size and resets ALPHA and BETA.
//  2. The check against the profile (the thesis' step 3, a loop that skips step 1 while it
//     runs): backlogged at a rate more than DELTA under the point's throughput is "worse": the
//     device batch grows by ALPHA, window after window, until the rate is within DELTA of the
//     profile's or the batch is at its maximum. The loop then ends and the profile point learns
//     the rate it sustains (the thesis updates its tree), so step 1 can move to a configuration
//     that now looks better. Not backlogged, with a rate more than DELTA under the point's
//     loaded throughput (HEADROOM), is "better": the device has slack and the batch shrinks by
//     BETA (smaller device batches, lower latency), but never to a size that was found too
//     small for this rate. In between, nothing moves and ALPHA and BETA return to their
//     initial values. With nothing left to grow (the batch at its maximum, or the CPU alone,
//     which has no device batch), the point learns only after LEARN_PERSIST backlogged windows
//     in a row short of its profile, their mean rate: one noisy window no longer rewrites a
//     point (on a GPU host a single window 15 % low sent the scheduler away from its final
//     point and back), and the CPU alone no longer grows a batch it does not use (five windows,
//     1 -> 32, after a size step there). A point that has carried its profile (a backlogged
//     window within DELTA of it) since it came into force or last learned waits SETTLED_PERSIST
//     short windows in a row instead (beyond the thesis): it has shown its profile right, so a
//     dip of a few windows is the host's, not the point's (on the H100 hosts settled points
//     carried 10-20 % less for 2-4 windows, learned that and left; docs/adaptive.md, "Settling
//     on a noisy host"). A point that never met its profile since it came into force (a wrong
//     profile, a host slower since the profile, a new size) learns after LEARN_PERSIST.
//  0. (before 1) The latency check, when the window brings a p99 estimate (BalanceWindow; the
//     balancer samples packets online): the profile predicts the p99 of the configuration in
//     force at the measured rate (ProfilePoint::p99_at, between the rates profiled; at a device
//     batch size other than the point's, the point of the same device and share with that
//     size, and no check when the profile has none). Measured outside predicted × (1 ± DELTA)
//     for LATENCY_PERSIST estimates in a row, on the same side, the point learns its latency
//     (latency_scale = measured / predicted) and step 1 re-plans with it: under a bound the
//     point may no longer qualify; the latency policy compares it as learned. A noisy series
//     inside the band, or one that jumps from side to side, changes nothing; nor does the first
//     estimate after a change of configuration or batch size (it may straddle the change).
// Drift (beyond the thesis): when two different points of the size class in force learn in a row
// that they run off their profile by the same factor (within DELTA of each other), the host, not
// one configuration, changed (a cold start, a slower clock, a neighbour on the memory bus): the
// points of that class not yet measured are predicted at their profiled rate times that factor
// (the two ratios' geometric mean), so step 1 does not walk through every point to learn the same
// news one by one (on the GPU hosts after a size step every 1500 B point ran 25-35 % under its
// profile). One point alone off its profile moves nothing else: the next point is tried at its
// profiled rate, as the thesis does. Points measured keep what they learned. DRIFT false: off.
// HOST_DRIFT (off by default; beyond the thesis): a point that had carried its profile and then
// learns another rate is taken as drift at once, its ratio alone: the configuration was shown
// right, so the change is the host's (on the H200 host of 2026-11-27 settled points ran 15-25 %
// slower for seconds, and so did the points the scheduler moved to). A move then needs a point
// that beats it by LAMBDA at the same drift. The price: a configuration that alone got slower
// is not left (nothing measures another point), which the thesis' learning handles.
// Packet sizes: a profile measured at several sizes (`fulcrum profile --sizes`, ProfilePoint::
// frame_bytes) has one set of points per size class (size_classes), and steps 0–3 look only at
// the class in force, so rates in packets per second are compared with rates profiled at the
// same size. Each window brings the mean length of its packets (BalanceWindow::frame_bytes); when
// SIZE_PERSIST windows in a row fall nearest (nearest_size_class) to another class, the scheduler
// moves to it: to the same configuration (the CPU alone, or the same device, share and batch
// size) measured at the new size when the profile has it, else to the policy's choice there,
// and step 1 re-plans at once. A window in another class that is not yet confirmed changes
// nothing (its rate is that of another size: it would mislead steps 1 and 3).
// The thesis writes "β = α/2" after a growth and "α = β/2" after a shrink, with α = β = 2; read
// literally the factor drops to 1 and then below (a growth that shrinks). We halve the step's
// excess instead (2 → 1.5 → 1.25 ...), the bisection the thesis' log_α M convergence bound
// describes.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/balancing/profile.hh"
#include "runtime/balancing/shared_balancer.hh"

namespace fulcrum {

struct PolicyConfig {
  Policy policy = Policy::kThroughput;
  double latency_bound_us = 0;   // 0: none
  double delta = 0.10;           // the thesis' δ: 10 %
  double lambda = 1.10;          // the thesis' λ (it gives no value: ours)
  double alpha = 2, beta = 2;    // the thesis' batch growth and shrink: 2x
  double headroom = 0.9;         // a configuration carries up to this share of its throughput
  double backlog = 0.5;          // share of full batches that means "at capacity"
  uint32_t max_aggregate = 0;    // largest device batch; 0: the largest in the profile
  uint32_t latency_persist = 2;  // estimates in a row outside the band before re-planning
  uint32_t size_persist = 2;     // windows in a row in another size class before moving to it
  uint32_t learn_persist = 2;    // short windows in a row, nothing left to grow, before learning
  uint32_t settled_persist = 5;  // the same for a point that has carried its profile (0: as above)
  bool drift = true;             // two points off their profile alike scale the unmeasured ones
  bool host_drift = false;       // one that carried its profile does (needs drift)
  // The first windows of a run only watch (PolicyBalancer's WARMUP: 3): start-up, the first
  // touches of buffers and tables, is no measure of a point.
  uint32_t warmup = 0;
};

class PolicyScheduler {
 public:
  PolicyScheduler(Profile profile, const PolicyConfig& config);

  BalanceChoice observe(const BalanceWindow& w);
  BalanceChoice choice() const;

  const ProfilePoint& current() const { return profile_.points[current_]; }
  size_t current_index() const { return current_; }
  uint32_t aggregate() const { return aggregate_; }
  bool tuning() const { return tuning_; }
  uint64_t switches() const { return switches_; }
  uint64_t grows() const { return grows_; }
  uint64_t shrinks() const { return shrinks_; }
  uint64_t learned() const { return learned_; }
  // The factor the points not yet measured at the size in force are predicted at (1: none), and
  // how often two points confirmed a drift.
  double drift() const { return drift_[class_]; }
  uint64_t drifts() const { return drifts_; }
  // The online latency: the last estimate measured, the profile's prediction for it (0: none),
  // and how often a measurement outside the band made a point learn its latency.
  double measured_p99_us() const { return measured_p99_us_; }
  double predicted_p99_us() const { return predicted_p99_us_; }
  uint64_t latency_replans() const { return latency_replans_; }
  // The size class in force (its mean frame bytes; 0: a profile without sizes) and how often
  // the traffic's size moved the scheduler to another class.
  double size_class_bytes() const { return classes_[class_]; }
  uint64_t size_switches() const { return size_switches_; }
  const Profile& profile() const { return profile_; }

 private:
  // Follows the window's packet size (the comment at the top); true while a move to another
  // class waits for confirmation (steps 1 and 3 are skipped).
  bool follow_size(const BalanceWindow& w);
  void check_latency(const BalanceWindow& w);
  // The profile point whose latency predicts the configuration in force at its batch size.
  ProfilePoint* predicting_point();
  bool step1(const BalanceWindow& w, bool at_capacity);
  void step3(const BalanceWindow& w, bool at_capacity);
  void end_tuning(const BalanceWindow& w, bool at_capacity);
  // Step 3 with nothing left to grow: the point learns the mean rate of learn_persist short
  // windows in a row (settled_persist once it has carried its profile).
  void learn_when_confirmed(const BalanceWindow& w);
  // The point in force sustains `rate_pps`: it learns it, and with another point of its class
  // off its profile by the same factor just before, the unmeasured points follow (the comment at
  // the top).
  void learn(double rate_pps);
  void switch_to(size_t index);

  Profile profile_;
  PolicyConfig config_;
  std::vector<double> classes_;                    // size_classes(profile_.points)
  std::vector<std::vector<size_t>> class_points_;  // the points of each class
  size_t class_ = 0;                               // the class in force
  size_t class_pending_ = 0;                       // another class the last windows fell in
  uint32_t class_windows_ = 0;                     // how many in a row
  uint64_t size_switches_ = 0;
  uint32_t max_aggregate_ = 1;
  size_t current_ = 0;
  uint32_t aggregate_ = 1;
  double alpha_ = 2, beta_ = 2;
  bool tuning_ = false;  // in step 3's growth loop
  // The largest batch that left the device backlogged right after a shrink, and the rate
  // carried before that shrink: shrinking stops above it until the rate falls by DELTA.
  uint32_t too_small_ = 0;
  double too_small_rate_ = 0;
  bool shrunk_ = false;           // the last window shrank the batch
  double carried_ = 0;            // the rate of the last window that was not backlogged
  uint32_t warmup_left_ = 0;      // windows still to watch before acting (config_.warmup)
  uint32_t short_windows_ = 0;    // backlogged windows in a row short of profile, nothing to grow
  double short_sum_ = 0;          // and the sum of their rates
  bool carried_profile_ = false;  // a backlogged window within DELTA of the point's profile since
                                  // it came into force or last learned
  uint64_t switches_ = 0, grows_ = 0, shrinks_ = 0, learned_ = 0, drifts_ = 0;
  std::vector<double> profiled_pps_;  // each point's throughput as the profile gave it
  std::vector<bool> measured_;        // the point learned its rate in this run
  std::vector<double> drift_;         // per class: the factor unmeasured points are at
  struct LastLearned {
    size_t point = SIZE_MAX;  // none yet
    double ratio = 1;         // its learned rate over its profiled one
  };
  std::vector<LastLearned> last_learned_;  // per class
  bool latency_settle_ = true;             // the next estimate may straddle a change: not compared
  int latency_out_ = 0;                    // estimates in a row above (> 0) or below (< 0) the band
  double measured_p99_us_ = 0, predicted_p99_us_ = 0;
  uint64_t latency_replans_ = 0;
};

}  // namespace fulcrum
