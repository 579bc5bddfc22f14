// IPLookupOffload — IPLookup that runs on a device (CUDA or OpenCL) when its batch is offloaded.
//
// Ports:     as IPLookup: input 0: Ethernet frames. output 0: IPv4 packets with a route to an
//            existing port. Drops: no-route, no-such-port, not-ipv4.
// Config:    FILE       (positional)     route file, as IPLookup (table shared with it).
//            AGGREGATE  integer  32      batches gathered into one device task (1..256).
//            FLUSH_US   integer  100     a task not full this long after it opened goes anyway.
//            AFFINITY   bool     false   keep each flow on one processor (no reordering).
//            TASK_TIMEOUT_MS  integer  1000  a task not back this long after it went to the
//                                            device: device marked down, packets re-run on the CPU.
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: out_port (the matching route's port).
// Counters:  cpu_batches, device_batches, device_packets, tasks, tasks_failed (re-run on the
//            CPU), no_device_batches (offload asked, device absent or down), affinity_packets,
//            waits (a batch waited for a free task buffer), tasks_timed_out.
// Offload:   kernel ipv4_dir24_8_lookup (kernels/opencl, kernels/cuda); datablocks: read the
//            destination address (partial packet, offset 30, 4 bytes, to host order); write a
//            16-bit next hop per packet (user), applied as IPLookup does. The DIR-24-8 tables
//            are uploaded to each device once per process.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "elements/ip/ip_lookup.hh"
#include "offload/ipv4_lookup.hh"
#include "offload/offload_element.hh"

namespace fulcrum {

class IPLookupOffload final : public OffloadElement<IPLookupOffload> {
 public:
  static constexpr ElementTraits kTraits{"IPLookupOffload", 1, 1, IPLookup::kDropReasons};
  static constexpr std::string_view kKernel = offload::kIpv4LookupKernel;
  static constexpr uint32_t kInputBytes = sizeof(uint32_t);
  static constexpr uint32_t kOutputBytes = sizeof(uint16_t);

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;

  void process_cpu(PacketBatch& batch) { cpu_.process_batch(batch); }

  bool gather(Packet* p, uint8_t* item) {
    uint32_t addr;
    if (!IPLookup::destination(p, addr)) return false;  // the CPU function drops it
    std::memcpy(item, &addr, sizeof addr);
    return true;
  }

  Verdict apply(Packet* p, const uint8_t* result) {
    uint16_t hop;
    std::memcpy(&hop, result, sizeof hop);
    if (hop < ports_) {
      anno(p).out_port = hop;
      return Verdict::out(0);
    }
    return Verdict::drop(hop == Dir24_8::kNoRoute ? IPLookup::kDropNoRoute
                                                  : IPLookup::kDropNoSuchPort);
  }

  Result<std::vector<offload::TaskArg>> device_args(const InitContext& ctx, size_t device);

 private:
  IPLookup cpu_;
  uint16_t ports_ = 0;
};

}  // namespace fulcrum
