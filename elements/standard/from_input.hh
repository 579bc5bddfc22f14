// FromInput — where received packets enter the pipeline.
//
// Ports:     no input. output 0: every packet received on any port/queue this worker polls,
//            one RX burst per batch. Which ports and queues a worker polls is decided by the
//            runtime (--port, --workers), not by the pipeline.
// Uses:      nothing.  Sets: in_port, out_port (= unset), flow_hash (RSS hash) per packet;
//            in_port, in_queue, batch_id, rx_tsc per batch.
// Counters:  none (the runtime counts rx per port).
// Offload:   none.
#pragma once

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class FromInput final : public ElementBase<FromInput> {
 public:
  static constexpr ElementTraits kTraits{"FromInput", 0, 1, {}};

  Status configure(Args& args) override { return args.finish(); }
  // Batches are injected by the runtime already classified to output 0.
  void process_batch(PacketBatch&) override {}
};

FULCRUM_REGISTER_ELEMENT(FromInput);

}  // namespace fulcrum
