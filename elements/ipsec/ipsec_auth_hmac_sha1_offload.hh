// IPsecAuthHMACSHA1Offload — IPsecAuthHMACSHA1 on a device (CUDA, OpenCL) for offloaded batches.
//
// Ports:     as IPsecAuthHMACSHA1: input 0: frames from IPsecAES or IPsecAESOffload. output 0:
//            the same frames with the last 12 bytes set to HMAC-SHA1-96 over the ESP header, IV
//            and encrypted payload and trailer. Drops: no-sa, truncated, crypto-error (as
//            IPsecAuthHMACSHA1; the device path drops nothing).
// Uses:      flow_id (SA index, set by IPsecESPEncap); the batch's device decision (set by
//            CPUOnly, DeviceOnly, FixedFraction).  Sets: nothing.
// Counters:  cpu_batches, device_batches, device_packets, tasks, tasks_failed (re-run on the
//            CPU), no_device_batches, affinity_packets,
//            affinity_cpu_packets, waits, tasks_timed_out.
// Offload:   kernel ipsec_hmac_sha1 (kernels/ipsec.cl: HMAC-SHA1-96,
//            RFC 2404, one work item per packet, chaining states precomputed per SA; with ESN
//            the sequence number's high half, which IPsecESPEncap left in the ICV's room, is
//            hashed after the trailer). Datablocks: whole packet, read: the ESP part from the
//            SPI through the ICV's room; read: the SA index (4 bytes); write: the 12-byte ICV
//            per packet, stored in the frame's last 12 bytes. AES-GCM SAs pass untouched (on
//            the device too, so that a chain with IPsecAESOffload stays whole). Frames the CPU
//            function drops stay on the CPU. Chain key "esp-region": after IPsecAESOffload it
//            runs in that element's tasks (fused into one kernel unless FUSE false there). CPU
//            function: IPsecAuthHMACSHA1 (intel-ipsec-mb).
#pragma once

#include <cstring>
#include <string_view>
#include <vector>

#include "core/registry.hh"
#include "elements/ipsec/esp_offload_element.hh"
#include "elements/ipsec/ipsec_auth_hmac_sha1.hh"

namespace fulcrum {

class IPsecAuthHMACSHA1Offload final
    : public EspOffloadElement<IPsecAuthHMACSHA1Offload, IPsecAuthHMACSHA1> {
 public:
  static constexpr ElementTraits kTraits{.class_name = "IPsecAuthHMACSHA1Offload",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = IPsecAuthHMACSHA1::kDropReasons,
                                         .reads = PacketReads::kWholeFrame,
                                         .anno = kAnnoReads};
  static constexpr offload::OffloadSpec kOffload =
      spec(offload::kIpsecHmacSha1Kernel, offload::kIpsecIcvBytes);
  static constexpr bool kCipherStage = false;  // gather by SaConfig::device_hmac

  // GCM SAs have no HMAC: their ICV (the cipher's tag) stays as it is.
  Verdict apply(Packet* p, const uint8_t* result, const offload::PacketRegion&) override {
    const SaConfig* cfg = sa_of(p);
    if (cfg != nullptr && cfg->hmac())
      std::memcpy(data(p) + length(p) - esp::kEspIcvLen, result, esp::kEspIcvLen);
    return Verdict::out(0);
  }

  static std::vector<offload::TaskArg> kernel_args(const offload::IpsecTables& t) {
    return t.hmac_args();
  }
};

FULCRUM_REGISTER_ELEMENT(IPsecAuthHMACSHA1Offload);

}  // namespace fulcrum
