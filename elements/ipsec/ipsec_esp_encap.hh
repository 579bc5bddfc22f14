// IPsecESPEncap — wraps IPv4 packets into ESP tunnel mode (RFC 4303): outer IPv4, ESP header, IV.
//
// Ports:     input 0: Ethernet frames carrying IPv4. output 0: Ethernet + outer IPv4 (protocol
//            50, TUNNEL_SRC -> TUNNEL_DST of the SA) + SPI + sequence number + IV (8 bytes for
//            AES-CTR SAs, 16 for AES-CBC), then the inner IPv4 packet (Ethernet padding
//            removed), padding 1,2,3.. to 4-byte alignment (16 for CBC), pad length, next
//            header 4, and 12 zero bytes reserved for the ICV. The
//            payload is still in the clear: IPsecAES encrypts it, IPsecAuthHMACSHA1 writes the ICV.
//            Drops: no-sa (no outbound SA selector matches the inner destination), not-ipv4
//            (frame under 34 bytes, EtherType not 0x0800, version not 4, IHL under 5 or total
//            length outside the frame), too-big (the result exceeds 65535 bytes of IPv4 or the
//            buffer's head/tail room, or the frame is in several segments), seq-overflow (the
//            SA used all 2^32-1 sequence numbers; RFC 4303 3.3.3 forbids cycling), no-random
//            (OpenSSL's RAND_bytes failed to give an AES-CBC IV).
// Uses:      nothing.  Sets: flow_id (index of the SA in the file's SA list, counting every SA
//            line). The sequence number starts at 1 per SA and is shared by the workers. The
//            CTR IV is the 64-bit sequence number (unique per key, as RFC 3686 requires); the
//            CBC IV is random (OpenSSL RAND_bytes: unpredictable, as RFC 3602 requires).
// Counters:  none (the graph counts packets and drops per reason).
// Offload:   none (header work; IPsecAES and IPsecAuthHMACSHA1 are the offloadable parts).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/ipsec_sa.hh"

namespace fulcrum {

class IPsecESPEncap final : public ElementBase<IPsecESPEncap> {
 public:
  static constexpr DropReasons kDropReasons{"no-sa", "not-ipv4", "too-big", "seq-overflow",
                                            "no-random"};
  static constexpr ElementTraits kTraits{"IPsecESPEncap", 1, 1, kDropReasons};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;
  TableSlotBase* table_slot() override { return slot_.get(); }

  const SaTable& table() const { return *slot_->current(); }

 private:
  Verdict encap(Packet* p);

  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<TableSlot<SaTable>> slot_;
  // The table of this worker's loop iteration (TableSlot::for_worker), set per batch.
  const SaTable* table_ = nullptr;
  int worker_ = 0;
};

FULCRUM_REGISTER_ELEMENT(IPsecESPEncap);

}  // namespace fulcrum
