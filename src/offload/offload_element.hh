// OffloadElement<Derived>: the base of an offloadable element. Derived declares what it offloads
// as data (static constexpr offload::OffloadSpec kOffload) and implements the offload::Offloadable
// hooks (offload/stage/offload_spec.hh states the contract); the framework's compiled
// offload::OffloadStage (offload/stage/offload_stage.hh) does the rest: the CPU/device choice,
// task buffers and back-pressure, whole-packet regions, ordered release, timeouts and fallback,
// flow affinity and chaining. Derived calls configure_offload(args) as the last step of
// configure() (it reads the stage's keys and finishes the arguments) and initialize_offload(ctx)
// from initialize().
#pragma once

#include <vector>

#include "core/element.hh"
#include "offload/stage/offload_spec.hh"
#include "offload/stage/offload_stage.hh"

namespace fulcrum {

template <class Derived>
class OffloadElement : public ElementBase<Derived>, public offload::Offloadable {
 public:
  OffloadElement() : stage_(*this, *this, Derived::kOffload) {
    static_assert(offload::OffloadableElement<Derived>,
                  "an offloadable element is final, derives from OffloadElement<Self> and "
                  "declares a valid static constexpr offload::OffloadSpec kOffload");
  }

  bool defers() const override { return true; }
  uint64_t held() const override { return stage_.held(); }
  void counters(std::vector<Counter>& out) const override { stage_.counters(out); }
  void process_batch(PacketBatch& batch) override { stage_.process_batch(batch); }
  void poll_deferred(uint64_t now_ns, PacketBatch& out) override {
    stage_.poll_deferred(now_ns, out);
  }
  offload::OffloadStage* offload_stage() override { return &stage_; }

 protected:
  Status configure_offload(Args& args) { return stage_.configure(args); }
  Status initialize_offload(const InitContext& ctx) { return stage_.initialize(ctx); }
  const offload::OffloadService& service() const { return stage_.service(); }

 private:
  offload::OffloadStage stage_;
};

}  // namespace fulcrum
