// RandomSplit — sends a given fraction of packets to output 1, the rest to output 0.
//
// Ports:     input 0: any packet. output 0: the majority path. output 1: a pseudo-random
//            FRACTION of the packets.
// Uses:      nothing.  Sets: nothing.
// Counters:  none (the graph counts packets per output).
// Offload:   none.
// Used to measure the cost of branches (NBA Fig. 10): the split is independent of the packet.
#pragma once

#include <cstdint>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class RandomSplit final : public PacketElement<RandomSplit> {
 public:
  static constexpr ElementTraits kTraits{"RandomSplit", 1, 2, {}};

  Status configure(Args& args) override;
  Verdict process(Packet*) {
    state_ ^= state_ << 13;
    state_ ^= state_ >> 7;
    state_ ^= state_ << 17;
    return Verdict::out((state_ >> 32) < threshold_ ? 1 : 0);
  }

 private:
  uint64_t state_ = 1;
  uint64_t threshold_ = 0;  // out of 2^32
};

FULCRUM_REGISTER_ELEMENT(RandomSplit);

}  // namespace fulcrum
