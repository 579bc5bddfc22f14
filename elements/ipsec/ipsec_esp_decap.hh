// IPsecESPDecap — verifies, decrypts and strips ESP tunnel-mode packets (RFC 4303 inbound).
//
// Ports:     input 0: Ethernet + outer IPv4 (protocol 50) or IPv6 (next header 50, directly or
//            behind hop-by-hop, destination options and routing headers with no segments left)
//            + ESP with AES-CTR or AES-CBC and HMAC-SHA1-96, or AES-GCM (the SA says which;
//            128- or 256-bit keys; with ESN the high sequence half is inferred from the window,
//            RFC 4303 A2.2, and covered by the ICV). The SA is found by SPI alone (RFC 4301
//            §4.1): the outer addresses and family are not compared with the SA's tunnel
//            endpoints. output 0: Ethernet (same addresses, EtherType 0x0800 or 0x86DD after
//            the inner packet's family: ESP next header 4 or 41) + the inner IPv4 or IPv6
//            packet, outer headers, IV, padding, trailer and ICV removed; the outer ECN field
//            (IPv4 TOS or IPv6 traffic class) combined into the inner one as RFC 6040 §4.2
//            (normal mode): outer CE makes an ECT inner CE, outer ECT(1) makes an inner ECT(0)
//            ECT(1), an inner IPv4 checksum updated; the outer DSCP is not copied in (RFC 4301
//            §5.1.2.1's default).
//            Drops: not-esp (neither IPv4 nor IPv6, outer header malformed, protocol / next
//            header not 50, an IPv6 extension header chain that is malformed, longer than 8
//            headers, ends elsewhere than at ESP, or holds a routing header with segments
//            left), fragment (an IPv4 fragment or an IPv6 packet with a fragment header: put
//            IPReassembler in front), truncated (outer total / payload length beyond the frame,
//            no room for ESP header, IV, trailer and ICV, or a CBC payload that is not whole
//            blocks), unknown-spi (no "in" SA has the SPI), replayed (sequence number 0,
//            already received, or left of the SA's anti-replay window, 64 packets unless
//            REPLAY says, RFC 4303 3.4.3), bad-icv (the ICV does not match; checked before the
//            window moves), bad-padding (pad length beyond the payload or padding bytes not
//            1,2,3..), bad-inner (next header neither 4 nor 41, or the decrypted packet is not
//            an IPv4 / IPv6 packet of that family that fits the payload), ecn-not-ect (outer CE
//            over a Not-ECT inner packet: RFC 6040 §4.2 drops it), crypto-error (the
//            intel-ipsec-mb job failed), sa-expired (the SA is past a hard lifetime, LIFE_* in
//            the SA file: inner packets and their lengths are counted once the ICV verified).
// Uses:      nothing.  Sets: flow_id (SA index).
// Counters:  soft-expired, hard-expired: inbound SAs this element saw reach their soft or hard
//            lifetime (each SA counted once, by the worker that saw it; also a line on stderr).
// Offload:   CPU: one chained intel-ipsec-mb job per packet (HMAC-SHA1 over the ciphertext,
//            then AES-CTR/CBC decryption in place; or one AES-GCM job), the batch submitted
//            before one flush.
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"

namespace fulcrum {

class IPsecESPDecap final : public ElementBase<IPsecESPDecap> {
 public:
  static constexpr DropReasons kDropReasons{
      "not-esp",     "fragment",  "truncated",   "unknown-spi",  "replayed",  "bad-icv",
      "bad-padding", "bad-inner", "ecn-not-ect", "crypto-error", "sa-expired"};
  static constexpr ElementTraits kTraits{.class_name = "IPsecESPDecap",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = kDropReasons,
                                         .anno = kAnnoWrites};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;
  TableSlotBase* table_slot() override { return slot_.get(); }
  void counters(std::vector<Counter>& out) const override {
    out.push_back({"soft-expired", soft_expired_});
    out.push_back({"hard-expired", hard_expired_});
  }

 private:
  struct Slot {
    uint16_t sa;
    uint16_t esp;  // offset of the ESP header
    uint64_t seq;  // with the inferred high half (ESN)
    uint32_t iv_len;
    uint32_t icv_len;
  };
  // A packet's buffers for the crypto job, valid until the batch's flush.
  struct Scratch {
    alignas(16) uint8_t nonce[kAesBlockLen];  // CTR nonce | IV, or GCM salt | IV
    alignas(16) uint8_t aad[kAesBlockLen];
    alignas(16) uint8_t icv[kGcmIcvLen];       // computed
    alignas(16) uint8_t received[kGcmIcvLen];  // from the packet
  };
  // An ESN SA with packets of this batch submitted and not completed: their highest number.
  struct Pending {
    uint16_t sa;
    uint64_t top;
  };
  // The outer IPv6 header's length up to ESP and the packet's length, or a drop.
  Verdict outer_ipv6(const uint8_t* ip, uint32_t len, uint32_t& hdr, uint32_t& total) const;
  // Checks headers, SPI and the replay window, and queues the crypto job (slot i).
  Verdict submit(uint32_t i, Packet* p);
  // Checks the ICV, moves the window, checks the padding and strips the outer headers.
  Verdict complete(Packet* p, const Slot& slot, const Scratch& scratch);
  // Completes the crypto jobs queued so far and the packets submitted so far, in order.
  void flush();
  static bool check_window(SecurityAssociation& sa, uint32_t low, uint64_t& seq, uint64_t& top);
  uint64_t pending_top(uint16_t sa) const;
  void note_pending(uint16_t sa, uint64_t seq);

  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<TableSlot<SaTable>> slot_;
  // The table of this worker's loop iteration (TableSlot::for_worker), set per batch.
  const SaTable* table_ = nullptr;
  int worker_ = 0;
  // Counts and reports a lifetime event of count() or expire() (kSoftNow, kExpiredNow).
  void note_life(SaLife event, const SecurityAssociation& sa);
  uint64_t now_ns_ = 0;  // sa_clock_ns() of this batch, for tables with LIFE_SECONDS
  uint64_t soft_expired_ = 0;
  uint64_t hard_expired_ = 0;
  std::unique_ptr<MbCrypto> crypto_;
  // The batch in progress: per slot, its job's state; the slots submitted, in order.
  PacketBatch* batch_ = nullptr;
  Slot slots_[kMaxBatch];
  Scratch scratch_[kMaxBatch];
  uint32_t submitted_[kMaxBatch];
  uint32_t submitted_count_ = 0;
  uint32_t completed_count_ = 0;
  Pending pending_[kMaxBatch];
  uint32_t pending_count_ = 0;
};

FULCRUM_REGISTER_ELEMENT(IPsecESPDecap);

// RFC 6040 §4.2 decapsulation of the ECN field: the inner IPv4 header's ECN (its checksum
// updated) or IPv6 header's (traffic class), by the version nibble, set from the outer TOS /
// traffic class; false when the packet must be dropped (outer CE, inner Not-ECT).
bool decapsulate_ecn(uint8_t outer_tos, uint8_t* inner);

}  // namespace fulcrum
