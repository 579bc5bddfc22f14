// Locating the L4 payload of an Ethernet + IPv4 frame: the bytes MD5Digest hashes and
// RedundancyElim chunks.
//
// The payload is what follows the TCP header (data offset honoured) or the UDP header; for
// other protocols, and for IPv4 fragments other than the first (they carry no L4 header), it
// is everything after the IPv4 header. It ends where the IPv4 total length says, so Ethernet
// padding is never part of it. Only the first mbuf segment is read.
#pragma once

#include <cstdint>

namespace fulcrum::re {

enum class PayloadError : uint8_t {
  kOk,
  kNotIpv4,    // EtherType not 0x0800 or IP version not 4
  kBadHeader,  // IHL < 5, total length below the header length, TCP data offset < 5
  kTruncated,  // a header, or the total length, past the end of the frame / IP packet
};

struct Payload {
  uint32_t offset;  // from the start of the frame
  uint32_t len;
};

inline constexpr uint32_t kEtherHdrLen = 14;
inline constexpr uint32_t kIpv4MinHdrLen = 20;
inline constexpr uint32_t kUdpHdrLen = 8;
inline constexpr uint32_t kTcpMinHdrLen = 20;
inline constexpr uint8_t kProtoTcp = 6;
inline constexpr uint8_t kProtoUdp = 17;

// Where the payload of `frame` (`len` bytes) is, or why there is none.
inline PayloadError find_payload(const uint8_t* frame, uint32_t len, Payload& out) {
  constexpr uint32_t kEtherTypeOffset = 12;
  constexpr uint16_t kEtherTypeIpv4 = 0x0800;
  constexpr uint8_t kIpv4Version = 4;
  constexpr uint32_t kIhlUnit = 4;
  constexpr uint32_t kTotalLenOffset = 2;
  constexpr uint32_t kFragOffset = 6;
  constexpr uint16_t kFragOffsetMask = 0x1FFF;
  constexpr uint32_t kProtoOffset = 9;
  constexpr uint32_t kTcpDataOffset = 12;
  if (len < kEtherHdrLen) return PayloadError::kTruncated;
  const uint16_t ethertype =
      static_cast<uint16_t>(frame[kEtherTypeOffset] << 8 | frame[kEtherTypeOffset + 1]);
  if (ethertype != kEtherTypeIpv4) return PayloadError::kNotIpv4;
  if (len < kEtherHdrLen + kIpv4MinHdrLen) return PayloadError::kTruncated;
  const uint8_t* ip = frame + kEtherHdrLen;
  if ((ip[0] >> 4) != kIpv4Version) return PayloadError::kNotIpv4;
  const uint32_t hlen = (ip[0] & 0x0F) * kIhlUnit;
  const uint32_t total = uint32_t{ip[kTotalLenOffset]} << 8 | ip[kTotalLenOffset + 1];
  if (hlen < kIpv4MinHdrLen || total < hlen) return PayloadError::kBadHeader;
  if (kEtherHdrLen + total > len) return PayloadError::kTruncated;
  const uint16_t frag = static_cast<uint16_t>(ip[kFragOffset] << 8 | ip[kFragOffset + 1]);
  uint32_t l4 = 0;
  if ((frag & kFragOffsetMask) == 0) {
    if (ip[kProtoOffset] == kProtoUdp) {
      l4 = kUdpHdrLen;
    } else if (ip[kProtoOffset] == kProtoTcp) {
      if (hlen + kTcpDataOffset >= total) return PayloadError::kTruncated;
      l4 = (ip[hlen + kTcpDataOffset] >> 4) * kIhlUnit;
      if (l4 < kTcpMinHdrLen) return PayloadError::kBadHeader;
    }
  }
  if (hlen + l4 > total) return PayloadError::kTruncated;
  out.offset = kEtherHdrLen + hlen + l4;
  out.len = total - hlen - l4;
  return PayloadError::kOk;
}

}  // namespace fulcrum::re
