// ICMP6Error — turns an IPv6 packet into the ICMPv6 error message about it (RFC 4443), addressed
// to its sender: "Packet Too Big" for the packets IPsecESPEncap(MTU) sends out of its output 1,
// "Time Exceeded" for DecIP6HLim's output 1.
//
// Ports:     input 0: Ethernet frames carrying IPv6 (EtherType 0x86DD). output 0: the ICMPv6
//            error in the same buffer: Ethernet addresses swapped, a new IPv6 header from SRC
//            to the original source (hop limit 64, traffic class and flow label 0, next header
//            58), the ICMPv6 header (TYPE, CODE, checksum over the pseudo-header, and the 32-bit
//            field: the MTU for Packet Too Big, TYPE 2, RFC 4443 §3.2; 0 otherwise), then as
//            much of the original packet as keeps the message within the IPv6 minimum MTU of
//            1280 bytes (RFC 4443 §2.4(c)); out_port set to in_port.
// Keys:      SRC (positional): the router's IPv6 address. TYPE, CODE (positional): 0..255 (1:
//            destination unreachable, 2: packet too big, 3: time exceeded, 4: parameter
//            problem). MTU: the MTU of Packet Too Big, 0..4294967295, or "anno": each packet's
//            user[3] (kMtuAnnoSlot: the inner MTU IPsecESPEncap's output 1 sets).
// Uses:      in_port; user[3] with MTU anno.  Sets: out_port.
// Counters:  none; the graph counts drops by reason: "not-ipv6" (frame under 54 bytes,
//            EtherType not 0x86DD, version not 6, payload length beyond the frame),
//            "no-error-allowed" (RFC 4443 §2.4(e): the packet is itself an ICMPv6 error or
//            its extension headers cannot be walked, its source is unspecified or multicast, or
//            it went to a multicast address and the error is not Packet Too Big or Parameter
//            Problem code 2), "no-room" (the buffer lacks 48 bytes of headroom).
// Offload:   none.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class ICMP6Error final : public PacketElement<ICMP6Error> {
 public:
  static constexpr DropReasons kDropReasons{"not-ipv6", "no-error-allowed", "no-room"};
  static constexpr ElementTraits kTraits{.class_name = "ICMP6Error",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = kDropReasons,
                                         .anno = kAnnoReads};

  static constexpr uint32_t kIcmpHeaderLen = 8;
  static constexpr uint32_t kMinMtu = 1280;  // RFC 8200 §5: the message fits it
  static constexpr uint8_t kHopLimit = 64;
  static constexpr uint8_t kPacketTooBig = 2;

  Status configure(Args& args) override;
  Verdict process(Packet* p);

  // Whether RFC 4443 §2.4(e) lets a node send error `type`/`code` about the IPv6 packet at `ip`
  // (its payload in the buffer).
  static bool error_allowed(const uint8_t* ip, uint8_t type, uint8_t code);

 private:
  std::array<uint8_t, 16> src_{};
  uint8_t type_ = 0;
  uint8_t code_ = 0;
  uint32_t mtu_ = 0;
  bool mtu_from_anno_ = false;
};

FULCRUM_REGISTER_ELEMENT(ICMP6Error);

}  // namespace fulcrum
