// IDSMatchOffload — IDSMatch (ENGINE ac) whose content prefilter runs on a device (CUDA or
// OpenCL) when its batch is offloaded.
//
// Ports:     as IDSMatch: input 0: Ethernet frames. output 0: packets that raised no alert (and
//            those that did, unless output 1 is connected or DROP is true). output 1 (optional):
//            packets that raised at least one alert. Drops: not-ip, truncated, bad-l4-header,
//            bad-udp-length, bad-ipv6-ext, too-many-ipv6-ext, too-many-vlan-tags, alert (as
//            IDSMatch). Frames are parsed by the same parser (VLAN tags, IPv4, IPv6 extension
//            headers) in gather, for the region, and in apply.
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: nothing.
// Counters:  those of IDSMatch (alerts, packets_alerted, bytes_scanned, prefilter_hits,
//            rules_evaluated, regex_scans, scan_errors, log_errors, threshold_evictions,
//            flow_evictions, stream_*), device_rescans (device results that overflowed: scanned
//            again on the CPU), and the offload counters (cpu_batches, device_batches,
//            device_packets, tasks, tasks_failed, ...).
// Offload:   kernel ids_ac_scan (kernels/ids_ac_scan.cl):
//            the DFA walk of the content prefilter. Datablocks: whole packet, read only: the IP
//            payload (a malformed frame sends an empty region and is dropped in apply, so that
//            packet indices in the alert log stay in arrival order); write: IdsScanResult per
//            packet (src/offload/ids_tables.hh, up to 31 match steps). The rule engine (offset,
//            depth, case, headers, negations, relative contents, pcre, thresholds, flowbits) runs
//            on the CPU in apply, as IDSMatch. The DFA's classes and table are uploaded to each
//            device once per process. TCP stream reassembly (STREAM, STREAMS, STREAM_LOOKBACK,
//            STREAM_OOO, as IDSMatch) also runs on the CPU in apply: the device scans each
//            packet's payload, the stream window is scanned again on the CPU; a batch split
//            between CPU and device reaches the streams out of arrival order (held and
//            reordered as any out-of-order segment, within STREAM_OOO).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.hh"
#include "elements/ids/ids_match.hh"
#include "offload/ids_tables.hh"
#include "offload/offload_element.hh"

namespace fulcrum {

class IDSMatchOffload final : public OffloadElement<IDSMatchOffload> {
 public:
  static constexpr ElementTraits kTraits{.class_name = "IDSMatchOffload",
                                         .inputs = 1,
                                         .outputs = 2,
                                         .drop_reasons = IDSMatch::kDropReasons,
                                         .optional_outputs = 1u << IDSMatch::kAlertOutput,
                                         .reads = PacketReads::kWholeFrameAhead};
  // Write: the scan's candidate matches; region: the IP payload.
  static constexpr auto kOffload =
      offload::OffloadSpec::with_region(offload::kIdsScanKernel, 0, sizeof(offload::IdsScanResult),
                                        {.write = false, .align = 16, .max_bytes = 2048});
  static constexpr std::string_view kDeviceKey = "ids-device-tables:";

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;
  void finish() override { cpu_.finish(); }
  void output_losses(std::vector<OutputLoss>& out) const override { cpu_.output_losses(out); }

  void process_cpu(PacketBatch& batch) override { cpu_.process_batch(batch); }

  bool gather(Packet* p, uint8_t*, offload::PacketRegion& region) override {
    ids::PacketView v;
    if (ids::parse_packet(data(p), length(p), v) != ids::ParseResult::kOk) [[unlikely]] {
      region = {0, 0};  // dropped in apply, in order
      return true;
    }
    region = {static_cast<uint32_t>(v.ip_payload - data(p)), v.ip_payload_len};
    return true;
  }

  Verdict apply(Packet* p, const uint8_t* result, const offload::PacketRegion&) override {
    offload::IdsScanResult r;
    std::memcpy(&r, result, sizeof r);
    return cpu_.process_prefiltered(
        p, [&](const ids::PacketView&, std::vector<ids::Matcher::Hit>& hits) {
          if (r.expand(cpu_.rules().ac(), [&](uint32_t id, uint32_t end) {
                hits.push_back({id, end});
              }))
            return true;
          ++rescans_;
          return false;
        });
  }

  Result<std::vector<offload::TaskArg>> device_args(const InitContext& ctx, size_t device) override;

 private:
  IDSMatch cpu_;
  uint64_t rescans_ = 0;
};

FULCRUM_REGISTER_ELEMENT(IDSMatchOffload);

}  // namespace fulcrum
