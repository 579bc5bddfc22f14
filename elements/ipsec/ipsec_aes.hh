// IPsecAES — encrypts the ESP payload of outbound packets: AES-128-CTR (RFC 3686) or -CBC.
//
// Ports:     input 0: frames from IPsecESPEncap. output 0: the same frames, inner packet through
//            the next-header byte encrypted in place with the SA's key; counter block = nonce
//            (4 bytes of the SA's key material) | IV (8 bytes in the packet) | counter from 1;
//            for an AES-CBC SA (RFC 3602), CBC with the 16-byte IV in the packet.
//            Drops: no-sa (flow_id is not an SA of the file), truncated (no room for an ESP
//            header, IV, trailer and ICV after the outer IPv4 header, or a CBC payload that
//            is not whole blocks), crypto-error (the intel-ipsec-mb job failed).
// Uses:      flow_id (SA index, set by IPsecESPEncap).  Sets: nothing.
// Counters:  none.
// Offload:   CPU: one intel-ipsec-mb job per packet (IMB_CIPHER_CNTR / IMB_CIPHER_CBC), the
//            batch submitted through the burst API at once. Device versions come with the
//            offload layer.
#pragma once

#include "core/registry.hh"
#include "elements/ipsec/esp_crypto_element.hh"

namespace fulcrum {

class IPsecAES final : public EspCryptoElement<IPsecAES> {
 public:
  static constexpr ElementTraits kTraits{"IPsecAES", 1, 1, kDropReasons};

  void process_batch(PacketBatch& batch) override;
};

FULCRUM_REGISTER_ELEMENT(IPsecAES);

}  // namespace fulcrum
