// IPsecESPEncap — wraps IPv4 and IPv6 packets into ESP tunnel mode (RFC 4303): outer IPv4 or
// IPv6 header, ESP header, IV.
//
// Ports:     input 0: Ethernet frames carrying IPv4 (EtherType 0x0800) or IPv6 (0x86DD).
//            output 0: Ethernet (EtherType of the outer family) + the outer header of the SA's
//            family, TUNNEL_SRC -> TUNNEL_DST: IPv4 (protocol 50, TTL 64, ID = low 16 bits of the
//            sequence number, TOS = the inner TOS or traffic class) or IPv6 (next header 50, hop
//            limit 64, traffic class = the inner TOS or traffic class, flow label 0): DSCP and
//            ECN copied as RFC 4301 §5.1.2.1 and RFC 6040's normal mode say; then SPI +
//            sequence number (its low 32 bits) + IV (8 bytes for AES-CTR and AES-GCM SAs, 16
//            for AES-CBC), then the inner packet (Ethernet padding removed), padding 1,2,3.. to
//            4-byte alignment (16 for CBC), pad length, next header (4: IPv4, 41: IPv6), and
//            the ICV's room (12 bytes, 16 for AES-GCM), zero except that an ESN SA's high 32
//            sequence bits go in its first 4 bytes: the bytes RFC 4303 §2.2.1 appends to the
//            ICV's input (IPsecAuthHMACSHA1 hashes them, IPsecAES puts them in GCM's AAD, RFC
//            4106 §5). The payload is still in the clear: IPsecAES encrypts it (and writes the
//            GCM ICV), IPsecAuthHMACSHA1 writes the HMAC ICV. The four combinations 4in4, 6in4,
//            4in6 and 6in6 are all allowed: the SA's selector family picks the SA, its tunnel
//            family the outer header.
//            output 1 (optional, with MTU): packets whose encapsulation would exceed MTU and
//            that may not be fragmented (IPv6, or IPv4 with DF), unchanged, with the inner MTU
//            (MTU less the SA's overhead, padding included) in user[3]: connect
//            ICMPError(SRC, 3, 4, MTU anno) for IPv4 and ICMP6Error(SRC6, 2, 0, MTU anno) for
//            IPv6, behind a Classifier(12/0800, 12/86dd) when both come (docs/ipsec.md, "MTU").
//            Drops: no-sa (no outbound SA selector of the inner family matches the inner
//            destination; with POLICY_SPI, no outbound SA has the SPI IPsecPolicy named),
//            not-ip (frame under 34 bytes, EtherType neither 0x0800 nor 0x86DD, version not
//            the EtherType's, IPv4 IHL under 5 or total length outside the frame, IPv6 payload
//            length outside the frame), too-big (the result exceeds 65535 bytes of IPv4 or of
//            IPv6 payload or the buffer's head/tail room, or the frame is in several segments),
//            mtu-exceeded (over MTU, output 1 unconnected), needs-fragmentation (over MTU, an
//            IPv4 packet without DF: put IPFragmenter in front, docs/ipsec.md), seq-overflow
//            (an SA without ESN used all 2^32-1 sequence numbers; RFC 4303 3.3.3 forbids
//            cycling), no-random (reseeding the CBC IV generator from OpenSSL's RAND_bytes
//            failed), sa-expired (the SA is past a hard lifetime: LIFE_PACKETS, LIFE_BYTES or
//            LIFE_SECONDS in the SA file, counting inner packets and their lengths: IPv4 total
//            length, IPv6 payload length + 40).
// Keys:      SA_FILE (positional); POLICY_SPI (bool, false); MTU (0: no check, or 68..65575).
// Uses:      with POLICY_SPI true, user[4] (set by IPsecPolicy: the SPI of the SA its PROTECT
//            rule names, or 0 to choose by the inner destination as without POLICY_SPI).
//            Sets: flow_id (index of the SA in the file's SA list, counting every SA
//            line); user[3] (kMtuAnnoSlot) of output 1's packets. The sequence number starts
//            at 1 per SA and is shared by the workers. The
//            CTR and GCM IV is the 64-bit sequence number (unique per key, as RFC 3686 and RFC
//            4106 require); the CBC IV is unpredictable, as RFC 3602 requires: a per-worker
//            AES-CTR keystream keyed from OpenSSL's RAND_bytes (lib/iv_source.hh), 256 IVs a
//            refill instead of one RAND_bytes call a packet.
// Counters:  soft-expired, hard-expired: outbound SAs this element saw reach their soft or hard
//            lifetime (each SA counted once, by the worker that saw it; also a line on stderr).
//            The graph counts packets and drops per reason.
// Offload:   none (header work; IPsecAES and IPsecAuthHMACSHA1 are the offloadable parts).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/ipsec_sa.hh"
#include "lib/iv_source.hh"

namespace fulcrum {

class IPsecESPEncap final : public ElementBase<IPsecESPEncap> {
 public:
  static constexpr DropReasons kDropReasons{
      "no-sa",     "not-ip",     "too-big",      "seq-overflow",
      "no-random", "sa-expired", "mtu-exceeded", "needs-fragmentation"};
  static constexpr int kMtuOutput = 1;
  static constexpr ElementTraits kTraits{.class_name = "IPsecESPEncap",
                                         .inputs = 1,
                                         .outputs = 2,
                                         .drop_reasons = kDropReasons,
                                         .optional_outputs = 0b10,
                                         .anno = kAnnoReads | kAnnoWrites};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;
  TableSlotBase* table_slot() override { return slot_.get(); }
  void counters(std::vector<Counter>& out) const override {
    out.push_back({"soft-expired", soft_expired_});
    out.push_back({"hard-expired", hard_expired_});
  }

  const SaTable& table() const { return *slot_->current(); }

 private:
  // What encapsulation needs of the inner packet; spi: IPsecPolicy's (0: by destination).
  struct Inner {
    uint32_t spi = 0;
    uint32_t len = 0;  // IPv4 total length, or IPv6 payload length + 40
    uint16_t sa = SaTable::kNoSa;
    uint8_t tc = 0;  // IPv4 TOS or IPv6 traffic class
    uint8_t next_header = 0;
    bool df = false;  // may not be fragmented
  };
  bool parse_inner(const uint8_t* d, uint32_t len, Inner& in) const;
  Verdict encap(Packet* p);

  std::string file_;
  bool policy_spi_ = false;
  uint32_t mtu_ = 0;
  bool mtu_output_ = false;
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
  std::unique_ptr<IvSource> ivs_;
};

FULCRUM_REGISTER_ELEMENT(IPsecESPEncap);

}  // namespace fulcrum
