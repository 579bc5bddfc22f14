// IPLookup — routes IPv4 packets by longest-prefix match of the destination (DIR-24-8).
//
// Ports:     input 0: Ethernet frames. output 0: IPv4 packets with a route to an existing port.
//            Drops: no-route (no prefix matches), no-such-port (the route's port is not below
//            the number of --port flags: only without ports, since a route to a port the
//            run lacks is a load-time error, FILE:LINE), not-ipv4 (frame under 34 bytes or
//            EtherType not 0x0800; VLAN-tagged frames included).
// Uses:      nothing.  Sets: out_port (the matching route's port).
// Counters:  none (the graph counts packets per port and drops per reason).
// Offload:   none.
// PREFETCH n|auto: lookups per prefetch group (auto: paper 003's model, src/plan/batch_model.hh).
#pragma once

#include <rte_byteorder.h>

#include <array>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "core/registry.hh"
#include "elements/ip/route_lookup.hh"
#include "lib/dir24_8.hh"

namespace fulcrum {

class IPLookup final : public RouteLookup<IPLookup, Dir24_8> {
 public:
  static constexpr std::string_view kWrongFamilyReason = "not-ipv4";
  static constexpr DropReasons kDropReasons{"no-route", "no-such-port", kWrongFamilyReason};
  static constexpr ElementTraits kTraits{"IPLookup", 1, 1, kDropReasons};
  static constexpr std::string_view kStorageKey = "ipv4-routes:";
  static constexpr std::string_view kTableKind = "IPv4 routes";
  static constexpr std::string_view kFileHelp =
      "route file, lines \"A.B.C.D/LEN PORT\" with # comments (src/lib/route_table.hh); loaded "
      "once per process and shared by every worker and by IPLookupOffload on the same file";

  static constexpr uint32_t kEtherHeaderLen = 14;
  static constexpr uint32_t kEtherTypeOffset = 12;
  static constexpr uint32_t kIpv4MinHeaderLen = 20;
  static constexpr uint32_t kIpv4DstField = 16;  // offset of the destination in the IPv4 header
  static constexpr uint32_t kIpv4DstOffset = kEtherHeaderLen + kIpv4DstField;
  static constexpr uint32_t kMinFrameLen = kEtherHeaderLen + kIpv4MinHeaderLen;
  static constexpr uint16_t kEtherTypeIpv4Be = RTE_BE16(0x0800);

  using Addr = uint32_t;  // host byte order

  static bool destination(Packet* p, Addr& out) {
    const uint8_t* d = data(p);
    uint16_t ether_type;
    std::memcpy(&ether_type, d + kEtherTypeOffset, sizeof(ether_type));
    const bool ok = length(p) >= kMinFrameLen && ether_type == kEtherTypeIpv4Be;
    uint32_t dst = 0;
    if (ok) [[likely]]
      std::memcpy(&dst, d + kIpv4DstOffset, sizeof(dst));
    out = rte_be_to_cpu_32(dst);
    return ok;
  }

  static Result<std::shared_ptr<Dir24_8>> build_table(const std::string& file, uint32_t max_port);
};

FULCRUM_REGISTER_ELEMENT(IPLookup);

}  // namespace fulcrum
