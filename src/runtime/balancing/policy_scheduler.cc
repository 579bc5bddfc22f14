#include "runtime/balancing/policy_scheduler.hh"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <utility>

namespace fulcrum {

PolicyScheduler::PolicyScheduler(Profile profile, const PolicyConfig& config)
    : profile_(std::move(profile)),
      config_(config),
      alpha_(config.alpha),
      beta_(config.beta),
      warmup_left_(config.warmup) {
  max_aggregate_ = config_.max_aggregate;
  if (max_aggregate_ == 0)
    for (const ProfilePoint& p : profile_.points)
      max_aggregate_ = std::max(max_aggregate_, p.aggregate);
  max_aggregate_ = std::max(max_aggregate_, 1u);
  classes_ = size_classes(profile_.points);
  class_points_.resize(classes_.size());
  drift_.assign(classes_.size(), 1.0);
  last_learned_.resize(classes_.size());
  measured_.assign(profile_.points.size(), false);
  for (const ProfilePoint& p : profile_.points) profiled_pps_.push_back(p.throughput_pps);
  for (size_t i = 0; i < profile_.points.size(); ++i)
    class_points_[nearest_size_class(classes_, profile_.points[i].frame_bytes)].push_back(i);
  // Before any traffic is seen: the policy's choice for an unknown, light load, at the smallest
  // size.
  const int first = choose(profile_.points, config_.policy, Demand{0, config_.latency_bound_us},
                           config_.headroom, &class_points_[0]);
  current_ = first < 0 ? 0 : static_cast<size_t>(first);
  aggregate_ = profile_.points.empty() ? 1 : std::min(current().aggregate, max_aggregate_);
}

void PolicyScheduler::switch_to(size_t index) {
  current_ = index;
  carried_profile_ = false;
  short_windows_ = 0;
  short_sum_ = 0;
  aggregate_ = std::min(current().aggregate, max_aggregate_);
  alpha_ = config_.alpha;
  beta_ = config_.beta;
  too_small_ = 0;
  shrunk_ = false;
  ++switches_;
}

BalanceChoice PolicyScheduler::observe(const BalanceWindow& w) {
  if (profile_.points.empty()) return choice();
  if (warmup_left_ > 0) {
    --warmup_left_;
    return choice();
  }
  const bool at_capacity = w.full_share >= config_.backlog;
  const size_t config = current_;
  const uint32_t aggregate = aggregate_;
  if (!follow_size(w)) {
    check_latency(w);
    if (tuning_ || !step1(w, at_capacity)) step3(w, at_capacity);
  }
  if (current_ != config || aggregate_ != aggregate) {
    latency_settle_ = true;
    latency_out_ = 0;
  }
  return choice();
}

bool PolicyScheduler::follow_size(const BalanceWindow& w) {
  if (classes_.size() < 2 || w.frame_bytes <= 0) return false;
  const size_t c = nearest_size_class(classes_, w.frame_bytes);
  if (c == class_ || class_points_[c].empty()) {
    class_windows_ = 0;
    return false;
  }
  if (c != class_pending_) class_windows_ = 0;
  class_pending_ = c;
  if (++class_windows_ < config_.size_persist) return true;
  class_ = c;
  class_windows_ = 0;
  ++size_switches_;
  const ProfilePoint& old = current();
  int next = -1;
  for (const size_t i : class_points_[c]) {
    const ProfilePoint& p = profile_.points[i];
    if (p.fraction == old.fraction &&
        (p.fraction == 0 || (p.device == old.device && p.aggregate == old.aggregate))) {
      next = static_cast<int>(i);
      break;
    }
  }
  if (next < 0)
    next = choose(profile_.points, config_.policy, Demand{w.rate_pps, config_.latency_bound_us},
                  config_.headroom, &class_points_[c]);
  switch_to(static_cast<size_t>(next));
  tuning_ = false;
  // Steps 1 and 3 re-plan at the new size in this window; the latency check waits for an
  // estimate of the new traffic.
  latency_settle_ = true;
  latency_out_ = 0;
  return false;
}

ProfilePoint* PolicyScheduler::predicting_point() {
  ProfilePoint& c = profile_.points[current_];
  if (c.fraction == 0 || aggregate_ == std::min(c.aggregate, max_aggregate_)) return &c;
  for (const size_t i : class_points_[class_]) {
    ProfilePoint& p = profile_.points[i];
    if (p.device == c.device && p.fraction == c.fraction && p.aggregate == aggregate_) return &p;
  }
  return nullptr;
}

void PolicyScheduler::check_latency(const BalanceWindow& w) {
  if (w.p99_us <= 0) return;  // no estimate in this window
  measured_p99_us_ = w.p99_us;
  ProfilePoint* p = predicting_point();
  predicted_p99_us_ = p == nullptr ? 0 : p->p99_at(std::min(w.rate_pps, p->throughput_pps));
  if (latency_settle_) {
    latency_settle_ = false;
    return;
  }
  if (predicted_p99_us_ <= 0) return;
  const double ratio = w.p99_us / predicted_p99_us_;
  const int side = ratio > 1 + config_.delta ? 1 : ratio < 1 - config_.delta ? -1 : 0;
  if (side == 0 || (latency_out_ > 0) != (side > 0)) {
    latency_out_ = side;
    if (side == 0 || config_.latency_persist > 1) return;
  } else {
    latency_out_ += side;
  }
  if (static_cast<uint32_t>(std::abs(latency_out_)) < config_.latency_persist) return;
  p->latency_scale *= ratio;
  predicted_p99_us_ = w.p99_us;
  latency_out_ = 0;
  ++latency_replans_;
}

bool PolicyScheduler::step1(const BalanceWindow& w, bool at_capacity) {
  const double capacity = current().throughput_pps;
  Demand demand{w.rate_pps, config_.latency_bound_us};
  if (at_capacity) demand.offered_pps = std::max(w.rate_pps, capacity) * (1 + config_.delta);
  const int best =
      choose(profile_.points, config_.policy, demand, config_.headroom, &class_points_[class_]);
  if (best < 0 || static_cast<size_t>(best) == current_) return false;
  const ProfilePoint& b = profile_.points[static_cast<size_t>(best)];
  const bool carries = demand.offered_pps <= capacity * config_.headroom * (1 + config_.delta);
  const bool over_bound =
      demand.latency_bound_us > 0 &&
      current().p99_at(std::min(demand.offered_pps, capacity)) > demand.latency_bound_us;
  const bool needed = (config_.policy != Policy::kThroughput && !carries) || over_bound;
  if (!needed &&
      merit(b, config_.policy, demand) < config_.lambda * merit(current(), config_.policy, demand))
    return false;
  // Flat out with nothing that carries the demand, a move pays only by carrying more, and only
  // by more than noise (LAMBDA): else, where points lie within noise of each other, each one
  // step 3 learns a little lower sends the scheduler to the next (measured on a GPU host: five
  // moves in 1.2 s after a size step among points 1.95-2.35 Mpps).
  if (at_capacity && !carries && !over_bound && b.throughput_pps < config_.lambda * capacity)
    return false;
  switch_to(static_cast<size_t>(best));
  return true;
}

void PolicyScheduler::step3(const BalanceWindow& w, bool at_capacity) {
  const double expected = current().throughput_pps;
  const bool cpu = current().fraction == 0;  // no device batch to grow or shrink
  if (at_capacity && w.rate_pps < expected * (1 - config_.delta)) {
    if (!cpu) {
      if (shrunk_) {
        // Backlogged right after a shrink: it went too far for the rate carried before it.
        too_small_ = aggregate_;
        too_small_rate_ = carried_;
      }
      shrunk_ = false;
      if (aggregate_ < max_aggregate_) {
        aggregate_ =
            std::min(max_aggregate_, static_cast<uint32_t>(std::ceil(aggregate_ * alpha_)));
        beta_ = 1 + (alpha_ - 1) / 2;
        tuning_ = true;
        ++grows_;
        return;
      }
    }
    return learn_when_confirmed(w);
  }
  short_windows_ = 0;
  short_sum_ = 0;
  shrunk_ = false;
  if (at_capacity && w.rate_pps <= expected * (1 + config_.delta)) carried_profile_ = true;
  if (!at_capacity) carried_ = w.rate_pps;
  if (tuning_) return end_tuning(w, at_capacity);
  if (too_small_ != 0 && w.rate_pps < too_small_rate_ * (1 - config_.delta))
    too_small_ = 0;  // the rate fell: what was too small may do now
  const uint32_t smaller = static_cast<uint32_t>(std::floor(aggregate_ / beta_));
  if (!cpu && !at_capacity && w.rate_pps < expected * config_.headroom * (1 - config_.delta) &&
      smaller >= 1 && smaller > too_small_) {
    aggregate_ = smaller;
    alpha_ = 1 + (beta_ - 1) / 2;
    shrunk_ = true;
    ++shrinks_;
    return;
  }
  if (at_capacity) return end_tuning(w, at_capacity);
  alpha_ = config_.alpha;
  beta_ = config_.beta;
}

void PolicyScheduler::learn_when_confirmed(const BalanceWindow& w) {
  short_sum_ += w.rate_pps;
  const uint32_t persist = carried_profile_
                               ? std::max(config_.learn_persist, config_.settled_persist)
                               : config_.learn_persist;
  if (++short_windows_ < persist) return;
  learn(short_sum_ / short_windows_);
  short_windows_ = 0;
  short_sum_ = 0;
  tuning_ = false;
  alpha_ = config_.alpha;
  beta_ = config_.beta;
}

void PolicyScheduler::end_tuning(const BalanceWindow& w, bool at_capacity) {
  // The profile point learns what it sustains: measured backlogged, at its own batch size or
  // larger (below it, our shrinking rather than the configuration limited it).
  ProfilePoint& p = profile_.points[current_];
  if (at_capacity && aggregate_ >= std::min(p.aggregate, max_aggregate_) &&
      std::fabs(w.rate_pps - p.throughput_pps) > config_.delta * p.throughput_pps && w.rate_pps > 0)
    learn(w.rate_pps);
  tuning_ = false;
  alpha_ = config_.alpha;
  beta_ = config_.beta;
}

void PolicyScheduler::learn(double rate_pps) {
  profile_.points[current_].throughput_pps = rate_pps;
  const bool carried = carried_profile_;
  carried_profile_ = false;
  measured_[current_] = true;
  ++learned_;
  if (!config_.drift || profiled_pps_[current_] <= 0) return;
  const double ratio = rate_pps / profiled_pps_[current_];
  LastLearned& last = last_learned_[class_];
  const bool alike = last.point != SIZE_MAX && last.point != current_ &&
                     std::fabs(ratio / last.ratio - 1) <= config_.delta;
  if (alike || (config_.host_drift && carried)) {
    drift_[class_] = alike ? std::sqrt(ratio * last.ratio) : ratio;
    ++drifts_;
    for (const size_t i : class_points_[class_])
      if (!measured_[i]) profile_.points[i].throughput_pps = profiled_pps_[i] * drift_[class_];
  }
  last = {current_, ratio};
}

BalanceChoice PolicyScheduler::choice() const {
  if (profile_.points.empty()) return {};
  return {current().fraction, current().device, aggregate_, static_cast<int32_t>(current_)};
}

}  // namespace fulcrum
