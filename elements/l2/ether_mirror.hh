// EtherMirror — swaps the source and destination Ethernet addresses (echo).
//
// Ports:     input 0: Ethernet frames. output 0: the frame with its MAC addresses swapped.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason: "truncated" (frame shorter than 14
//            bytes).
// Offload:   none.
#pragma once

#include <rte_ether.h>

#include <array>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class EtherMirror final : public PacketElement<EtherMirror> {
 public:
  static constexpr DropReasons kDropReasons{"truncated"};
  static constexpr ElementTraits kTraits{"EtherMirror", 1, 1, kDropReasons};

  Status configure(Args& args) override { return args.finish(); }

  Verdict process(Packet* p) {
    if (length(p) < RTE_ETHER_HDR_LEN) return Verdict::drop(kDropReasons["truncated"]);
    swap_addrs(rte_pktmbuf_mtod(p, rte_ether_hdr*));
    return Verdict::out(0);
  }

  static void swap_addrs(rte_ether_hdr* eth) {
    const rte_ether_addr dst = eth->dst_addr;
    eth->dst_addr = eth->src_addr;
    eth->src_addr = dst;
  }
};

FULCRUM_REGISTER_ELEMENT(EtherMirror);

}  // namespace fulcrum
