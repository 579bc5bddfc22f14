// IP6LookupOffload — IP6Lookup (trie) that runs on a device (CUDA or OpenCL) when its batch is
// offloaded.
//
// Ports:     as IP6Lookup: input 0: Ethernet frames. output 0: IPv6 packets with a route to an
//            existing port. Drops: no-route, no-such-port, not-ipv6.
// Config:    FILE       (positional)     route file, as IP6Lookup (the trie shared with an
//                                        IP6Lookup of ALGORITHM trie on the same file).
//            AGGREGATE  integer  32      batches gathered into one device task (1..256).
//            FLUSH_US   integer  100     a task not full this long after it opened goes anyway.
//            AFFINITY   bool     false   keep each flow on one processor (no reordering; the
//                                        flow hash reads the bytes where IPv4 has its addresses
//                                        and ports, i.e. 12 bytes of the IPv6 source address).
//            TASK_TIMEOUT_MS  integer  1000  a task not back this long after it went to the
//                                            device: device marked down, packets re-run on the CPU.
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: out_port (the matching route's port).
// Counters:  cpu_batches, device_batches, device_packets, tasks, tasks_failed (re-run on the
//            CPU), no_device_batches (offload asked, device absent or down), affinity_packets,
//            waits (a batch waited for a free task buffer), tasks_timed_out.
// Offload:   kernel ipv6_trie_lookup (kernels/ipv6_trie_lookup.cl); datablocks: read the
//            destination address (partial packet, offset 38, 16 bytes, network order); write a
//            16-bit next hop per packet (user), applied as IP6Lookup does. The trie's TBL24
//            (64 MiB), groups and group headers are uploaded to each device once per process.
#pragma once

#include <cstdint>
#include <string_view>

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

}  // namespace fulcrum
