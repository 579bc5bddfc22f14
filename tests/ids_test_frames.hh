// Frames for the IDS tests: Ethernet + IPv4 or IPv6 (with extension headers) + TCP, UDP or
// another protocol with a given payload, optionally behind VLAN tags.
#pragma once

#include <arpa/inet.h>

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum::testing {

inline constexpr uint8_t kProtoIcmp = 1;
inline constexpr uint8_t kProtoTcp = 6;
inline constexpr uint8_t kProtoUdp = 17;
inline constexpr uint8_t kProtoIcmpv6 = 58;
inline constexpr uint16_t kTpidVlan = 0x8100;  // 802.1Q
inline constexpr uint16_t kTpidQinQ = 0x88A8;  // 802.1ad

// The TCP (20-byte header) or UDP header followed by `payload`; for another protocol, the
// payload alone.
inline std::vector<uint8_t> l4_segment(uint8_t proto, uint16_t sport, uint16_t dport,
                                       const std::string& payload) {
  constexpr uint32_t kTcp = 20, kUdp = 8;
  const uint32_t l4 = proto == kProtoTcp ? kTcp : proto == kProtoUdp ? kUdp : 0;
  std::vector<uint8_t> h(l4 + payload.size(), 0);
  if (l4 != 0) {
    h[0] = static_cast<uint8_t>(sport >> 8), h[1] = static_cast<uint8_t>(sport);
    h[2] = static_cast<uint8_t>(dport >> 8), h[3] = static_cast<uint8_t>(dport);
  }
  if (proto == kProtoTcp) {
    h[12] = 0x50;  // data offset 5 words
  } else if (proto == kProtoUdp) {
    h[4] = static_cast<uint8_t>(h.size() >> 8), h[5] = static_cast<uint8_t>(h.size());
  }
  for (size_t k = 0; k < payload.size(); ++k) h[l4 + k] = static_cast<uint8_t>(payload[k]);
  return h;
}

// An Ethernet + IPv4 (20-byte header) + TCP (20-byte header) or UDP frame carrying `payload`.
inline std::vector<uint8_t> l4_frame(uint8_t proto, uint32_t src, uint32_t dst, uint16_t sport,
                                     uint16_t dport, const std::string& payload) {
  constexpr uint32_t kEth = 14, kIp = 20;
  const std::vector<uint8_t> l4 = l4_segment(proto, sport, dport, payload);
  const uint32_t total = kIp + static_cast<uint32_t>(l4.size());
  std::vector<uint8_t> f(kEth + total, 0);
  f[0] = 0x02, f[5] = 0x02, f[6] = 0x02, f[11] = 0x01;
  f[12] = 0x08, f[13] = 0x00;
  uint8_t* ip = &f[kEth];
  ip[0] = 0x45;
  ip[2] = static_cast<uint8_t>(total >> 8), ip[3] = static_cast<uint8_t>(total);
  ip[8] = 64;
  ip[9] = proto;
  for (int k = 0; k < 4; ++k) {
    ip[12 + k] = static_cast<uint8_t>(src >> (24 - 8 * k));
    ip[16 + k] = static_cast<uint8_t>(dst >> (24 - 8 * k));
  }
  for (size_t k = 0; k < l4.size(); ++k) ip[kIp + k] = l4[k];
  return f;
}

using Ip6 = std::array<uint8_t, 16>;

inline Ip6 ip6(const char* text) {
  Ip6 a{};
  inet_pton(AF_INET6, text, a.data());
  return a;
}

// An IPv6 extension header: hop-by-hop (0), routing (43), destination options (60) are 8 bytes
// (a PadN option; routing type 4 with no segments left), fragment (44) carries `frag` (offset
// in 8-byte units << 3 | M flag), AH (51) is 12 bytes.
struct Ext6 {
  uint8_t type;
  uint16_t frag = 0;
};
inline constexpr uint8_t kExtHopByHop = 0;
inline constexpr uint8_t kExtRouting = 43;
inline constexpr uint8_t kExtFragment = 44;
inline constexpr uint8_t kExtAh = 51;
inline constexpr uint8_t kExtDestOptions = 60;
inline constexpr uint8_t kNoNextHeader = 59;

// The bytes of extension headers `exts` followed by `upper` (next header `proto`).
inline std::vector<uint8_t> ext_chain(const std::vector<Ext6>& exts, uint8_t proto,
                                      const std::vector<uint8_t>& upper) {
  std::vector<uint8_t> out;
  for (size_t i = 0; i < exts.size(); ++i) {
    const uint8_t next = i + 1 < exts.size() ? exts[i + 1].type : proto;
    const Ext6& e = exts[i];
    if (e.type == kExtAh) {
      out.insert(out.end(), {next, 1, 0, 0, 0, 0, 0, 1, 0, 0, 0, 7});  // (1 + 2) * 4 bytes
    } else if (e.type == kExtFragment) {
      out.insert(out.end(), {next, 0, static_cast<uint8_t>(e.frag >> 8),
                             static_cast<uint8_t>(e.frag), 0, 0, 0, 42});
    } else if (e.type == kExtRouting) {
      out.insert(out.end(), {next, 0, 4, 0, 0, 0, 0, 0});
    } else {
      out.insert(out.end(), {next, 0, 1, 4, 0, 0, 0, 0});  // PadN over the 4 bytes left
    }
  }
  out.insert(out.end(), upper.begin(), upper.end());
  return out;
}

// An Ethernet + IPv6 frame: extension headers `exts`, then `proto` with `upper` (the IPv6
// payload after the extension headers; l4_segment builds TCP and UDP ones).
inline std::vector<uint8_t> ipv6_frame(const Ip6& src, const Ip6& dst,
                                       const std::vector<Ext6>& exts, uint8_t proto,
                                       const std::vector<uint8_t>& upper) {
  constexpr uint32_t kEth = 14, kIp6 = 40;
  const std::vector<uint8_t> payload = ext_chain(exts, proto, upper);
  std::vector<uint8_t> f(kEth + kIp6 + payload.size(), 0);
  f[0] = 0x02, f[5] = 0x02, f[6] = 0x02, f[11] = 0x01;
  f[12] = 0x86, f[13] = 0xDD;
  uint8_t* ip = &f[kEth];
  ip[0] = 0x60;
  ip[4] = static_cast<uint8_t>(payload.size() >> 8), ip[5] = static_cast<uint8_t>(payload.size());
  ip[6] = exts.empty() ? proto : exts[0].type;
  ip[7] = 64;
  for (size_t k = 0; k < 16; ++k) ip[8 + k] = src[k], ip[24 + k] = dst[k];
  for (size_t k = 0; k < payload.size(); ++k) ip[kIp6 + k] = payload[k];
  return f;
}

// The IPv6 twin of an l4_frame (or any IPv4 frame with a 20-byte header): the same protocol and
// IP payload, from `src` to `dst`, behind extension headers `exts`.
inline std::vector<uint8_t> as_ipv6(const std::vector<uint8_t>& v4, const Ip6& src, const Ip6& dst,
                                    const std::vector<Ext6>& exts) {
  constexpr size_t kEth = 14, kIp = 20, kProtoOff = 9;
  return ipv6_frame(src, dst, exts, v4[kEth + kProtoOff],
                    std::vector<uint8_t>(v4.begin() + kEth + kIp, v4.end()));
}

// `frame` with VLAN tags inserted after the MAC addresses: tpids[0] outermost, VLAN ids 1, 2...
inline std::vector<uint8_t> vlan_tagged(std::vector<uint8_t> frame,
                                        const std::vector<uint16_t>& tpids) {
  constexpr size_t kTypeOff = 12;
  std::vector<uint8_t> tags;
  for (size_t i = 0; i < tpids.size(); ++i)
    tags.insert(tags.end(), {static_cast<uint8_t>(tpids[i] >> 8), static_cast<uint8_t>(tpids[i]), 0,
                             static_cast<uint8_t>(i + 1)});
  frame.insert(frame.begin() + kTypeOff, tags.begin(), tags.end());
  return frame;
}

}  // namespace fulcrum::testing
