// IPLookup — routes IPv4 packets by longest-prefix match of the destination (DIR-24-8).
//
// Ports:     input 0: Ethernet frames. output 0: IPv4 packets with a route to an existing port.
//            Drops: no-route (no prefix matches), no-such-port (the route's port is not below
//            the number of --port flags), not-ipv4 (frame under 34 bytes or EtherType not
//            0x0800; VLAN-tagged frames included).
// Config:    FILE (positional): route file, lines "A.B.C.D/LEN PORT" with # comments (see
//            src/lib/route_table.hh); a relative path is relative to the current directory.
//            Loaded once per process in initialize() and shared by every worker
//            (shared storage key "ipv4-routes:FILE").
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
#include "lib/dir24_8.hh"

namespace fulcrum {

class IPLookup final : public ElementBase<IPLookup> {
 public:
  enum DropReason : int { kDropNoRoute, kDropNoSuchPort, kDropNotIpv4 };
  static constexpr std::array<std::string_view, 3> kDropReasons{"no-route", "no-such-port",
                                                                "not-ipv4"};
  static constexpr ElementTraits kTraits{"IPLookup", 1, 1, kDropReasons};

  static constexpr uint32_t kEtherHeaderLen = 14;
  static constexpr uint32_t kEtherTypeOffset = 12;
  static constexpr uint32_t kIpv4MinHeaderLen = 20;
  static constexpr uint32_t kIpv4DstField = 16;  // offset of the destination in the IPv4 header
  static constexpr uint32_t kIpv4DstOffset = kEtherHeaderLen + kIpv4DstField;
  static constexpr uint32_t kMinFrameLen = kEtherHeaderLen + kIpv4MinHeaderLen;
  static constexpr uint16_t kEtherTypeIpv4 = 0x0800;
  static constexpr uint16_t kEtherTypeIpv4Be = RTE_BE16(kEtherTypeIpv4);

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;

  // Three passes so that the table accesses of all packets overlap: gather the destinations,
  // look them all up (Dir24_8::lookup_bulk prefetches), then write the verdicts. A batch without
  // excluded slots takes plain loops over [0, count).
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

  const Dir24_8& table() const { return *table_; }
  const std::string& file() const { return file_; }

 private:
  // Lookup result standing for "not an IPv4 frame": above every next hop, below kNoRoute.
  static constexpr uint16_t kHopNotIpv4 = Dir24_8::kNoRoute - 1;
  static_assert(kHopNotIpv4 > Dir24_8::kMaxNextHop);
  static constexpr uint32_t kWordBits = 64;  // bits per word of the not-IPv4 slot mask

  template <class ForEachLive>
  void process(PacketBatch& batch, ForEachLive&& for_each_live) {
    alignas(64) uint32_t addrs[kMaxBatch];
    alignas(64) uint16_t hops[kMaxBatch];
    uint64_t not_ipv4[PacketBatch::kMaskWords] = {};
    const uint32_t n = batch.count();
    // Excluded slots are looked up too (the bulk lookup runs over [0, n)), as address 0.
    if (batch.has_mask()) std::memset(addrs, 0, n * sizeof(addrs[0]));
    for_each_live([&](uint32_t i, Packet* p) {
      const uint8_t* d = data(p);
      uint16_t ether_type;
      std::memcpy(&ether_type, d + kEtherTypeOffset, sizeof(ether_type));
      const bool ok = length(p) >= kMinFrameLen && ether_type == kEtherTypeIpv4Be;
      uint32_t dst = 0;
      if (ok) [[likely]]
        std::memcpy(&dst, d + kIpv4DstOffset, sizeof(dst));
      not_ipv4[i / kWordBits] |= uint64_t{!ok} << (i % kWordBits);
      addrs[i] = rte_be_to_cpu_32(dst);
    });
    table_->lookup_bulk(addrs, hops, n);
    for (uint32_t w = 0; w < PacketBatch::kMaskWords; ++w)
      for (uint64_t bits = not_ipv4[w]; bits != 0; bits &= bits - 1)
        hops[w * kWordBits + std::countr_zero(bits)] = kHopNotIpv4;
    Verdict* results = batch.results();
    const uint16_t ports = ports_;
    for_each_live([&](uint32_t i, Packet* p) {
      const uint16_t hop = hops[i];
      if (hop < ports) [[likely]] {
        anno(p).out_port = hop;
        results[i] = Verdict::out(0);
      } else {
        results[i] = Verdict::drop(hop == Dir24_8::kNoRoute ? kDropNoRoute
                                   : hop == kHopNotIpv4     ? kDropNotIpv4
                                                            : kDropNoSuchPort);
      }
    });
  }

  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<const Dir24_8> table_;
  uint16_t ports_ = 0;
};

}  // namespace fulcrum
