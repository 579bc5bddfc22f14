// IPsecESPDecap — verifies, decrypts and strips ESP tunnel-mode packets (RFC 4303 inbound).
//
// Ports:     input 0: Ethernet + outer IPv4 (protocol 50) + ESP with AES-128-CTR or AES-128-CBC
//            (the SA's key length decides) and HMAC-SHA1-96. output 0: Ethernet (same addresses,
//            EtherType 0x0800) + the inner IPv4 packet, outer headers, IV, padding, trailer and ICV
//            removed. Drops: not-esp (not IPv4, outer header malformed, or protocol not 50),
//            truncated (outer total length beyond the frame, no room for ESP header, IV, trailer
//            and ICV, or a CBC payload that is not whole blocks), unknown-spi (no "in" SA has the
//            SPI), replayed (sequence number 0, already received, or left of the 64-packet
//            anti-replay window, RFC 4303 3.4.3), bad-icv (the ICV does not match; checked before
//            the window moves), bad-padding (pad length beyond the payload or padding bytes not
//            1,2,3..), not-ipv4 (next header not 4, or the decrypted packet is not IPv4 / longer
//            than the payload), crypto-error (the intel-ipsec-mb job failed).
// Uses:      nothing.  Sets: flow_id (SA index).
// Counters:  none.
// Offload:   CPU: one chained intel-ipsec-mb job per packet (HMAC-SHA1 over the ciphertext,
//            then AES-128-CTR/CBC decryption in place), the batch submitted before one flush.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"

namespace fulcrum {

class IPsecESPDecap final : public ElementBase<IPsecESPDecap> {
 public:
  static constexpr DropReasons kDropReasons{"not-esp",  "truncated",   "unknown-spi",
                                            "replayed", "bad-icv",     "bad-padding",
                                            "not-ipv4", "crypto-error"};
  static constexpr ElementTraits kTraits{"IPsecESPDecap", 1, 1, kDropReasons};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;
  TableSlotBase* table_slot() override { return slot_.get(); }

 private:
  struct Slot {
    uint16_t sa;
    uint16_t esp;  // offset of the ESP header
    uint32_t seq;
    uint32_t iv_len;
  };
  // Checks headers, SPI and the replay window, and queues the crypto job.
  Verdict submit(uint32_t i, Packet* p, Slot& slot, uint8_t* nonce_iv, uint8_t* icv);
  // Checks the ICV, moves the window, checks the padding and strips the outer headers.
  Verdict complete(Packet* p, const Slot& slot, const uint8_t* icv);

  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<TableSlot<SaTable>> slot_;
  // The table of this worker's loop iteration (TableSlot::for_worker), set per batch.
  const SaTable* table_ = nullptr;
  int worker_ = 0;
  std::unique_ptr<MbCrypto> crypto_;
};

FULCRUM_REGISTER_ELEMENT(IPsecESPDecap);

}  // namespace fulcrum
