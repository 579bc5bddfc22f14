// DecIPTTL — decrements the IPv4 time-to-live and patches the header checksum.
//
// Ports:     input 0: Ethernet frames with a checked IPv4 header at offset 14 (put
//            CheckIPHeader before). output 0: the frame with TTL - 1 and the checksum updated
//            incrementally (RFC 1624, eqn. 3, reduced for a TTL decrement). output 1 (optional):
//            frames whose TTL is 0 or 1, unchanged (e.g. to an ICMP time-exceeded generator);
//            dropped when output 1 is not connected.
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason: "ttl-expired" (TTL <= 1 and output 1 not
//            connected), "truncated" (frame shorter than 34 bytes).
// Offload:   none.
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>

#include <array>
#include <cstdint>
#include <string_view>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class DecIPTTL final : public PacketElement<DecIPTTL> {
 public:
  static constexpr DropReasons kDropReasons{"ttl-expired", "truncated"};
  static constexpr int kExpiredOutput = 1;
  static constexpr ElementTraits kTraits{"DecIPTTL", 1, 2, kDropReasons, 1u << kExpiredOutput};

  Status configure(Args& args) override { return args.finish(); }
  Status initialize(const InitContext&) override {
    expired_to_output_ = output_connected(kExpiredOutput);
    return {};
  }

  Verdict process(Packet* p) {
    if (length(p) < kMinFrameLen) return Verdict::drop(kDropReasons["truncated"]);
    auto* ip = rte_pktmbuf_mtod_offset(p, rte_ipv4_hdr*, RTE_ETHER_HDR_LEN);
    const uint8_t ttl = ip->time_to_live;
    if (ttl <= kLastHopTtl)
      return expired_to_output_ ? Verdict::out(kExpiredOutput)
                                : Verdict::drop(kDropReasons["ttl-expired"]);
    ip->time_to_live = static_cast<uint8_t>(ttl - 1);
    ip->hdr_checksum = ttl_decrement_checksum(ip->hdr_checksum);
    return Verdict::out(0);
  }

  // The checksum after TTL - 1: eqn. 3 below with m' = m - 0x0100 reduces to HC' = HC + 0x0100
  // in one's complement, 0xFFFF folded to 0 (Linux's ip_decrease_ttl). `hc` and the result are
  // as stored in the header (network order; a one's complement sum does not depend on byte
  // order). Equal to checksum_adjust(hc, m, m - 0x0100) for every checksum and every TTL (2..255)
  // and protocol (checked exhaustively; tests/elements_ip_test.cc checks every checksum), in
  // three instructions instead of eqn. 3's chain of folds.
  static constexpr uint16_t ttl_decrement_checksum(rte_be16_t hc) {
    const uint32_t sum = uint32_t{hc} + RTE_BE16(kTtlUnit);
    return static_cast<uint16_t>(sum + (sum >= kWordMask));
  }

  // RFC 1624, eqn. 3: the Internet checksum `hc` of data in which one 16-bit word changed from
  // `m` to `m_new` becomes HC' = ~(~HC + ~m + m'). Never yields 0xFFFF when m_new != 0, so the
  // result matches a full recomputation (RFC 1071), which cannot yield 0xFFFF either.
  static constexpr uint16_t checksum_adjust(uint16_t hc, uint16_t m, uint16_t m_new) {
    uint32_t sum = uint32_t{static_cast<uint16_t>(~hc)} + static_cast<uint16_t>(~m) + m_new;
    sum = (sum & kWordMask) + (sum >> kWordBits);
    sum = (sum & kWordMask) + (sum >> kWordBits);
    return static_cast<uint16_t>(~sum);
  }

 private:
  static constexpr uint32_t kMinFrameLen = RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr);
  static constexpr uint8_t kLastHopTtl = 1;
  static constexpr uint32_t kWordMask = 0xFFFF;
  static constexpr int kWordBits = 16;
  // One TTL in the header's 16-bit word holding TTL (high byte) and protocol, host order.
  static constexpr uint16_t kTtlUnit = 0x0100;

  bool expired_to_output_ = false;
};

FULCRUM_REGISTER_ELEMENT(DecIPTTL);

}  // namespace fulcrum
