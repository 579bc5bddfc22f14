// Discard — drops every packet.
//
// Ports:     input 0: any packet. No outputs.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts the drops under reason "discarded".
// Offload:   none.
#pragma once

#include <array>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class Discard final : public PacketElement<Discard> {
 public:
  static constexpr DropReasons kDropReasons{"discarded"};
  static constexpr ElementTraits kTraits{"Discard", 1, 0, kDropReasons};

  Status configure(Args& args) override { return args.finish(); }
  Verdict process(Packet*) { return Verdict::drop(kDropReasons["discarded"]); }
};

FULCRUM_REGISTER_ELEMENT(Discard);

}  // namespace fulcrum
