// How much of each packet's data an element reads (ElementTraits::reads): what the placement
// model (src/plan/placement_model.hh) charges when the element runs on a core other than the one
// that wrote the packet: each line it reads comes from the other core's cache.
#pragma once

#include <cstdint>

namespace fulcrum {

// In the order of what their reads cost a stage that receives packets from another core.
enum class PacketReads : uint8_t {
  kHeaders,          // the headers at the front of the frame (its first cache line)
  kWholeFrameAhead,  // every byte, asking for a frame's lines kWholeFrameReadAhead packets ahead
  kWholeFrame,       // every byte, each line as it comes to it (ciphers, MACs)
};

inline bool reads_whole_frame(PacketReads r) {
  return r != PacketReads::kHeaders;
}

// What a stage holding elements of both kinds reads, for the model: the costlier.
inline PacketReads costlier_reads(PacketReads a, PacketReads b) {
  return static_cast<uint8_t>(a) > static_cast<uint8_t>(b) ? a : b;
}

// Whether an element reads or writes a packet's private annotation line (PacketAnno, the mbuf's
// private area: flow_id, the user slots; not the first line's fields): bits of
// ElementTraits::anno. The line is apart from the frame: when an element on one core writes it
// and one on another reads it, it crosses between the cores' caches.
inline constexpr uint8_t kAnnoReads = 1;
inline constexpr uint8_t kAnnoWrites = 2;

// An element that reads whole frames ahead asks for a frame's lines this many packets before it
// reads them (IDSMatch's scan), so that the lines of packets written on another core arrive while
// the packets before are worked on. The calibration's scan of a frame's lines does the same
// (plan::measure_frame_lines, RingCost::line_scan_cycles).
inline constexpr uint32_t kWholeFrameReadAhead = 4;

}  // namespace fulcrum
