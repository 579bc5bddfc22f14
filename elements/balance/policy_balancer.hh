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

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/element.hh"
#include "core/output_loss.hh"
#include "core/registry.hh"
#include "elements/balance/batch_draw.hh"
#include "runtime/balancing/policy_scheduler.hh"
#include "runtime/balancing/shared_balancer.hh"

namespace fulcrum {

class PolicyBalancer final : public ElementBase<PolicyBalancer> {
 public:
  static constexpr ElementTraits kTraits{"PolicyBalancer", 1, 1, {}};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;
  void finish() override;
  void output_losses(std::vector<OutputLoss>& out) const override;
  void process_batch(PacketBatch& batch) override {
    const bool offload = draw_below(state_, shared_->threshold());
    batch.anno().device = offload ? shared_->device() : kRunOnCpu;
    batch.anno().aggregate = static_cast<uint16_t>(shared_->aggregate());
    ++(offload ? offloaded_ : kept_);
    shared_->count(slot_, batch.live(), batch.count() >= full_batch_);
    if ((++batches_ & kClockEvery) == 0) shared_->tick(now_ns());
  }

 private:
  static constexpr uint64_t kClockEvery = 7;  // read the clock every 8 batches
  static uint64_t now_ns();

  std::string profile_file_;
  PolicyConfig policy_;
  double window_ms_ = 40;
  uint64_t state_ = 1;
  std::shared_ptr<const SharedBalancer<PolicyScheduler>> shared_;
  uint32_t slot_ = 0;
  uint32_t full_batch_ = kDefaultBatch;
  std::string trace_file_;
  bool writes_trace_ = false;  // worker 0's replica writes it
  std::optional<OutputLoss> trace_loss_;
  uint64_t batches_ = 0;
  uint64_t offloaded_ = 0;
  uint64_t kept_ = 0;
};

FULCRUM_REGISTER_ELEMENT(PolicyBalancer);

}  // namespace fulcrum
