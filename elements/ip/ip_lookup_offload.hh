// IPLookupOffload — IPLookup that runs on a device (CUDA or OpenCL) when its batch is offloaded.
//
// Ports:     as IPLookup: input 0: Ethernet frames. output 0: IPv4 packets with a route to an
//            existing port. Drops: no-route, no-such-port, not-ipv4.
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: out_port (the matching route's port).
// Counters:  cpu_batches, device_batches, device_packets, tasks, tasks_failed (re-run on the
//            CPU), no_device_batches (offload asked, device absent or down), affinity_packets,
//            affinity_cpu_packets (waited behind their flows, ran on the CPU),
//            waits (a batch waited for a free task buffer), tasks_timed_out.
// Offload:   kernel ipv4_dir24_8_lookup (kernels/ipv4_lookup.cl); datablocks: read the
//            destination address (partial packet, offset 30, 4 bytes, to host order); write a
//            16-bit next hop per packet (user), applied as IPLookup does. The DIR-24-8 tables
//            are uploaded to each device once per process.
#pragma once

#include <cstdint>
#include <string_view>

#include "core/registry.hh"
#include "elements/ip/ip_lookup.hh"
#include "elements/ip/route_lookup_offload.hh"
#include "offload/ipv4_lookup.hh"

namespace fulcrum {

class IPLookupOffload final
    : public RouteLookupOffload<IPLookupOffload, IPLookup, offload::Ipv4LookupTables> {
 public:
  static constexpr ElementTraits kTraits{"IPLookupOffload", 1, 1, IPLookup::kDropReasons};
  static constexpr offload::OffloadSpec kOffload =
      spec(offload::kIpv4LookupKernel, sizeof(IPLookup::Addr));
  static constexpr std::string_view kDeviceKey = "ipv4-device-tables:";
  static constexpr uint16_t kNoRoute = Dir24_8::kNoRoute;
  static constexpr uint16_t kMaxNextHop = Dir24_8::kMaxNextHop;

  Result<const Dir24_8*> host_table() const { return &cpu_.table(); }
};

FULCRUM_REGISTER_ELEMENT(IPLookupOffload);

}  // namespace fulcrum
