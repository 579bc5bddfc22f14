// Frames for the IDS tests: Ethernet + IPv4 + TCP or UDP with a given payload.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum::testing {

inline constexpr uint8_t kProtoTcp = 6;
inline constexpr uint8_t kProtoUdp = 17;

// An Ethernet + IPv4 (20-byte header) + TCP (20-byte header) or UDP frame carrying `payload`.
inline std::vector<uint8_t> l4_frame(uint8_t proto, uint32_t src, uint32_t dst, uint16_t sport,
                                     uint16_t dport, const std::string& payload) {
  constexpr uint32_t kEth = 14, kIp = 20, kTcp = 20, kUdp = 8;
  const uint32_t l4 = proto == kProtoTcp ? kTcp : kUdp;
  const uint32_t total = kIp + l4 + static_cast<uint32_t>(payload.size());
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
  uint8_t* h = ip + kIp;
  h[0] = static_cast<uint8_t>(sport >> 8), h[1] = static_cast<uint8_t>(sport);
  h[2] = static_cast<uint8_t>(dport >> 8), h[3] = static_cast<uint8_t>(dport);
  if (proto == kProtoTcp) {
    h[12] = 0x50;  // data offset 5 words
  } else {
    const uint32_t ulen = kUdp + static_cast<uint32_t>(payload.size());
    h[4] = static_cast<uint8_t>(ulen >> 8), h[5] = static_cast<uint8_t>(ulen);
  }
  for (size_t k = 0; k < payload.size(); ++k) h[l4 + k] = static_cast<uint8_t>(payload[k]);
  return f;
}

}  // namespace fulcrum::testing
