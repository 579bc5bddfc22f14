// CheckIP6Header — drops Ethernet frames that do not carry a valid IPv6 header.
//
// Ports:     input 0: Ethernet frames (IPv6 header at offset 14). output 0: frames that pass
//            every check, unchanged (Ethernet padding past the payload length stays).
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason, checked in this order: "not-ipv6"
//            (ethertype not 0x86DD, VLAN-tagged frames included), "truncated" (frame shorter
//            than 54 bytes, or than 14 so that it has no ethertype), "bad-version" (version
//            field not 6), "bad-length" (payload length past the end of the frame),
//            "bad-source" (source :: or multicast ff00::/8).
// Offload:   none.
#pragma once

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class CheckIP6Header final : public PacketElement<CheckIP6Header> {
 public:
  static constexpr DropReasons kDropReasons{"truncated", "not-ipv6", "bad-version", "bad-length",
                                            "bad-source"};
  static constexpr ElementTraits kTraits{"CheckIP6Header", 1, 1, kDropReasons};

  static constexpr uint32_t kMinFrameLen = RTE_ETHER_HDR_LEN + sizeof(rte_ipv6_hdr);

  Status configure(Args& args) override { return args.finish(); }

  Verdict process(Packet* p) {
    const uint32_t len = length(p);
    if (len < RTE_ETHER_HDR_LEN) return Verdict::drop(kDropReasons["truncated"]);
    const auto* eth = rte_pktmbuf_mtod(p, const rte_ether_hdr*);
    if (eth->ether_type != kIpv6EtherType) return Verdict::drop(kDropReasons["not-ipv6"]);
    if (len < kMinFrameLen) return Verdict::drop(kDropReasons["truncated"]);
    const auto* ip = rte_pktmbuf_mtod_offset(p, const rte_ipv6_hdr*, RTE_ETHER_HDR_LEN);
    if ((rte_be_to_cpu_32(ip->vtc_flow) >> kVersionShift) != kIpv6Version)
      return Verdict::drop(kDropReasons["bad-version"]);
    if (rte_be_to_cpu_16(ip->payload_len) > len - kMinFrameLen)
      return Verdict::drop(kDropReasons["bad-length"]);
    if (bad_source(ip->src_addr)) return Verdict::drop(kDropReasons["bad-source"]);
    return Verdict::out(0);
  }

 private:
  static constexpr rte_be16_t kIpv6EtherType = RTE_BE16(RTE_ETHER_TYPE_IPV6);
  static constexpr uint32_t kIpv6Version = 6;
  static constexpr uint32_t kVersionShift = 28;  // version: top 4 bits of vtc_flow
  static constexpr uint8_t kMulticastFirstByte = 0xFF;

  static bool bad_source(const uint8_t* src) {
    if (src[0] == kMulticastFirstByte) return true;
    uint64_t words[2];
    std::memcpy(words, src, sizeof words);
    return (words[0] | words[1]) == 0;
  }
};

FULCRUM_REGISTER_ELEMENT(CheckIP6Header);

}  // namespace fulcrum
