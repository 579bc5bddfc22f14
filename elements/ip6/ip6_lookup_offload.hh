// IP6LookupOffload — IP6Lookup (trie) that runs on a device (CUDA or OpenCL) when its batch is
// offloaded.
//
// Ports:     as IP6Lookup: input 0: Ethernet frames. output 0: IPv6 packets with a route to an
//            existing port. Drops: no-route, no-such-port, not-ipv6.
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: out_port (the matching route's port).
// Counters:  cpu_batches, device_batches, device_packets, tasks, tasks_failed (re-run on the
//            CPU), no_device_batches (offload asked, device absent or down), affinity_packets,
//            affinity_cpu_packets (waited behind their flows, ran on the CPU),
//            waits (a batch waited for a free task buffer), tasks_timed_out.
// Offload:   kernel ipv6_trie_lookup (kernels/ipv6_trie_lookup.cl); datablocks: read the
//            destination address (partial packet, offset 38, 16 bytes, network order); write a
//            16-bit next hop per packet (user), applied as IP6Lookup does. The trie's TBL24
//            (64 MiB), groups and group headers are uploaded to each device once per process.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/registry.hh"
#include "elements/ip/route_lookup_offload.hh"
#include "elements/ip6/ip6_lookup.hh"
#include "offload/ipv6_lookup.hh"

namespace fulcrum {

class IP6LookupOffload final
    : public RouteLookupOffload<IP6LookupOffload, IP6Lookup, offload::Ipv6LookupTables> {
 public:
  static constexpr ElementTraits kTraits{"IP6LookupOffload", 1, 1, IP6Lookup::kDropReasons};
  static constexpr offload::OffloadSpec kOffload =
      spec(offload::kIpv6LookupKernel, offload::kIpv6AddrBytes);
  static constexpr std::string_view kDeviceKey = "ipv6-device-tables:";
  static constexpr uint16_t kNoRoute = Ip6Trie::kNoRoute;
  static constexpr uint16_t kMaxNextHop = Ip6Trie::kMaxNextHop;

  Result<const Ip6Trie*> host_table() const {
    const Ip6Trie* trie = cpu_.table().trie();
    if (trie == nullptr) return make_error("IP6LookupOffload: the table is not a trie");
    return trie;
  }
};

FULCRUM_REGISTER_ELEMENT(IP6LookupOffload);

}  // namespace fulcrum
