// IPsecAESOffload — IPsecAES that encrypts on a device (CUDA, OpenCL) for offloaded batches.
//
// Ports:     as IPsecAES: input 0: frames from IPsecESPEncap. output 0: the same frames, inner
//            packet through the next-header byte encrypted in place (GCM SAs: and the 16-byte
//            ICV written). Drops: no-sa, truncated, crypto-error (as IPsecAES; the device path
//            drops nothing).
// Uses:      flow_id (SA index, set by IPsecESPEncap); the batch's device decision (set by
//            CPUOnly, DeviceOnly, FixedFraction).  Sets: nothing.
// Counters:  cpu_batches, device_batches, device_packets, tasks, tasks_failed (re-run on the
//            CPU), no_device_batches, affinity_packets,
//            affinity_cpu_packets, waits, tasks_timed_out.
// Offload:   kernel ipsec_aes (kernels/ipsec.cl, one work item per packet: AES-128/256-CTR,
//            RFC 3686; AES-128/256-GCM, RFC 4106, with its 16-byte ICV written in place; ESN
//            SAs included). Datablocks: whole packet, written back: the ESP part from the SPI
//            through the ICV's room; read: the SA index (4 bytes); no write item. AES-CBC SAs
//            (each block chains on the last), and frames the CPU function drops, stay on the
//            CPU. Chain key "esp-region": followed by IPsecAuthHMACSHA1Offload on the same SA
//            file, one kernel does both (ipsec_aes_hmac_fused, FlowShader §III-E). CPU
//            function: IPsecAES (intel-ipsec-mb).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "core/registry.hh"
#include "elements/ipsec/esp_offload_element.hh"
#include "elements/ipsec/ipsec_aes.hh"

namespace fulcrum {

class IPsecAESOffload final : public EspOffloadElement<IPsecAESOffload, IPsecAES> {
 public:
  static constexpr ElementTraits kTraits{.class_name = "IPsecAESOffload",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = IPsecAES::kDropReasons,
                                         .reads = PacketReads::kWholeFrame,
                                         .anno = kAnnoReads};
  static constexpr offload::OffloadSpec kOffload = spec(offload::kIpsecAesKernel, 0);
  static constexpr bool kCipherStage = true;  // gather by SaConfig::device_aes

  Verdict apply(Packet*, const uint8_t*, const offload::PacketRegion&) override {
    return Verdict::out(0);
  }

  // IPsecAuthHMACSHA1Offload on the same SA file next: the fused kernel with its arguments.
  std::optional<offload::TaskLaunch> fuse(const Element& next,
                                          const std::vector<offload::TaskArg>& next_args) override;

  static std::vector<offload::TaskArg> kernel_args(const offload::IpsecTables& t) {
    return t.aes_args();
  }
};

FULCRUM_REGISTER_ELEMENT(IPsecAESOffload);

}  // namespace fulcrum
