// DecIP6HLim — decrements the IPv6 hop limit.
//
// Ports:     input 0: Ethernet frames with a checked IPv6 header at offset 14 (put
//            CheckIP6Header before). output 0: the frame with hop limit - 1 (IPv6 has no header
//            checksum to patch). output 1 (optional): frames whose hop limit is 0 or 1,
//            unchanged (e.g. to an ICMPv6 time-exceeded generator); dropped when output 1 is
//            not connected.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason: "hlim-expired" (hop limit <= 1 and
//            output 1 not connected), "truncated" (frame shorter than 54 bytes).
// Offload:   none.
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>

#include <array>
#include <cstdint>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class DecIP6HLim final : public PacketElement<DecIP6HLim> {
 public:
  static constexpr DropReasons kDropReasons{"hlim-expired", "truncated"};
  static constexpr int kExpiredOutput = 1;
  static constexpr ElementTraits kTraits{"DecIP6HLim", 1, 2, kDropReasons, 1u << kExpiredOutput};
  static constexpr uint32_t kMinFrameLen = RTE_ETHER_HDR_LEN + sizeof(rte_ipv6_hdr);

  Status configure(Args& args) override { return args.finish(); }
  Status initialize(const InitContext&) override {
    expired_to_output_ = output_connected(kExpiredOutput);
    return {};
  }

  Verdict process(Packet* p) {
    if (length(p) < kMinFrameLen) return Verdict::drop(kDropReasons["truncated"]);
    auto* ip = rte_pktmbuf_mtod_offset(p, rte_ipv6_hdr*, RTE_ETHER_HDR_LEN);
    if (ip->hop_limits <= kLastHop)
      return expired_to_output_ ? Verdict::out(kExpiredOutput)
                                : Verdict::drop(kDropReasons["hlim-expired"]);
    --ip->hop_limits;
    return Verdict::out(0);
  }

 private:
  static constexpr uint8_t kLastHop = 1;

  bool expired_to_output_ = false;
};

FULCRUM_REGISTER_ELEMENT(DecIP6HLim);

}  // namespace fulcrum
