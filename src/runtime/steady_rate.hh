// SteadyRate: packets transmitted per second over the last part of a run (the first part is
// start-up, or a balancer's climb), from RunOptions::on_tick. Used by `fulcrum profile` and the
// benchmarks.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/runtime.hh"

namespace fulcrum {

class SteadyRate {
 public:
  // The rate over the ticks from `from` (share of the run, 0.5: the second half) to the end.
  explicit SteadyRate(double from = 0.5) : from_(from) {}

  // Installs the tick callback on `o`; `this` must outlive the run.
  void attach(RunOptions& o) {
    ticks_.clear();
    o.on_tick = [this](double t, uint64_t, uint64_t tx) { ticks_.push_back({t, tx}); };
  }
  // Packets per second; `fallback` (the whole run's rate) when too few ticks were seen.
  double pps(double fallback) const {
    if (ticks_.size() < 2) return fallback;
    const Tick& end = ticks_.back();
    const Tick* start = &ticks_.front();
    for (const Tick& t : ticks_)
      if (t.t <= end.t * from_) start = &t;
    const double dt = end.t - start->t;
    return dt > 0 ? static_cast<double>(end.tx - start->tx) / dt : fallback;
  }

 private:
  struct Tick {
    double t;
    uint64_t tx;
  };
  double from_;
  std::vector<Tick> ticks_;
};

}  // namespace fulcrum
