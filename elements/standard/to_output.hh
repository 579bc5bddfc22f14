// ToOutput — hands packets to the framework for transmission.
//
// Ports:     input 0: packets to transmit. No outputs. Each packet leaves through its out_port
//            annotation, set by a routing element (IPLookup, L2Forward); a packet whose out_port
//            no element set leaves through the port it came in on (echo).
// Uses:      out_port, in_port.  Sets: nothing.
// Counters:  none here; the runtime counts tx per port and drops "no-such-port" (out_port
//            beyond the configured ports) and "tx-full" (the port refused the packet).
// Offload:   none.
#pragma once

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class ToOutput final : public ElementBase<ToOutput> {
 public:
  static constexpr ElementTraits kTraits{"ToOutput", 1, 0, {}};

  Status configure(Args& args) override { return args.finish(); }
  Status initialize(const InitContext& ctx) override {
    sink_ = ctx.sink;
    if (sink_ == nullptr)
      return make_error(name() + " :: ToOutput: no transmit path in this runtime");
    return {};
  }
  void process_batch(PacketBatch& batch) override { sink_->transmit(batch); }

 private:
  PacketSink* sink_ = nullptr;
};

FULCRUM_REGISTER_ELEMENT(ToOutput);

}  // namespace fulcrum
