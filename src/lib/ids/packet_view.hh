// PacketView: the parts of an IP packet that IDS rules look at, and the parser that fills it from
// an Ethernet II frame: IPv4 or IPv6, untagged or behind up to kMaxVlanTags VLAN tags (802.1Q,
// 802.1ad QinQ). The matching domain of a rule (docs/ids.md) is a suffix of the IP payload: the
// L4 payload (after the TCP or UDP header) for tcp and udp rules, the whole IP payload for ip
// and icmp rules. The IP payload ends at the IPv4 total length or the IPv6 payload length
// (Ethernet padding is not inspected); for IPv6 it starts after the extension headers.
#pragma once

#include <rte_byteorder.h>

#include <cstdint>
#include <cstring>

#include "lib/ids/rule.hh"

namespace fulcrum::ids {

inline constexpr uint32_t kIpv6SrcOff = 8;
inline constexpr uint32_t kIpv6DstOff = 24;

struct PacketView {
  const uint8_t* ip_payload = nullptr;
  uint32_t ip_payload_len = 0;
  uint32_t l4_hdr_len = 0;  // TCP/UDP header length; 0 for other protocols and fragments
  uint32_t src = 0;         // IPv4, host byte order; 0 for IPv6
  uint32_t dst = 0;
  const uint8_t* ip6 = nullptr;  // IPv6: the fixed header (in the frame); nullptr: IPv4
  uint16_t sport = 0;
  uint16_t dport = 0;
  uint8_t proto = 0;      // IP protocol number; IPv6: the next header after the extension headers
  bool fragment = false;  // a non-first fragment: no L4 header, only ip rules apply

  bool ipv6() const { return ip6 != nullptr; }
  Ip6Addr src6() const { return load_ip6(ip6 + kIpv6SrcOff); }
  Ip6Addr dst6() const { return load_ip6(ip6 + kIpv6DstOff); }

  static Ip6Addr load_ip6(const uint8_t* p) {
    constexpr size_t kHalf = 8;
    uint64_t hi, lo;
    std::memcpy(&hi, p, kHalf);
    std::memcpy(&lo, p + kHalf, kHalf);
    return {rte_be_to_cpu_64(hi), rte_be_to_cpu_64(lo)};
  }
};

// kNotIp: another EtherType (after the VLAN tags) or an IP version that is not the EtherType's;
// kTruncated: the frame ends inside a VLAN tag or the IP header, or before the IP total / payload
// length, or the IPv4 IHL or total length is impossible; kBadL4Header: a TCP or UDP packet (not
// a non-first fragment) whose header does not fit in the IP payload, or a TCP data offset < 5;
// kBadUdpLength: a UDP datagram whose length field is not the IP payload length (or, for a first
// fragment, is shorter than it); kBadIpv6Ext: an IPv6 extension header that does not fit in the
// payload, or a hop-by-hop header that is not the first; kTooManyIpv6Ext: more than
// kMaxIpv6ExtHeaders extension headers; kTooManyVlanTags: more than kMaxVlanTags VLAN tags.
enum class ParseResult : uint8_t {
  kOk,
  kNotIp,
  kTruncated,
  kBadL4Header,
  kBadUdpLength,
  kBadIpv6Ext,
  kTooManyIpv6Ext,
  kTooManyVlanTags,
};

inline constexpr uint32_t kEtherHdrLen = 14;
inline constexpr uint32_t kVlanTagLen = 4;
inline constexpr uint32_t kMaxVlanTags = 3;
inline constexpr uint32_t kIpv4MinHdrLen = 20;
inline constexpr uint32_t kIpv6HdrLen = 40;
inline constexpr uint32_t kMaxIpv6ExtHeaders = 8;
inline constexpr uint32_t kUdpHdrLen = 8;
inline constexpr uint32_t kTcpMinHdrLen = 20;
inline constexpr uint16_t kEtherTypeIpv4 = 0x0800;
inline constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
inline constexpr uint16_t kEtherTypeVlan = 0x8100;     // 802.1Q
inline constexpr uint16_t kEtherTypeQinQ = 0x88A8;     // 802.1ad service tag
inline constexpr uint16_t kEtherTypeQinQOld = 0x9100;  // pre-802.1ad QinQ
inline constexpr uint8_t kIpv6HopByHop = 0;
inline constexpr uint8_t kIpv6Routing = 43;
inline constexpr uint8_t kIpv6Fragment = 44;
inline constexpr uint8_t kIpv6Ah = 51;
inline constexpr uint8_t kIpv6NoNextHeader = 59;
inline constexpr uint8_t kIpv6DestOptions = 60;

namespace detail {

inline uint32_t load_be16(const uint8_t* p) {
  return (uint32_t{p[0]} << 8) | p[1];
}

// The ports and L4 header length of a TCP or UDP packet whose IP payload, protocol and fragment
// flag are set; `first_fragment`: more fragments follow (a UDP length may exceed the payload).
// Suricata marks a UDP length other than the payload's invalid and does not inspect it: bytes
// past a shorter length are not the datagram's, and a longer one promises bytes that are not
// there.
inline ParseResult parse_l4(PacketView& v, bool first_fragment) {
  constexpr uint32_t kWordBytes = 4, kDataOffShift = 4, kTcpDataOffByte = 12, kUdpLenOff = 4;
  v.l4_hdr_len = 0;
  v.sport = v.dport = 0;
  if (v.fragment || (v.proto != kIpProtoTcp && v.proto != kIpProtoUdp)) return ParseResult::kOk;
  const uint8_t* l4 = v.ip_payload;
  if (v.proto == kIpProtoUdp) {
    if (v.ip_payload_len < kUdpHdrLen) return ParseResult::kBadL4Header;
    const uint32_t udp_len = load_be16(l4 + kUdpLenOff);
    if (udp_len < v.ip_payload_len || (udp_len > v.ip_payload_len && !first_fragment))
      return ParseResult::kBadUdpLength;
    v.l4_hdr_len = kUdpHdrLen;
  } else {
    if (v.ip_payload_len < kTcpMinHdrLen) return ParseResult::kBadL4Header;
    const uint32_t thl = (l4[kTcpDataOffByte] >> kDataOffShift) * kWordBytes;
    if (thl < kTcpMinHdrLen || thl > v.ip_payload_len) return ParseResult::kBadL4Header;
    v.l4_hdr_len = thl;
  }
  v.sport = static_cast<uint16_t>(load_be16(l4));
  v.dport = static_cast<uint16_t>(load_be16(l4 + 2));
  return ParseResult::kOk;
}

// An IPv4 packet at `ip` with `avail` bytes to the end of the frame.
inline ParseResult parse_ipv4(const uint8_t* ip, uint32_t avail, PacketView& v) {
  constexpr uint32_t kIhlMask = 0x0F, kVersionShift = 4, kIpv4 = 4, kWordBytes = 4;
  constexpr uint32_t kTotalLenOff = 2, kFragOff = 6, kProtoOff = 9, kSrcOff = 12, kDstOff = 16;
  constexpr uint32_t kFragOffsetMask = 0x1FFF, kMoreFragments = 0x2000;
  if (avail < kIpv4MinHdrLen) return ParseResult::kTruncated;
  if ((ip[0] >> kVersionShift) != kIpv4) return ParseResult::kNotIp;
  const uint32_t hlen = (ip[0] & kIhlMask) * kWordBytes;
  const uint32_t total = load_be16(ip + kTotalLenOff);
  if (hlen < kIpv4MinHdrLen || total < hlen || total > avail) return ParseResult::kTruncated;
  uint32_t a, b;
  std::memcpy(&a, ip + kSrcOff, 4);
  std::memcpy(&b, ip + kDstOff, 4);
  v.src = rte_be_to_cpu_32(a);
  v.dst = rte_be_to_cpu_32(b);
  v.ip6 = nullptr;
  v.proto = ip[kProtoOff];
  const uint32_t frag = load_be16(ip + kFragOff);
  v.fragment = (frag & kFragOffsetMask) != 0;
  v.ip_payload = ip + hlen;
  v.ip_payload_len = total - hlen;
  // A first fragment (more fragments follow) carries only part of a longer datagram.
  return parse_l4(v, (frag & kMoreFragments) != 0);
}

// An IPv6 packet at `ip` with `avail` bytes to the end of the frame: the extension headers
// (hop-by-hop, routing, fragment, destination options, AH) are walked to the upper-layer header;
// a non-first fragment ends the walk (its next header names the protocol, the rest is data), and
// No Next Header leaves an empty payload.
inline ParseResult parse_ipv6(const uint8_t* ip, uint32_t avail, PacketView& v) {
  constexpr uint32_t kVersionShift = 4, kIpv6 = 6, kPayloadLenOff = 4, kNextHeaderOff = 6;
  constexpr uint32_t kExtMinLen = 8, kExtUnit = 8, kAhUnit = 4, kAhExtraUnits = 2;
  constexpr uint32_t kFragOffsetMask = 0xFFF8, kMoreFragments = 0x0001, kFragFieldOff = 2;
  if (avail < kIpv6HdrLen) return ParseResult::kTruncated;
  if ((ip[0] >> kVersionShift) != kIpv6) return ParseResult::kNotIp;
  uint32_t left = load_be16(ip + kPayloadLenOff);
  if (left > avail - kIpv6HdrLen) return ParseResult::kTruncated;
  v.ip6 = ip;
  v.src = v.dst = 0;
  v.fragment = false;
  bool first_fragment = false;
  uint8_t next = ip[kNextHeaderOff];
  const uint8_t* p = ip + kIpv6HdrLen;
  for (uint32_t n = 0;; ++n) {
    if (next != kIpv6HopByHop && next != kIpv6Routing && next != kIpv6Fragment &&
        next != kIpv6DestOptions && next != kIpv6Ah)
      break;
    if (n == kMaxIpv6ExtHeaders) return ParseResult::kTooManyIpv6Ext;
    if ((next == kIpv6HopByHop && n != 0) || left < kExtMinLen) return ParseResult::kBadIpv6Ext;
    uint32_t hlen = (p[1] + 1) * kExtUnit;
    if (next == kIpv6Fragment) {
      hlen = kExtMinLen;
      const uint32_t field = load_be16(p + kFragFieldOff);
      v.fragment = (field & kFragOffsetMask) != 0;
      first_fragment = !v.fragment && (field & kMoreFragments) != 0;
    } else if (next == kIpv6Ah) {
      hlen = (p[1] + kAhExtraUnits) * kAhUnit;
    }
    if (hlen > left) return ParseResult::kBadIpv6Ext;
    next = p[0];
    p += hlen;
    left -= hlen;
    if (v.fragment) break;
  }
  v.proto = next;
  v.ip_payload = p;
  v.ip_payload_len = next == kIpv6NoNextHeader && !v.fragment ? 0 : left;
  return parse_l4(v, first_fragment);
}

// Frames that are not untagged IPv4: VLAN tags first, then IPv4 or IPv6.
inline ParseResult parse_tagged_or_ipv6(const uint8_t* f, uint32_t len, uint32_t type,
                                        PacketView& v) {
  constexpr uint32_t kInnerTypeOff = 2;
  uint32_t off = kEtherHdrLen;
  for (uint32_t tags = 0;
       type == kEtherTypeVlan || type == kEtherTypeQinQ || type == kEtherTypeQinQOld; ++tags) {
    if (tags == kMaxVlanTags) return ParseResult::kTooManyVlanTags;
    if (len < off + kVlanTagLen) return ParseResult::kTruncated;
    type = load_be16(f + off + kInnerTypeOff);
    off += kVlanTagLen;
  }
  if (type == kEtherTypeIpv4) return parse_ipv4(f + off, len - off, v);
  if (type == kEtherTypeIpv6) return parse_ipv6(f + off, len - off, v);
  return ParseResult::kNotIp;
}

}  // namespace detail

// Parses an Ethernet II frame (see ParseResult for what is refused). Untagged IPv4 is the fast
// path: one EtherType test more than an IPv4-only parser.
inline ParseResult parse_packet(const uint8_t* f, uint32_t len, PacketView& v) {
  constexpr uint32_t kEtherTypeOff = 12;
  if (len < kEtherHdrLen) return ParseResult::kTruncated;
  const uint32_t type = detail::load_be16(f + kEtherTypeOff);
  if (type == kEtherTypeIpv4) [[likely]]
    return detail::parse_ipv4(f + kEtherHdrLen, len - kEtherHdrLen, v);
  return detail::parse_tagged_or_ipv6(f, len, type, v);
}

}  // namespace fulcrum::ids
