// How much of each packet's data an element reads (ElementTraits::reads): what the placement
// model (src/plan/placement_model.hh) charges when the element runs on a core other than the one
// that wrote the packet: each line it reads comes from the other core's cache.
#pragma once

#include <cstdint>

namespace fulcrum {

enum class PacketReads : uint8_t {
  kHeaders,     // the headers at the front of the frame (its first cache line)
  kWholeFrame,  // every byte of the frame (payload scanners, ciphers, MACs)
};

}  // namespace fulcrum
