// L2Forward — NBA's L2 forwarder: swaps the MAC addresses and picks the output port.
//
// Ports:     input 0: Ethernet frames. output 0: the frame with its MAC addresses swapped and
//            the out_port annotation chosen by METHOD or PORT.
// Uses:      nothing.  Sets: out_port (roundrobin, PORT).
// Counters:  none; the graph counts drops by reason: "truncated" (frame shorter than 14
//            bytes).
// Offload:   none.
#pragma once

#include <rte_ether.h>

#include <array>
#include <cstdint>
#include <string_view>

#include "core/element.hh"
#include "core/location.hh"
#include "core/registry.hh"
#include "elements/l2/ether_mirror.hh"

namespace fulcrum {

class L2Forward final : public PacketElement<L2Forward> {
 public:
  static constexpr DropReasons kDropReasons{"truncated"};
  static constexpr ElementTraits kTraits{"L2Forward", 1, 1, kDropReasons};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;

  Verdict process(Packet* p) {
    if (length(p) < RTE_ETHER_HDR_LEN) return Verdict::drop(kDropReasons["truncated"]);
    EtherMirror::swap_addrs(rte_pktmbuf_mtod(p, rte_ether_hdr*));
    switch (method_) {
      case Method::kEcho:
        break;
      case Method::kRoundRobin:
        set_out_port(p, next_port_);
        next_port_ = next_port_ + 1 == nports_ ? 0 : next_port_ + 1;
        break;
      case Method::kFixed:
        set_out_port(p, next_port_);
        break;
    }
    return Verdict::out(0);
  }

 private:
  enum class Method : uint8_t { kEcho, kRoundRobin, kFixed };

  Method method_ = Method::kEcho;
  uint16_t next_port_ = 0;  // roundrobin: the next port; PORT: the port
  uint16_t nports_ = 0;
  SourceLoc loc_;
};

FULCRUM_REGISTER_ELEMENT(L2Forward);

}  // namespace fulcrum
