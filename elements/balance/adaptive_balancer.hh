// AdaptiveBalancer — NBA's adaptive load balancer: the offloaded share follows throughput.
// The share of batches sent to the device moves by hill climbing on the measured throughput
// (paper 000 §3.4; runtime/balancing/hill_climber.hh has the algorithm). Arguments: every
// constant of the climb with NBA's value as default (DEVICE, STEP, WINDOW_MS, SETTLE, WAIT_MIN,
// WAIT_MAX, PROBE, CHANGE, INITIAL, SEED, TRACE); beyond NBA, SCAN n (coarse scan of w first and
// after a workload change) and MARGIN z (a probe must win by z standard errors), for gains
// shallower than the windows' noise (docs/adaptive.md).
//
// Ports:     input 0: any batch. output 0: the same batch, unchanged.
// Uses:      nothing.  Sets: the batch's device decision (batch annotation): DEVICE with
//            probability w, else CPU.
// Counters:  offloaded, kept (batches); fraction_permille (w now), windows, moves, reversals,
//            reprobes, scans; noise_permille (the windows' relative spread as estimated);
//            rate_pps (packets per second through the balancer, all workers, last window).
// Offload:   every replica of one AdaptiveBalancer (all workers) shares w and the throughput it
//            is steered by: packets through the balancer per second, summed over the workers
//            (equal to the transmitted rate in steady state: NBA counts transmitted packets). As
//            with FixedFraction, set AFFINITY on the offloadable element to keep flows in order.
//            A DEVICE the run does not have is a configuration error; a run with no device at
//            all runs every batch on the CPU, with a note (elements/balance/device_index.hh).
#pragma once

#include <cstdio>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "elements/balance/shared_balancer_element.hh"
#include "runtime/balancing/hill_climber.hh"

namespace fulcrum {

class AdaptiveBalancer final : public SharedBalancerElement<AdaptiveBalancer, HillClimber> {
 public:
  static constexpr ElementTraits kTraits{"AdaptiveBalancer", 1, 1, {}};
  static constexpr const char* kTraceHeader = "time_s fraction rate_pps";
  static int trace_row(std::FILE* f, const TracePoint& p) {
    return std::fprintf(f, "%.4f %.4f %.0f\n", p.t_s, p.choice.fraction, p.window.rate_pps);
  }

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

 private:
  HillClimbConfig climb_;
  double window_ms_ = 200;
};

FULCRUM_REGISTER_ELEMENT(AdaptiveBalancer);

}  // namespace fulcrum
