// IPsecPolicy — the security policy database in front of the IPsec gateway (RFC 4301 §4.4.1):
// the first rule of SPD_FILE that matches a packet's addresses, protocol and ports decides.
//
// Ports:     input 0: Ethernet frames carrying IPv4 or IPv6. output 0: PROTECT (to
//            IPsecESPEncap, which uses the SA the rule names with SPI when configured
//            POLICY_SPI true, and otherwise picks the SA by the inner destination: the SA
//            file's selectors; a PROTECT packet without an SA is dropped there as no-sa).
//            output 1: BYPASS (unchanged, in the clear). DISCARD drops. IPv6 packets are
//            classified by the protocol after their extension headers (lib/ip6_ext.hh); rules
//            with IPv4 prefixes match IPv4 packets only, rules with IPv6 prefixes IPv6 ones,
//            rules without prefixes both.
//            Drops: discard (a DISCARD rule, or no rule matched and the DEFAULT is DISCARD, as
//            it is unless the file says otherwise), not-ip (frame under 34 bytes, EtherType
//            neither 0x0800 nor 0x86DD, version not the EtherType's, IPv4 IHL under 5 or total
//            length under the IHL or beyond the frame, IPv6 payload length beyond the frame),
//            truncated (an unfragmented packet or first fragment of TCP or UDP without its 4
//            bytes of ports, or of ICMP / ICMPv6 without its type and code; an IPv6 extension
//            header chain that runs past the payload, puts hop-by-hop after the first, or is
//            longer than 8 headers).
//            SPD_FILE is reloadable at run time (POST /api/reload, docs/operations.md).
#pragma once

#include <memory>
#include <string>

#include "core/element.hh"
#include "core/registry.hh"
#include "core/table_slot.hh"
#include "lib/ipsec_spd.hh"

namespace fulcrum {

class IPsecPolicy final : public ElementBase<IPsecPolicy> {
 public:
  static constexpr DropReasons kDropReasons{"discard", "not-ip", "truncated"};
  static constexpr ElementTraits kTraits{.class_name = "IPsecPolicy",
                                         .inputs = 1,
                                         .outputs = 2,
                                         .drop_reasons = kDropReasons,
                                         .anno = kAnnoWrites};
  static constexpr int kProtectOutput = 0;
  static constexpr int kBypassOutput = 1;

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;
  TableSlotBase* table_slot() override { return slot_.get(); }

 private:
  Verdict classify(const SpdTable& spd, Packet* p) const;
  static bool read_ports(const uint8_t* l4, uint32_t room, SpdPacket& k);

  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<TableSlot<SpdTable>> slot_;
};

FULCRUM_REGISTER_ELEMENT(IPsecPolicy);

}  // namespace fulcrum
