// IP6Lookup — routes IPv6 packets by longest-prefix match of the destination.
//
// Binary search on prefix lengths over per-length hash tables (src/lib/ip6_table.hh).
//
// Ports:     input 0: Ethernet frames. output 0: IPv6 packets with a route to an existing port.
//            Drops: no-route (no prefix matches), no-such-port (the route's port is not below
//            the number of --port flags), not-ipv6 (frame under 54 bytes or EtherType not
//            0x86DD; VLAN-tagged frames included).
// Config:    FILE (positional): route file, lines "X:X::/LEN PORT" with # comments (see
//            src/lib/route6_table.hh); a relative path is relative to the current directory.
//            Loaded once per process in initialize() and shared by every worker
//            (shared storage key "ipv6-routes:FILE").
// Uses:      nothing.  Sets: out_port (the matching route's port).
// Counters:  none (the graph counts packets per port and drops per reason).
// Offload:   none.
#pragma once

#include <rte_byteorder.h>

#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"
#include "lib/ip6_table.hh"

namespace fulcrum {

class IP6Lookup final : public ElementBase<IP6Lookup> {
 public:
  enum DropReason : int { kDropNoRoute, kDropNoSuchPort, kDropNotIpv6 };
  static constexpr std::array<std::string_view, 3> kDropReasons{"no-route", "no-such-port",
                                                                "not-ipv6"};
  static constexpr ElementTraits kTraits{"IP6Lookup", 1, 1, kDropReasons};

  static constexpr uint32_t kEtherHeaderLen = 14;
  static constexpr uint32_t kEtherTypeOffset = 12;
  static constexpr uint32_t kIpv6HeaderLen = 40;
  static constexpr uint32_t kIpv6DstField = 24;  // offset of the destination in the IPv6 header
  static constexpr uint32_t kIpv6DstOffset = kEtherHeaderLen + kIpv6DstField;
  static constexpr uint32_t kMinFrameLen = kEtherHeaderLen + kIpv6HeaderLen;
  static constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
  static constexpr uint16_t kEtherTypeIpv6Be = RTE_BE16(kEtherTypeIpv6);

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;

  // Three passes, as IPLookup: gather the destinations, look them all up (lookup_bulk runs the
  // searches of a group in lockstep with prefetches), then write the verdicts.
  void process_batch(PacketBatch& batch) override {
    if (!batch.has_mask()) [[likely]] {
      Packet* const* pkts = batch.data();
      const uint32_t n = batch.count();
      process(batch, [pkts, n](auto&& f) {
        for (uint32_t i = 0; i < n; ++i) f(i, pkts[i]);
      });
    } else {
      process(batch, [&batch](auto&& f) { batch.for_each(f); });
    }
  }

  const Ip6Table& table() const { return *table_; }
  const std::string& file() const { return file_; }

 private:
  // Lookup result standing for "not an IPv6 frame": above every next hop, below kNoRoute.
  static constexpr uint16_t kHopNotIpv6 = Ip6Table::kNoRoute - 1;
  static_assert(kHopNotIpv6 > Ip6Table::kMaxNextHop);
  static constexpr uint32_t kWordBits = 64;  // bits per word of the not-IPv6 slot mask

  template <class ForEachLive>
  void process(PacketBatch& batch, ForEachLive&& for_each_live) {
    alignas(64) uint8_t addrs[kMaxBatch][Ip6Table::kAddrBytes];
    alignas(64) uint16_t hops[kMaxBatch];
    uint64_t not_ipv6[PacketBatch::kMaskWords] = {};
    const uint32_t n = batch.count();
    // Excluded slots are looked up too (the bulk lookup runs over [0, n)), as address ::.
    if (batch.has_mask()) std::memset(addrs, 0, n * sizeof(addrs[0]));
    for_each_live([&](uint32_t i, Packet* p) {
      const uint8_t* d = data(p);
      uint16_t ether_type;
      std::memcpy(&ether_type, d + kEtherTypeOffset, sizeof(ether_type));
      const bool ok = length(p) >= kMinFrameLen && ether_type == kEtherTypeIpv6Be;
      if (ok) [[likely]]
        std::memcpy(addrs[i], d + kIpv6DstOffset, Ip6Table::kAddrBytes);
      else
        std::memset(addrs[i], 0, Ip6Table::kAddrBytes);
      not_ipv6[i / kWordBits] |= uint64_t{!ok} << (i % kWordBits);
    });
    table_->lookup_bulk(addrs, hops, n);
    for (uint32_t w = 0; w < PacketBatch::kMaskWords; ++w)
      for (uint64_t bits = not_ipv6[w]; bits != 0; bits &= bits - 1)
        hops[w * kWordBits + std::countr_zero(bits)] = kHopNotIpv6;
    Verdict* results = batch.results();
    const uint16_t ports = ports_;
    for_each_live([&](uint32_t i, Packet* p) {
      const uint16_t hop = hops[i];
      if (hop < ports) [[likely]] {
        anno(p).out_port = hop;
        results[i] = Verdict::out(0);
      } else {
        results[i] = Verdict::drop(hop == Ip6Table::kNoRoute ? kDropNoRoute
                                   : hop == kHopNotIpv6      ? kDropNotIpv6
                                                             : kDropNoSuchPort);
      }
    });
  }

  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<const Ip6Table> table_;
  uint16_t ports_ = 0;
};

}  // namespace fulcrum
