// Classifier — sends each packet to the output of the first pattern it matches (Click syntax).
//
// Ports:     input 0: any packet. output i: packets whose first matching pattern is pattern i;
//            one output per pattern.
// Example:   Classifier(12/0800, 12/0806 20/0001, -): IPv4, ARP requests, everything else.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason: "no-match" (no pattern matched).
// Offload:   none.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class Classifier final : public PacketElement<Classifier> {
 public:
  static constexpr DropReasons kDropReasons{"no-match"};
  static constexpr ElementTraits kTraits{"Classifier", 1, kConfiguredOutputs, kDropReasons};

  Status configure(Args& args) override;

  Verdict process(Packet* p) {
    const uint8_t* d = data(p);
    const uint32_t len = length(p);
    uint32_t begin = 0;
    for (int i = 0; i < npatterns_; ++i) {
      const uint32_t end = pattern_end_[i];
      if (matches(d, len, begin, end)) return Verdict::out(i);
      begin = end;
    }
    return Verdict::drop(kDropReasons["no-match"]);
  }

 private:
  // Up to 8 bytes of a clause, compared as one word (value and mask hold the bytes in memory
  // order; mask bytes past `size` are zero).
  struct Chunk {
    uint64_t value;
    uint64_t mask;
    uint16_t offset;
    uint8_t size;

    bool matches(const uint8_t* d, uint32_t len) const {
      if (uint32_t{offset} + size > len) return false;
      uint64_t w = 0;
      if (uint32_t{offset} + sizeof(w) <= len)
        std::memcpy(&w, d + offset, sizeof(w));
      else
        std::memcpy(&w, d + offset, size);
      return (w & mask) == value;
    }
  };

  bool matches(const uint8_t* d, uint32_t len, uint32_t begin, uint32_t end) const {
    for (uint32_t k = begin; k < end; ++k)
      if (!chunks_[k].matches(d, len)) return false;
    return true;
  }

  Status add_pattern(const Args& args, int number, std::string_view pattern);

  std::vector<Chunk> chunks_;                        // every pattern's chunks, in order
  std::array<uint32_t, kMaxOutputs> pattern_end_{};  // pattern i: chunks [end[i-1], end[i])
  int npatterns_ = 0;
};

FULCRUM_REGISTER_ELEMENT(Classifier);

}  // namespace fulcrum
