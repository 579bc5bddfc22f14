// IP6Lookup — routes IPv6 packets by longest-prefix match of the destination.
//
// Two algorithms (ALGORITHM): the compressed DIR-24-8 trie of paper 003 §3.6
// (src/lib/ip6_trie.hh; TBL24 plus one 256-entry group per address byte, single-child groups
// merged) and binary search on prefix lengths over per-length hash tables (src/lib/ip6_table.hh,
// PacketShader/NBA). Both give the same answers (tests/ip6_table_test.cc checks them against
// rte_lpm6); the trie is the default as the faster in bench/ip6_bench.cc (docs/benchmarks.md),
// the hash tables take far less memory (the trie: 64 MiB TBL24 plus 1 KiB per group).
//
// Ports:     input 0: Ethernet frames. output 0: IPv6 packets with a route to an existing port.
//            Drops: no-route (no prefix matches), no-such-port (the route's port is not below
//            the number of --port flags: only without ports, since a route to a port the
//            run lacks is a load-time error, FILE:LINE), not-ipv6 (frame under 54 bytes or
//            EtherType not 0x86DD; VLAN-tagged frames included).
// Uses:      nothing.  Sets: out_port (the matching route's port).
// Counters:  none (the graph counts packets per port and drops per reason).
// Offload:   none.
// PREFETCH n|auto: lookups per prefetch group (auto: paper 003's model, src/plan/batch_model.hh).
#pragma once

#include <rte_byteorder.h>

#include <array>
#include <bit>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.hh"
#include "elements/ip/route_lookup.hh"
#include "lib/ip6_table.hh"
#include "lib/ip6_trie.hh"

namespace fulcrum {

// The table of one IP6Lookup: a trie or hash tables, behind RouteLookup's table interface.
class Ip6Routes {
 public:
  static constexpr uint16_t kNoRoute = Ip6Table::kNoRoute;
  static constexpr uint16_t kMaxNextHop = Ip6Table::kMaxNextHop;
  static_assert(Ip6Trie::kNoRoute == kNoRoute && Ip6Trie::kMaxNextHop == kMaxNextHop);

  explicit Ip6Routes(std::unique_ptr<Ip6Trie> t) : trie_(std::move(t)) {}
  explicit Ip6Routes(std::unique_ptr<Ip6Table> t) : bsearch_(std::move(t)) {}

  void lookup_bulk(const uint8_t (*addrs)[Ip6Table::kAddrBytes], uint16_t* out, size_t n) const {
    if (trie_)
      trie_->lookup_bulk(addrs, out, n);
    else
      bsearch_->lookup_bulk(addrs, out, n);
  }
  // With a group (PREFETCH): the trie's walks in lockstep; the hash tables keep their own.
  void lookup_bulk(const uint8_t (*addrs)[Ip6Table::kAddrBytes], uint16_t* out, size_t n,
                   unsigned group) const {
    if (trie_)
      trie_->lookup_bulk(addrs, out, n, group);
    else
      bsearch_->lookup_bulk(addrs, out, n);
  }
  static constexpr unsigned kDefaultPrefetch = Ip6Trie::kDefaultPrefetch;
  size_t working_set_bytes() const {
    return trie_ ? trie_->working_set_bytes() : bsearch_->memory_bytes();
  }
  double accesses_per_lookup() const {
    // Binary search over the prefix lengths in use: about log2 of them hash probes.
    return trie_ ? trie_->accesses_per_lookup()
                 : static_cast<double>(std::bit_width(bsearch_->levels()));
  }
  // The trie's walks prefetch each level within their group (the batch model's w); the binary
  // search is not a group prefetch.
  double within_group_levels() const { return trie_ ? trie_->within_group_levels() : 0; }
  size_t size() const { return trie_ ? trie_->size() : bsearch_->size(); }
  // sample_addresses of the table, in network byte order (RouteLookup's probe keys).
  std::vector<std::array<uint8_t, Ip6Table::kAddrBytes>> sample_addresses(size_t n) const {
    const std::vector<Addr6> a = trie_ ? trie_->sample_addresses(n) : bsearch_->sample_addresses(n);
    std::vector<std::array<uint8_t, Ip6Table::kAddrBytes>> out(a.size());
    for (size_t i = 0; i < a.size(); ++i) a[i].to_bytes(out[i].data());
    return out;
  }
  const Ip6Trie* trie() const { return trie_.get(); }
  const Ip6Table* bsearch() const { return bsearch_.get(); }

 private:
  std::unique_ptr<Ip6Trie> trie_;
  std::unique_ptr<Ip6Table> bsearch_;
};

class IP6Lookup final : public RouteLookup<IP6Lookup, Ip6Routes> {
 public:
  static constexpr std::string_view kWrongFamilyReason = "not-ipv6";
  static constexpr DropReasons kDropReasons{"no-route", "no-such-port", kWrongFamilyReason};
  static constexpr ElementTraits kTraits{"IP6Lookup", 1, 1, kDropReasons};
  static constexpr std::string_view kStorageKey = "ipv6-routes:";
  static constexpr std::string_view kTableKind = "IPv6 routes";
  static constexpr std::string_view kFileHelp =
      "route file, lines \"X:X::/LEN PORT\" with # comments (src/lib/route6_table.hh); loaded "
      "once per process and shared by every worker (the trie also with IP6LookupOffload)";
  static constexpr std::string_view kTrie = "trie";
  static constexpr std::string_view kBsearch = "bsearch";

  static constexpr uint32_t kEtherHeaderLen = 14;
  static constexpr uint32_t kEtherTypeOffset = 12;
  static constexpr uint32_t kIpv6HeaderLen = 40;
  static constexpr uint32_t kIpv6DstField = 24;  // offset of the destination in the IPv6 header
  static constexpr uint32_t kIpv6DstOffset = kEtherHeaderLen + kIpv6DstField;
  static constexpr uint32_t kMinFrameLen = kEtherHeaderLen + kIpv6HeaderLen;
  static constexpr uint16_t kEtherTypeIpv6Be = RTE_BE16(0x86DD);

  using Addr = uint8_t[Ip6Table::kAddrBytes];  // network byte order

  static bool destination(Packet* p, Addr& out) {
    const uint8_t* d = data(p);
    uint16_t ether_type;
    std::memcpy(&ether_type, d + kEtherTypeOffset, sizeof(ether_type));
    const bool ok = length(p) >= kMinFrameLen && ether_type == kEtherTypeIpv6Be;
    if (ok) [[likely]]
      std::memcpy(out, d + kIpv6DstOffset, Ip6Table::kAddrBytes);
    else
      std::memset(out, 0, Ip6Table::kAddrBytes);
    return ok;
  }

  Status configure_keys(Args& args);
  std::string table_variant() const { return algorithm_; }
  static Result<std::shared_ptr<Ip6Routes>> build_table(const std::string& file, uint32_t max_port,
                                                        const std::string& algorithm);

 private:
  std::string algorithm_{kTrie};
};

FULCRUM_REGISTER_ELEMENT(IP6Lookup);

}  // namespace fulcrum
