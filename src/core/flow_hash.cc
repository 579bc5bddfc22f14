#include "core/flow_hash.hh"

#include <rte_hash_crc.h>

#include <cstring>

namespace fulcrum {
namespace {

constexpr uint16_t kEtherIPv4 = 0x0800, kEtherIPv6 = 0x86DD, kEtherVlan = 0x8100;
constexpr uint32_t kEtherHeader = 14, kVlanTag = 4, kMacPair = 12;
constexpr uint8_t kTcp = 6, kUdp = 17, kSctp = 132;
constexpr uint32_t kIPv6Header = 40, kIPv4Min = 20;

uint16_t be16(const uint8_t* b) {
  return static_cast<uint16_t>(b[0] << 8 | b[1]);
}

bool has_ports(uint8_t proto) {
  return proto == kTcp || proto == kUdp || proto == kSctp;
}

}  // namespace

uint32_t flow_hash(Packet* p) {
  const uint32_t h = anno_flow_hash(p);
  return h != 0 ? h : header_flow_hash(p);
}

uint32_t header_flow_hash(Packet* p) {
  return frame_flow_hash(data(p), length(p));
}

uint32_t frame_flow_hash(const uint8_t* b, uint32_t len) {
  // addresses (up to 2 x 16 bytes), protocol, ports
  alignas(8) uint8_t key[2 * 16 + 8] = {};
  uint32_t key_len = 0;
  uint32_t l3 = 0;
  uint16_t type = 0;
  if (len >= kEtherHeader) {
    type = be16(b + kMacPair);
    l3 = kEtherHeader;
    if (type == kEtherVlan && len >= kEtherHeader + kVlanTag) {
      type = be16(b + kEtherHeader + 2);
      l3 += kVlanTag;
    }
  }
  if (type != kEtherIPv4 && type != kEtherIPv6 && len >= kIPv4Min) {
    // No Ethernet header in front (a stage after one was stripped): an IP header whose length
    // field fits the frame.
    const unsigned version = b[0] >> 4;
    if (version == 4 && (b[0] & 0xF) >= 5 && be16(b + 2) <= len) {
      type = kEtherIPv4;
      l3 = 0;
    } else if (version == 6 && len >= kIPv6Header && be16(b + 4) + kIPv6Header <= len) {
      type = kEtherIPv6;
      l3 = 0;
    }
  }
  constexpr uint32_t kIPv4Addrs = 12, kIPv4Proto = 9, kIPv4Frag = 6;
  constexpr uint16_t kFragMask = 0x3FFF;  // MF and the offset
  if (type == kEtherIPv4 && len >= l3 + kIPv4Min) {
    const uint8_t* ip = b + l3;
    std::memcpy(key, ip + kIPv4Addrs, 8);
    key[8] = ip[kIPv4Proto];
    key_len = 16;
    const uint32_t ihl = (ip[0] & 0xF) * 4U;
    if (has_ports(ip[kIPv4Proto]) && (be16(ip + kIPv4Frag) & kFragMask) == 0 && len >= l3 + ihl + 4)
      std::memcpy(key + 9, ip + ihl, 4);
  } else if (type == kEtherIPv6 && len >= l3 + kIPv6Header) {
    const uint8_t* ip = b + l3;
    constexpr uint32_t kIPv6Addrs = 8, kIPv6Next = 6;
    std::memcpy(key, ip + kIPv6Addrs, 32);
    key[32] = ip[kIPv6Next];
    key_len = 40;
    if (has_ports(ip[kIPv6Next]) && len >= l3 + kIPv6Header + 4)
      std::memcpy(key + 33, ip + kIPv6Header, 4);
  } else if (len >= kMacPair) {
    std::memcpy(key, b, kMacPair);
    key_len = kMacPair;
  }
  return rte_hash_crc(key, key_len, 0);
}

}  // namespace fulcrum
