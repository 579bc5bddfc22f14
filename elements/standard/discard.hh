// Discard — drops every packet.
//
// Ports:     input 0: any packet. No outputs.
// Config:    none.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts the drops under reason "discarded".
// Offload:   none.
#pragma once

#include <array>
#include <string_view>

#include "core/element.hh"

namespace fulcrum {

class Discard final : public PacketElement<Discard> {
 public:
  enum DropReason : int { kDiscarded };
  static constexpr std::array<std::string_view, 1> kDropReasons{"discarded"};
  static constexpr ElementTraits kTraits{"Discard", 1, 0, kDropReasons};

  Status configure(Args& args) override { return args.finish(); }
  Verdict process(Packet*) { return Verdict::drop(kDiscarded); }
};

}  // namespace fulcrum
