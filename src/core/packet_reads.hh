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

// An element that reads whole frames asks for a frame's lines this many packets before it reads
// them (IDSMatch's scan), so that the lines of packets written on another core arrive while the
// packets before are worked on. The calibration's scan of a frame's lines does the same
// (plan::measure_frame_lines, RingCost::line_scan_cycles).
inline constexpr uint32_t kWholeFrameReadAhead = 4;

}  // namespace fulcrum
