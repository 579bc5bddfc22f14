// ICMPError — turns a packet into the ICMP error message about it, addressed to its sender.
//
// Ports:     input 0: Ethernet frames with a checked IPv4 header at offset 14 (e.g. output 1
//            of DecIPTTL). output 0: the ICMP error (RFC 792) in the same buffer: Ethernet
//            addresses swapped, a new IPv4 header from SRC to the original source (TTL 64,
//            TOS 0xC0 per RFC 1812 §4.3.2.5), the ICMP header, then the original IP header
//            and the first 8 bytes of its payload (Ethernet padding excluded); out_port set
//            to in_port. For "fragmentation needed" (TYPE 3, CODE 4) the MTU key's value is
//            the next-hop MTU of RFC 1191 §4 (the header's last 16 bits); MTU anno takes it
//            from each packet's user[3] instead (kMtuAnnoSlot: the inner MTU IPsecESPEncap
//            sets on the packets of its output 1).
// Uses:      in_port; user[3] with MTU anno.  Sets: out_port.
// Counters:  none; the graph counts drops by reason: "truncated" (frame shorter than its IPv4
//            header), "no-error-allowed" (RFC 1812 §4.3.2.7: the packet is itself an ICMP
//            error, a non-initial fragment, sent to a broadcast or multicast address, or from
//            0.0.0.0, a broadcast, multicast, loopback or class E source).
// Offload:   none.
//
// Click's ICMPError, restricted to what an IPv4 forwarder needs (the thesis' TTL-expired reply).
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>

#include <array>
#include <cstdint>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class ICMPError final : public PacketElement<ICMPError> {
 public:
  static constexpr DropReasons kDropReasons{"truncated", "no-error-allowed"};
  static constexpr ElementTraits kTraits{.class_name = "ICMPError",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = kDropReasons,
                                         .anno = kAnnoReads};

  static constexpr uint32_t kIcmpHeaderLen = 8;
  static constexpr uint32_t kQuotedPayload = 8;  // RFC 792: the first 64 bits of the data
  static constexpr uint8_t kTtl = 64;
  static constexpr uint8_t kTos = 0xC0;  // precedence 6, internetwork control

  Status configure(Args& args) override;
  Verdict process(Packet* p);

  // Whether RFC 1812 §4.3.2.7 lets a router send an ICMP error about this header.
  static bool error_allowed(const rte_ipv4_hdr* ip, uint32_t available);

 private:
  uint32_t src_ = 0;  // host byte order
  uint8_t type_ = 0;
  uint8_t code_ = 0;
  uint32_t mtu_ = 0;
  bool mtu_from_anno_ = false;
  uint16_t next_id_ = 0;
};

FULCRUM_REGISTER_ELEMENT(ICMPError);

}  // namespace fulcrum
