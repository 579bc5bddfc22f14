// PolicyBalancer — the thesis' policy scheduler: device mix and batch size from a profile.
// Picks the configuration (device, offloaded share w, device batch size) that a profile written
// by `fulcrum profile` says is best for the policy at the measured rate, then adapts online
// (paper 001 §5.2; runtime/balancing/policy_scheduler.hh has the algorithm, docs/adaptive.md
// the file).
//
// Ports:     input 0: any batch. output 0: the same batch, unchanged.
// Uses:      nothing.  Sets: the batch's device decision (DEVICE of the configuration with
//            probability w, else CPU) and device batch size (batch annotation `aggregate`: the
//            offloadable elements downstream close their tasks at that many batches, at most
//            their own AGGREGATE).
// Counters:  offloaded, kept (batches); config (index of the profile point in force),
//            fraction_permille, aggregate, rate_pps (all workers, last window), windows,
//            switches, grows, shrinks, learned (profile points updated from measurement).
// Offload:   every replica (all workers) shares one scheduler, steered by the packets per
//            second through the balancer and the share of batches that arrive full (the input
//            is backlogged). Set AFFINITY on the offloadable element so that a flow keeps its
//            processor while the mix moves and is never reordered.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "elements/balance/shared_balancer_element.hh"
#include "runtime/balancing/policy_scheduler.hh"

namespace fulcrum {

class PolicyBalancer final : public SharedBalancerElement<PolicyBalancer, PolicyScheduler> {
 public:
  static constexpr ElementTraits kTraits{"PolicyBalancer", 1, 1, {}};
  static constexpr const char* kTraceHeader =
      "time_s rate_pps full_share fraction device aggregate config";
  static int trace_row(std::FILE* f, const TracePoint& p) {
    return std::fprintf(f, "%.4f %.0f %.3f %.4f %d %u %d\n", p.t_s, p.window.rate_pps,
                        p.window.full_share, p.choice.fraction, p.choice.device, p.choice.aggregate,
                        p.choice.config);
  }

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

 private:
  std::string profile_file_;
  PolicyConfig policy_;
  double window_ms_ = 40;
};

FULCRUM_REGISTER_ELEMENT(PolicyBalancer);

}  // namespace fulcrum
