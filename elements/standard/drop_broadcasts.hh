// DropBroadcasts — drops Ethernet frames sent to the broadcast address.
//
// Ports:     input 0: Ethernet frames. output 0: frames whose destination is not
//            ff:ff:ff:ff:ff:ff.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason: "broadcast" (destination
//            ff:ff:ff:ff:ff:ff), "truncated" (frame shorter than the 14-byte Ethernet header).
// Offload:   none.
#pragma once

#include <rte_ether.h>

#include <array>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class DropBroadcasts final : public PacketElement<DropBroadcasts> {
 public:
  static constexpr DropReasons kDropReasons{"broadcast", "truncated"};
  static constexpr ElementTraits kTraits{"DropBroadcasts", 1, 1, kDropReasons};

  Status configure(Args& args) override { return args.finish(); }

  Verdict process(Packet* p) {
    if (length(p) < RTE_ETHER_HDR_LEN) return Verdict::drop(kDropReasons["truncated"]);
    const auto* eth = rte_pktmbuf_mtod(p, const rte_ether_hdr*);
    if (rte_is_broadcast_ether_addr(&eth->dst_addr))
      return Verdict::drop(kDropReasons["broadcast"]);
    return Verdict::out(0);
  }
};

FULCRUM_REGISTER_ELEMENT(DropBroadcasts);

}  // namespace fulcrum
