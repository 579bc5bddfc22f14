// IPsecAES — encrypts the ESP payload of outbound packets: AES-CTR (RFC 3686), AES-CBC (RFC
// 3602) or AES-GCM (RFC 4106), 128- or 256-bit keys.
//
// Ports:     input 0: frames from IPsecESPEncap. output 0: the same frames, inner packet through
//            the next-header byte encrypted in place with the SA's key; CTR: counter block =
//            nonce (4 bytes of the SA's key material) | IV (8 bytes in the packet) | counter
//            from 1; CBC: the 16-byte IV in the packet; GCM: nonce = salt | IV, AAD = SPI |
//            sequence number (with ESN: SPI | high 32 bits | low 32 bits, the high half read
//            from the ICV's room), and the 16-byte ICV written (IPsecAuthHMACSHA1 leaves GCM
//            packets alone).
//            Drops: no-sa (flow_id is not an SA of the file), truncated (no room for an ESP
//            header, IV, trailer and ICV after the outer IPv4 or IPv6 header, or a CBC payload that
//            is not whole blocks), crypto-error (the intel-ipsec-mb job failed).
// Uses:      flow_id (SA index, set by IPsecESPEncap).  Sets: nothing.
// Counters:  none.
// Offload:   CPU: one intel-ipsec-mb job per packet (IMB_CIPHER_CNTR / IMB_CIPHER_CBC through
//            the burst API, the batch at once; IMB_CIPHER_GCM through the job API). Device:
//            IPsecAESOffload (CTR and GCM SAs; CBC ones stay on the CPU).
#pragma once

#include "core/registry.hh"
#include "elements/ipsec/esp_crypto_element.hh"

namespace fulcrum {

class IPsecAES final : public EspCryptoElement<IPsecAES> {
 public:
  static constexpr ElementTraits kTraits{.class_name = "IPsecAES",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = kDropReasons,
                                         .reads = PacketReads::kWholeFrame,
                                         .anno = kAnnoReads};

  void process_batch(PacketBatch& batch) override;
};

FULCRUM_REGISTER_ELEMENT(IPsecAES);

}  // namespace fulcrum
