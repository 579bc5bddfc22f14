// FixedFraction — a static load balancer: a fixed share of batches goes to a device.
//
// Ports:     input 0: any batch. output 0: the same batch, unchanged.
// Uses:      nothing.  Sets: the batch's device decision (batch annotation): DEVICE with
//            probability W, else CPU; with AGGREGATE, the device batch size (batch annotation
//            `aggregate`).
// Counters:  offloaded, kept (batches); with COUNT_BYTES true, bytes (the lengths of the packets
//            it passed: `fulcrum profile` records the mean packet size at the balancer).
// Offload:   decides for the offloadable elements downstream. Each batch is drawn on its own
//            (NBA's weighted balancer), so the packets of one flow may run on the CPU and the
//            device at once and leave reordered; set AFFINITY on the offloadable element to
//            keep each flow on one processor (paper 001 §4.3.1). With W > 0, a DEVICE the run
//            does not have is a configuration error; a run with no device at all runs every
//            batch on the CPU, with a note (elements/balance/device_index.hh).
#pragma once

#include <cstdint>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "elements/balance/batch_draw.hh"

namespace fulcrum {

class FixedFraction final : public ElementBase<FixedFraction> {
 public:
  static constexpr ElementTraits kTraits{"FixedFraction", 1, 1, {}};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override {
    out.push_back({"offloaded", offloaded_});
    out.push_back({"kept", kept_});
    if (count_bytes_) out.push_back({"bytes", bytes_});
  }
  void process_batch(PacketBatch& batch) override {
    const bool offload = draw_below(state_, threshold_);
    batch.anno().device = offload ? device_ : kRunOnCpu;
    batch.anno().aggregate = aggregate_;
    ++(offload ? offloaded_ : kept_);
    if (count_bytes_) batch.for_each([&](uint32_t, const Packet* p) { bytes_ += length(p); });
  }

 private:
  uint64_t state_ = 1;
  uint64_t threshold_ = 0;  // out of 2^32
  int32_t device_ = 0;
  uint16_t aggregate_ = 0;
  uint64_t offloaded_ = 0;
  uint64_t kept_ = 0;
  bool count_bytes_ = false;
  uint64_t bytes_ = 0;
};

FULCRUM_REGISTER_ELEMENT(FixedFraction);

}  // namespace fulcrum
