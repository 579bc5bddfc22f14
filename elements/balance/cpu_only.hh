// CPUOnly — a static load balancer: every batch runs on the CPU.
//
// Ports:     input 0: any batch. output 0: the same batch, unchanged.
// Uses:      nothing.  Sets: the batch's device decision (batch annotation) = CPU.
// Counters:  none.
// Offload:   decides for the offloadable elements downstream (NBA §3.3 load-balancer elements);
//            see DeviceOnly and FixedFraction.
#pragma once

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class CPUOnly final : public ElementBase<CPUOnly> {
 public:
  static constexpr ElementTraits kTraits{"CPUOnly", 1, 1, {}};

  Status configure(Args& args) override { return args.finish(); }
  void process_batch(PacketBatch& batch) override { batch.anno().device = kRunOnCpu; }
};

FULCRUM_REGISTER_ELEMENT(CPUOnly);

}  // namespace fulcrum
