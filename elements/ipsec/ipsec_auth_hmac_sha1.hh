// IPsecAuthHMACSHA1 — writes the ESP ICV of outbound packets: HMAC-SHA1-96 (RFC 2404).
//
// Ports:     input 0: frames from IPsecAES. output 0: the same frames with the last 12 bytes
//            (reserved by IPsecESPEncap) set to the first 96 bits of HMAC-SHA1 over the ESP
//            header, IV and encrypted payload and trailer (and, for an ESN SA, the high 32
//            sequence bits IPsecESPEncap put in the ICV's room), keyed with the SA's AUTH_KEY.
//            Packets of AES-GCM SAs pass unchanged (IPsecAES wrote their ICV).
//            Drops: no-sa (flow_id is not an SA of the file), truncated (no room for an ESP
//            header, IV, trailer and ICV), crypto-error (the intel-ipsec-mb job failed).
// Uses:      flow_id (SA index, set by IPsecESPEncap).  Sets: nothing.
// Counters:  none.
// Offload:   CPU: one intel-ipsec-mb job per packet (IMB_AUTH_HMAC_SHA_1 with the ipad/opad
//            states precomputed per SA), the batch submitted through the burst API at once;
//            the library hashes several packets together (SIMD lanes or SHA-NI).
#pragma once

#include "core/registry.hh"
#include "elements/ipsec/esp_crypto_element.hh"

namespace fulcrum {

class IPsecAuthHMACSHA1 final : public EspCryptoElement<IPsecAuthHMACSHA1> {
 public:
  static constexpr ElementTraits kTraits{.class_name = "IPsecAuthHMACSHA1",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = kDropReasons,
                                         .reads = PacketReads::kWholeFrame,
                                         .anno = kAnnoReads};

  void process_batch(PacketBatch& batch) override;
};

FULCRUM_REGISTER_ELEMENT(IPsecAuthHMACSHA1);

}  // namespace fulcrum
