// AdaptiveBalancer — NBA's adaptive load balancer: the offloaded share follows throughput.
// The share of batches sent to the device moves by hill climbing on the measured throughput
// (paper 000 §3.4; runtime/balancing/hill_climber.hh has the algorithm).
//
// Ports:     input 0: any batch. output 0: the same batch, unchanged.
// Uses:      nothing.  Sets: the batch's device decision (batch annotation): DEVICE with
//            probability w, else CPU.
// Counters:  offloaded, kept (batches); fraction_permille (w now), windows, moves, reversals,
//            reprobes; rate_pps (packets per second through the balancer, all workers, last
//            window).
// Offload:   every replica of one AdaptiveBalancer (all workers) shares w and the throughput it
//            is steered by: packets through the balancer per second, summed over the workers
//            (equal to the transmitted rate in steady state: NBA counts transmitted packets). As
//            with FixedFraction, set AFFINITY on the offloadable element to keep flows in order.
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
#include "runtime/balancing/hill_climber.hh"
#include "runtime/balancing/shared_balancer.hh"

namespace fulcrum {

class AdaptiveBalancer final : public ElementBase<AdaptiveBalancer> {
 public:
  static constexpr ElementTraits kTraits{"AdaptiveBalancer", 1, 1, {}};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;
  void finish() override;
  void output_losses(std::vector<OutputLoss>& out) const override;
  void process_batch(PacketBatch& batch) override {
    const bool offload = draw_below(state_, shared_->threshold());
    batch.anno().device = offload ? device_ : kRunOnCpu;
    ++(offload ? offloaded_ : kept_);
    shared_->count(slot_, batch.live(), batch.count() >= full_batch_);
    if ((++batches_ & kClockEvery) == 0) shared_->tick(now_ns());
  }

 private:
  static constexpr uint64_t kClockEvery = 7;  // read the clock every 8 batches
  static uint64_t now_ns();

  HillClimbConfig climb_;
  double window_ms_ = 200;
  int32_t device_ = 0;
  uint64_t state_ = 1;
  std::shared_ptr<const SharedBalancer<HillClimber>> shared_;
  uint32_t slot_ = 0;
  uint32_t full_batch_ = kDefaultBatch;
  std::string trace_file_;
  bool writes_trace_ = false;  // worker 0's replica writes it
  std::optional<OutputLoss> trace_loss_;
  uint64_t batches_ = 0;
  uint64_t offloaded_ = 0;
  uint64_t kept_ = 0;
};

FULCRUM_REGISTER_ELEMENT(AdaptiveBalancer);

}  // namespace fulcrum
