// CheckIPHeader — drops Ethernet frames that do not carry a valid IPv4 header.
//
// Ports:     input 0: Ethernet frames (IPv4 header at offset 14). output 0: frames that pass
//            every check, unchanged (Ethernet padding past the IP total length stays).
// Uses:      nothing.  Sets: nothing.
// Counters:  none; the graph counts drops by reason, checked in this order: "truncated"
//            (frame shorter than 34 bytes), "not-ipv4" (ethertype not 0x0800 or version not
//            4), "bad-ihl" (IHL < 5 or header past the frame), "bad-length" (total length
//            below the header length or past the frame), "bad-checksum", "bad-source"
//            (0.0.0.0, 255.255.255.255, 224.0.0.0/4 or a BADSRC address).
// Offload:   none.
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class CheckIPHeader final : public PacketElement<CheckIPHeader> {
 public:
  static constexpr DropReasons kDropReasons{"truncated",  "not-ipv4",     "bad-ihl",
                                            "bad-length", "bad-checksum", "bad-source"};
  static constexpr ElementTraits kTraits{"CheckIPHeader", 1, 1, kDropReasons};

  Status configure(Args& args) override;

  Verdict process(Packet* p) {
    const uint32_t len = length(p);
    if (len < kEtherIpv4MinLen) return Verdict::drop(kDropReasons["truncated"]);
    const auto* eth = rte_pktmbuf_mtod(p, const rte_ether_hdr*);
    const auto* ip = rte_pktmbuf_mtod_offset(p, const rte_ipv4_hdr*, RTE_ETHER_HDR_LEN);
    if (eth->ether_type != kIpv4EtherType || (ip->version_ihl >> kIpVersionShift) != kIpv4Version)
      return Verdict::drop(kDropReasons["not-ipv4"]);
    const uint32_t room = len - RTE_ETHER_HDR_LEN;
    const uint32_t hlen = rte_ipv4_hdr_len(ip);
    if (hlen < sizeof(rte_ipv4_hdr) || hlen > room) return Verdict::drop(kDropReasons["bad-ihl"]);
    const uint32_t total = rte_be_to_cpu_16(ip->total_length);
    if (total < hlen || total > room) return Verdict::drop(kDropReasons["bad-length"]);
    if (verify_checksum_ && !header_verifies(ip, hlen))
      return Verdict::drop(kDropReasons["bad-checksum"]);
    if (bad_source(rte_be_to_cpu_32(ip->src_addr)))
      return Verdict::drop(kDropReasons["bad-source"]);
    return Verdict::out(0);
  }

 private:
  static constexpr uint32_t kEtherIpv4MinLen = RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr);
  static constexpr rte_be16_t kIpv4EtherType = RTE_BE16(RTE_ETHER_TYPE_IPV4);
  static constexpr uint8_t kIpv4Version = 4;
  static constexpr uint8_t kIpVersionShift = 4;
  // One's complement sum of a header whose checksum verifies.
  static constexpr uint16_t kIpChecksumVerified = 0xFFFF;
  static constexpr uint32_t kLimitedBroadcast = RTE_IPV4(255, 255, 255, 255);
  static constexpr uint64_t kLow32 = 0xFFFFFFFF;
  static constexpr int kHalf64 = 32;

  // Whether the header's one's complement sum is 0xFFFF. An option-less header is summed from
  // two 8-byte loads and one 4-byte load (a 16-byte copy to the stack read back as words made
  // the compiler spill the header through memory) as 32-bit halves: S < 2^35. Folding keeps S
  // mod 0xFFFF (2^16 = 1 mod 0xFFFF) and folds a nonzero S into [1, 0xFFFF], so the folded sum
  // is 0xFFFF exactly when S != 0 and S mod 0xFFFF == 0: a multiply instead of four dependent
  // folds (equal to the folds on 2e8 random and valid headers, checked outside the tree).
  static bool header_verifies(const rte_ipv4_hdr* ip, uint32_t hlen) {
    if (hlen != sizeof(rte_ipv4_hdr)) [[unlikely]]
      return rte_raw_cksum(ip, hlen) == kIpChecksumVerified;
    const auto* h = reinterpret_cast<const uint8_t*>(ip);
    uint64_t a, b;
    uint32_t c;
    std::memcpy(&a, h, sizeof a);
    std::memcpy(&b, h + sizeof a, sizeof b);
    std::memcpy(&c, h + 2 * sizeof a, sizeof c);
    const uint64_t sum = ((a & kLow32) + (a >> kHalf64)) + ((b & kLow32) + (b >> kHalf64)) + c;
    return sum != 0 && sum % kIpChecksumVerified == 0;
  }

  bool bad_source(uint32_t src) const {
    if (src == RTE_IPV4_ANY || src == kLimitedBroadcast || RTE_IS_IPV4_MCAST(src)) return true;
    for (uint32_t a : bad_sources_)
      if (src == a) return true;
    return false;
  }

  bool verify_checksum_ = true;
  std::vector<uint32_t> bad_sources_;  // host byte order
};

FULCRUM_REGISTER_ELEMENT(CheckIPHeader);

}  // namespace fulcrum
