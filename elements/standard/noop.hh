// NoOp — passes every packet to its output unchanged.
//
// Ports:     input 0: any packet. output 0: the same packet.
// Uses:      nothing.  Sets: nothing.
// Counters:  none (the graph counts packets per port).
// Offload:   none.
#pragma once

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class NoOp final : public PacketElement<NoOp> {
 public:
  static constexpr ElementTraits kTraits{"NoOp", 1, 1, {}};

  Status configure(Args& args) override { return args.finish(); }
  Verdict process(Packet*) { return Verdict::out(0); }
};

FULCRUM_REGISTER_ELEMENT(NoOp);

}  // namespace fulcrum
