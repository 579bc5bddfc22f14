// CrossConnect — sends the frames of each port out through its paired port (VPP l2 xconnect).
//
// Ports:     input 0: any packet. output 0: the packet with out_port set to the port paired
//            with its in_port.
// Uses:      in_port.  Sets: out_port.
// Counters:  none; the graph counts drops by reason: "unpaired-port" (the frame came in on a
//            port that is in no pair).
// Offload:   none.
//
// The thesis' IPv4 forwarder moves packets "from one network interface to another"
// (configs/ipv4-forward.click); this is that mapping, with no lookup.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/element.hh"
#include "core/location.hh"
#include "core/registry.hh"

namespace fulcrum {

class CrossConnect final : public PacketElement<CrossConnect> {
 public:
  static constexpr DropReasons kDropReasons{"unpaired-port"};
  static constexpr ElementTraits kTraits{"CrossConnect", 1, 1, kDropReasons};
  static constexpr uint16_t kMaxPorts = 32;

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;

  Verdict process(Packet* p) {
    const uint16_t in = in_port(p);
    const uint16_t peer = in < kMaxPorts ? peer_[in] : kNoPort;
    if (peer == kNoPort) return Verdict::drop(kDropReasons["unpaired-port"]);
    set_out_port(p, peer);
    return Verdict::out(0);
  }

 private:
  std::array<uint16_t, kMaxPorts> peer_{};
  SourceLoc loc_;
};

FULCRUM_REGISTER_ELEMENT(CrossConnect);

}  // namespace fulcrum
