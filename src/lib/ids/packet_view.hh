// PacketView: the parts of an Ethernet + IPv4 frame that IDS rules look at, and the parser that
// fills it. The matching domain of a rule (docs/ids.md) is a suffix of the IP payload: the L4
// payload (after the TCP or UDP header) for tcp and udp rules, the whole IP payload for ip and
// icmp rules. The IP payload ends at the IP total length (Ethernet padding is not inspected).
#pragma once

#include <rte_byteorder.h>

#include <cstdint>
#include <cstring>

#include "lib/ids/rule.hh"

namespace fulcrum::ids {

struct PacketView {
  const uint8_t* ip_payload = nullptr;
  uint32_t ip_payload_len = 0;
  uint32_t l4_hdr_len = 0;  // TCP/UDP header length; 0 for other protocols and fragments
  uint32_t src = 0;         // host byte order
  uint32_t dst = 0;
  uint16_t sport = 0;
  uint16_t dport = 0;
  uint8_t proto = 0;      // IP protocol number
  bool fragment = false;  // a non-first fragment: no L4 header, only ip rules apply
};

enum class ParseResult : uint8_t { kOk, kNotIpv4, kTruncated, kBadL4Header, kBadUdpLength };

inline constexpr uint32_t kEtherHdrLen = 14;
inline constexpr uint32_t kIpv4MinHdrLen = 20;
inline constexpr uint32_t kUdpHdrLen = 8;
inline constexpr uint32_t kTcpMinHdrLen = 20;
inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;

// Parses an Ethernet II frame carrying IPv4 (no VLAN tags). kNotIpv4: another EtherType or IP
// version; kTruncated: the frame ends inside the Ethernet or IPv4 header, or before the IP total
// length, or the IHL or total length is impossible; kBadL4Header: a TCP or UDP packet (not a
// non-first fragment) whose header does not fit in the IP payload, or a TCP data offset < 5;
// kBadUdpLength: a UDP datagram whose length field is not the IP payload length (or, for a
// first fragment, is shorter than it)
// (Suricata marks both cases invalid and does not inspect them: bytes past a shorter UDP length
// are not the datagram's, and a longer one promises bytes that are not there).
inline ParseResult parse_packet(const uint8_t* f, uint32_t len, PacketView& v) {
  constexpr uint32_t kEtherTypeOff = 12, kIhlMask = 0x0F, kVersionShift = 4, kIpv4 = 4;
  constexpr uint32_t kWordBytes = 4, kTotalLenOff = 2, kFragOff = 6, kProtoOff = 9;
  constexpr uint32_t kSrcOff = 12, kDstOff = 16, kTcpDataOffByte = 12;
  constexpr uint16_t kFragOffsetMask = 0x1FFF;
  if (len < kEtherHdrLen) return ParseResult::kTruncated;
  if (((f[kEtherTypeOff] << 8) | f[kEtherTypeOff + 1]) != kEtherTypeIpv4)
    return ParseResult::kNotIpv4;
  if (len < kEtherHdrLen + kIpv4MinHdrLen) return ParseResult::kTruncated;
  const uint8_t* ip = f + kEtherHdrLen;
  if ((ip[0] >> kVersionShift) != kIpv4) return ParseResult::kNotIpv4;
  const uint32_t hlen = (ip[0] & kIhlMask) * kWordBytes;
  const uint32_t total = (uint32_t{ip[kTotalLenOff]} << 8) | ip[kTotalLenOff + 1];
  if (hlen < kIpv4MinHdrLen || total < hlen || total > len - kEtherHdrLen)
    return ParseResult::kTruncated;
  uint32_t a, b;
  std::memcpy(&a, ip + kSrcOff, 4);
  std::memcpy(&b, ip + kDstOff, 4);
  v.src = rte_be_to_cpu_32(a);
  v.dst = rte_be_to_cpu_32(b);
  v.proto = ip[kProtoOff];
  v.fragment = (((ip[kFragOff] << 8) | ip[kFragOff + 1]) & kFragOffsetMask) != 0;
  v.ip_payload = ip + hlen;
  v.ip_payload_len = total - hlen;
  v.l4_hdr_len = 0;
  v.sport = v.dport = 0;
  if (v.fragment || (v.proto != kIpProtoTcp && v.proto != kIpProtoUdp)) return ParseResult::kOk;
  const uint8_t* l4 = v.ip_payload;
  if (v.proto == kIpProtoUdp) {
    if (v.ip_payload_len < kUdpHdrLen) return ParseResult::kBadL4Header;
    constexpr uint32_t kUdpLenOff = 4;
    const uint32_t udp_len = (uint32_t{l4[kUdpLenOff]} << 8) | l4[kUdpLenOff + 1];
    // A first fragment (more fragments follow) carries only part of a longer datagram.
    constexpr uint16_t kMoreFragments = 0x2000;
    const bool first_fragment = ((ip[kFragOff] << 8) & kMoreFragments) != 0;
    if (udp_len < v.ip_payload_len || (udp_len > v.ip_payload_len && !first_fragment))
      return ParseResult::kBadUdpLength;
    v.l4_hdr_len = kUdpHdrLen;
  } else {
    if (v.ip_payload_len < kTcpMinHdrLen) return ParseResult::kBadL4Header;
    const uint32_t thl = (l4[kTcpDataOffByte] >> kVersionShift) * kWordBytes;
    if (thl < kTcpMinHdrLen || thl > v.ip_payload_len) return ParseResult::kBadL4Header;
    v.l4_hdr_len = thl;
  }
  v.sport = static_cast<uint16_t>((l4[0] << 8) | l4[1]);
  v.dport = static_cast<uint16_t>((l4[2] << 8) | l4[3]);
  return ParseResult::kOk;
}

}  // namespace fulcrum::ids
