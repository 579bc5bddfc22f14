// IP6Lookup — routes IPv6 packets by longest-prefix match of the destination.
//
// Binary search on prefix lengths over per-length hash tables (src/lib/ip6_table.hh).
//
// Ports:     input 0: Ethernet frames. output 0: IPv6 packets with a route to an existing port.
//            Drops: no-route (no prefix matches), no-such-port (the route's port is not below
//            the number of --port flags), not-ipv6 (frame under 54 bytes or EtherType not
//            0x86DD; VLAN-tagged frames included).
// Config:    FILE (positional): route file, lines "X:X::/LEN PORT" with # comments (see
//            src/lib/route6_table.hh); a relative path is relative to the current directory.
//            Loaded once per process in initialize() and shared by every worker
//            (shared storage key "ipv6-routes:FILE").
// Uses:      nothing.  Sets: out_port (the matching route's port).
// Counters:  none (the graph counts packets per port and drops per reason).
// Offload:   none.
#pragma once

#include <rte_byteorder.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "elements/ip/route_lookup.hh"
#include "lib/ip6_table.hh"

namespace fulcrum {

class IP6Lookup final : public RouteLookup<IP6Lookup, Ip6Table> {
 public:
  static constexpr int kDropNotIpv6 = kDropWrongFamily;
  static constexpr std::array<std::string_view, 3> kDropReasons{"no-route", "no-such-port",
                                                                "not-ipv6"};
  static constexpr ElementTraits kTraits{"IP6Lookup", 1, 1, kDropReasons};
  static constexpr std::string_view kStorageKey = "ipv6-routes:";

  static constexpr uint32_t kEtherHeaderLen = 14;
  static constexpr uint32_t kEtherTypeOffset = 12;
  static constexpr uint32_t kIpv6HeaderLen = 40;
  static constexpr uint32_t kIpv6DstField = 24;  // offset of the destination in the IPv6 header
  static constexpr uint32_t kIpv6DstOffset = kEtherHeaderLen + kIpv6DstField;
  static constexpr uint32_t kMinFrameLen = kEtherHeaderLen + kIpv6HeaderLen;
  static constexpr uint16_t kEtherTypeIpv6Be = RTE_BE16(0x86DD);

  using Addr = uint8_t[Ip6Table::kAddrBytes];  // network byte order

  static bool destination(Packet* p, Addr& out) {
    const uint8_t* d = data(p);
    uint16_t ether_type;
    std::memcpy(&ether_type, d + kEtherTypeOffset, sizeof(ether_type));
    const bool ok = length(p) >= kMinFrameLen && ether_type == kEtherTypeIpv6Be;
    if (ok) [[likely]]
      std::memcpy(out, d + kIpv6DstOffset, Ip6Table::kAddrBytes);
    else
      std::memset(out, 0, Ip6Table::kAddrBytes);
    return ok;
  }

  static Result<std::shared_ptr<Ip6Table>> build_table(const std::string& file);
};

}  // namespace fulcrum
