// EtherRewrite — sets the source and destination MAC addresses for the port a frame leaves by.
//
// Ports:     input 0: Ethernet frames. output 0: the frame with the addresses of its output
//            port (out_port if set, else in_port).
// Example:   EtherRewrite(0 02:00:00:00:00:01 02:00:00:00:01:01,
//                         1 02:00:00:00:00:02 02:00:00:00:01:02).
// Uses:      out_port, in_port.  Sets: nothing.
// Counters:  none; the graph counts drops by reason: "no-mac-for-port" (the port is not
//            listed and there is no DEFAULT), "truncated" (frame shorter than 14 bytes).
// Offload:   none.
#pragma once

#include <rte_ether.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class EtherRewrite final : public PacketElement<EtherRewrite> {
 public:
  static constexpr DropReasons kDropReasons{"no-mac-for-port", "truncated"};
  static constexpr ElementTraits kTraits{"EtherRewrite", 1, 1, kDropReasons};

  Status configure(Args& args) override;

  Verdict process(Packet* p) {
    if (length(p) < RTE_ETHER_HDR_LEN) return Verdict::drop(kDropReasons["truncated"]);
    const uint16_t port = effective_out_port(p);
    const Addrs& a = port < table_.size() ? table_[port] : default_;
    if (!a.valid) return Verdict::drop(kDropReasons["no-mac-for-port"]);
    std::memcpy(data(p), a.dst_src.data(), a.dst_src.size());
    return Verdict::out(0);
  }

 private:
  // The first 12 bytes of the frame: destination, then source address.
  struct Addrs {
    std::array<uint8_t, 2 * RTE_ETHER_ADDR_LEN> dst_src{};
    bool valid = false;
  };

  std::array<Addrs, RTE_MAX_ETHPORTS> table_{};  // unlisted ports hold the DEFAULT
  Addrs default_{};
};

FULCRUM_REGISTER_ELEMENT(EtherRewrite);

}  // namespace fulcrum
