// CheckIPChecksumOffload — verifies IPv4 header checksums, on a device when its batch is
// offloaded: the smallest offloadable element, the example of docs/offload.md.
//
// Ports:     input 0: Ethernet frames. output 0: IPv4 frames whose header checksum verifies.
//            Drops: not-ipv4 (frame under 34 bytes, EtherType not 0x0800, version not 4, IHL
//            under 5, header past the frame's end), bad-checksum.
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: nothing.
// Counters:  the offload stage's (cpu_batches, device_batches, device_packets, tasks, ...).
// Offload:   kernel ip_checksum_verify (kernels/ip_checksum_verify.cl). Datablocks: whole
//            packet: the IPv4 header, read only; write: 4 bytes per packet, 1 when the checksum
//            verifies. Frames that are not IPv4 stay on the CPU, which drops them.
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/registry.hh"
#include "offload/offload_element.hh"

namespace fulcrum {

class CheckIPChecksumOffload final : public OffloadElement<CheckIPChecksumOffload> {
 public:
  static constexpr DropReasons kDropReasons{"not-ipv4", "bad-checksum"};
  static constexpr ElementTraits kTraits{"CheckIPChecksumOffload", 1, 1, kDropReasons};
  static constexpr uint32_t kIpOffset = RTE_ETHER_HDR_LEN;
  static constexpr auto kOffload = offload::OffloadSpec::with_region(
      "ip_checksum_verify", 0, sizeof(uint32_t), {.write = false, .align = 4, .max_bytes = 60});

  Status configure(Args& args) override { return configure_offload(args); }
  Status initialize(const InitContext& ctx) override { return initialize_offload(ctx); }

  void process_cpu(PacketBatch& batch) override {
    batch.for_each([&](uint32_t i, Packet* p) {
      const uint32_t len = header_length(p);
      if (len == 0) return batch.set_result(i, Verdict::drop(kDropReasons["not-ipv4"]));
      const auto* ip = reinterpret_cast<const rte_ipv4_hdr*>(data(p) + kIpOffset);
      batch.set_result(i, rte_raw_cksum(ip, len) == 0xFFFF
                              ? Verdict::out(0)
                              : Verdict::drop(kDropReasons["bad-checksum"]));
    });
  }

  bool gather(Packet* p, uint8_t*, offload::PacketRegion& region) override {
    region = {kIpOffset, header_length(p)};
    return region.length != 0;  // not IPv4: the CPU function drops it
  }

  Verdict apply(Packet*, const uint8_t* result, const offload::PacketRegion&) override {
    uint32_t ok;
    std::memcpy(&ok, result, sizeof ok);
    return ok != 0 ? Verdict::out(0) : Verdict::drop(kDropReasons["bad-checksum"]);
  }

  Result<std::vector<offload::TaskArg>> device_args(const InitContext&, size_t) override {
    using offload::TaskArg;
    return std::vector<TaskArg>{TaskArg::input(offload::kBytesInput),
                                TaskArg::input(offload::kRegionsInput),
                                TaskArg::output(offload::kResultsOutput), TaskArg::items()};
  }

 private:
  // The IPv4 header's length in bytes, 0 when the frame does not hold one.
  static uint32_t header_length(Packet* p) {
    const uint32_t n = length(p);
    if (n < kIpOffset + sizeof(rte_ipv4_hdr)) return 0;
    const auto* eth = rte_pktmbuf_mtod(p, const rte_ether_hdr*);
    const auto* ip = rte_pktmbuf_mtod_offset(p, const rte_ipv4_hdr*, kIpOffset);
    if (eth->ether_type != RTE_BE16(RTE_ETHER_TYPE_IPV4) || (ip->version_ihl >> 4) != 4) return 0;
    const uint32_t len = rte_ipv4_hdr_len(ip);
    return len >= sizeof(rte_ipv4_hdr) && kIpOffset + len <= n ? len : 0;
  }
};

FULCRUM_REGISTER_ELEMENT(CheckIPChecksumOffload);

}  // namespace fulcrum
