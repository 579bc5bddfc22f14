// DeviceOnly — a static load balancer: every batch is offloaded to one device.
//
// Ports:     input 0: any batch. output 0: the same batch, unchanged.
// Uses:      nothing.  Sets: the batch's device decision (batch annotation) = DEVICE.
// Counters:  none.
// Offload:   decides for the offloadable elements downstream; a batch whose device is down or
//            absent runs on the CPU there (the offloadable element says so in its counters).
#pragma once

#include <cstdint>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class DeviceOnly final : public ElementBase<DeviceOnly> {
 public:
  static constexpr ElementTraits kTraits{"DeviceOnly", 1, 1, {}};

  Status configure(Args& args) override;
  void process_batch(PacketBatch& batch) override { batch.anno().device = device_; }

 private:
  int32_t device_ = 0;
};

FULCRUM_REGISTER_ELEMENT(DeviceOnly);

}  // namespace fulcrum
