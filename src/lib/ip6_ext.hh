// Walking an IPv6 packet's extension headers (RFC 8200 §4) to the upper-layer header: what the
// IPsec elements need (IPsecPolicy's protocol and ports, IPsecESPDecap's ESP header behind
// options). Hop-by-hop options (first only), routing, destination options and the fragment
// header are walked; any other next header (TCP, UDP, ICMPv6, ESP, AH, No Next Header...) ends
// the walk. At most kMaxIp6ExtHeaders are walked.
#pragma once

#include <cstdint>

namespace fulcrum {

inline constexpr uint8_t kIp6HopByHop = 0;
inline constexpr uint8_t kIp6Routing = 43;
inline constexpr uint8_t kIp6Fragment = 44;
inline constexpr uint8_t kIp6DestOptions = 60;
inline constexpr uint32_t kMaxIp6ExtHeaders = 8;

struct Ip6Upper {
  uint8_t proto = 0;            // the first next header that is not an extension header walked
  uint32_t offset = 0;          // where its header starts, from the IPv6 header's first byte
  bool fragment = false;        // a fragment header was walked
  bool later_fragment = false;  // ... with a non-zero offset: no upper-layer header follows
  bool routing_left = false;    // a routing header with segments left (not at its destination)
};

// Walks the IPv6 packet at `ip` whose header and payload (`payload_len` bytes, the header's
// payload length) are in the buffer. False: an extension header runs past the payload, a
// hop-by-hop header is not the first, or there are more than kMaxIp6ExtHeaders. A non-first
// fragment ends the walk at its fragment header's next header.
inline bool walk_ip6(const uint8_t* ip, uint32_t payload_len, Ip6Upper& out) {
  constexpr uint32_t kFixedLen = 40, kNextHeaderOff = 6, kExtUnit = 8, kFragLen = 8;
  constexpr uint32_t kSegmentsLeftOff = 3, kFragFieldOff = 2;
  constexpr uint32_t kFragOffsetMask = 0xFFF8;  // the 13-bit offset above the M flag
  uint8_t next = ip[kNextHeaderOff];
  uint32_t off = kFixedLen;
  const uint32_t end = kFixedLen + payload_len;
  for (uint32_t n = 0;; ++n) {
    if (next != kIp6HopByHop && next != kIp6Routing && next != kIp6Fragment &&
        next != kIp6DestOptions)
      break;
    if (n == kMaxIp6ExtHeaders || (next == kIp6HopByHop && n != 0) || end - off < kExtUnit)
      return false;
    const uint8_t* h = ip + off;
    const uint32_t len = next == kIp6Fragment ? kFragLen : (uint32_t{h[1]} + 1) * kExtUnit;
    if (len > end - off) return false;
    if (next == kIp6Fragment) {
      out.fragment = true;
      const uint32_t field = uint32_t{h[kFragFieldOff]} << 8 | h[kFragFieldOff + 1];
      out.later_fragment = (field & kFragOffsetMask) != 0;
    } else if (next == kIp6Routing && h[kSegmentsLeftOff] != 0) {
      out.routing_left = true;
    }
    next = h[0];
    off += len;
    if (out.later_fragment) break;
  }
  out.proto = next;
  out.offset = off;
  return true;
}

}  // namespace fulcrum
