// Ip6Trie: IPv6 longest-prefix match in the compressed DIR-24-8 trie of paper 003 §3.6
// (APSys'17: DPDK's rte_lpm6 with TRIE compression).
//
// The trie is rte_lpm6's: a TBL24 indexed by the address's first 24 bits, then tbl8 groups of
// 256 entries, each indexed by one more address byte; a prefix whose length is not a multiple
// of 8 is expanded over the entries it covers, and an entry holds either a next hop or a link
// to the group of the next byte. Without compression a lookup of a /64 walks TBL24 and five
// groups, one dependent memory access each.
//
// The compression (§3.6): a child group is merged with its parent when it is the parent's only
// child, i.e. a group that ends no route and has a single link is left out, and the link that
// led to it points straight to the group below, which records the address byte it indexes.
// A chain of such groups collapses into one link: a random /48 of a BGP-like table (one route
// under its 24-bit TBL24 entry) takes TBL24 and one group instead of TBL24 and three groups.
// The bytes a link skips are checked at the group it reaches: every group keeps its path (the
// first 8 x byte bits every address that reaches it must carry) and the next hop that applies
// when an address leaves that path within the skipped bytes (the best route above the skipped
// groups: they end no route). The check needs the group's header only behind a link that
// skips; the header and the entry are fetched together.
//
// Layout (flat arrays in one TableMemory block, device-ready: 32-bit indices, no pointers):
//   tbl24   2^24 x uint32 entry
//   groups  groups() x 256 x uint32 entry
//   headers groups() x 32 B {path hi, path lo, fallback hop}
// An entry is a next hop (bit 31 clear, the hop in bits 0..15, kNoRoute for none) or a link
// (bit 31 set, the address byte the group indexes in bits 27..30, the group in bits 0..26).
//
// Usage: add() every route, build(), then lookup()/lookup_bulk() from any number of threads
// (build() itself must not run while other threads look up). The result does not depend on the
// insertion order; adding a prefix twice keeps the last next hop. The tables are as large as
// rte_lpm6's TBL24 (64 MiB) even when empty, plus 1 KiB per group.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/result.hh"
#include "kernels/common/ip6_trie_layout.h"
#include "lib/ip6_table.hh"
#include "lib/prefetch_group.hh"
#include "lib/table_memory.hh"

namespace fulcrum {

class Ip6Trie {
 public:
  static constexpr uint16_t kNoRoute = Ip6Table::kNoRoute;
  static constexpr uint16_t kMaxNextHop = Ip6Table::kMaxNextHop;
  static constexpr uint8_t kMaxPrefixLen = Ip6Table::kMaxPrefixLen;
  static constexpr size_t kAddrBytes = Ip6Table::kAddrBytes;
  // The encoding the device kernel walks too (kernels/common/ip6_trie_layout.h).
  static constexpr uint32_t kTbl24Bits = IP6_TRIE_TBL24_BITS;    // as rte_lpm6 and DIR-24-8
  static constexpr uint32_t kStrideBits = IP6_TRIE_STRIDE_BITS;  // further levels: one byte
  static constexpr uint32_t kTbl24Entries = uint32_t{1} << kTbl24Bits;
  static constexpr uint32_t kGroupEntries = uint32_t{1} << kStrideBits;
  static constexpr uint32_t kMaxGroups = uint32_t{1} << 27;
  // lookup_bulk runs the walks of this many addresses in lockstep.
  static constexpr size_t kGroup = 32;

  Ip6Trie();
  ~Ip6Trie();
  Ip6Trie(const Ip6Trie&) = delete;
  Ip6Trie& operator=(const Ip6Trie&) = delete;

  // Adds a route (prefix in network byte order, 16 bytes). Errors as Ip6Table::add. Takes
  // effect at the next build().
  Status add(const uint8_t* prefix, uint8_t len, uint16_t next_hop);

  // (Re)builds the trie from every route added so far. Fails when out of memory.
  Status build();

  // Next hop of the longest prefix matching `addr` (16 bytes, network order), or kNoRoute.
  uint16_t lookup(const uint8_t* addr) const { return lookup(Addr6::from_bytes(addr)); }
  uint16_t lookup(Addr6 a) const {
    if (tbl24_ == nullptr) [[unlikely]]
      return kNoRoute;
    uint32_t e = tbl24_[a.hi >> kTbl24Shift];
    uint32_t expect = kFirstGroupByte;  // the byte a link that skips nothing leads to
    while (e & kLink) {
      const uint32_t byte = link_byte(e), g = e & kGroupMask;
      const uint32_t next = groups_[size_t{g} * kGroupEntries + byte_of(a, byte)];
      if (byte != expect && !on_path(headers_[g], a, byte)) return headers_[g].fallback;
      expect = byte + 1;
      e = next;
    }
    return static_cast<uint16_t>(e);
  }

  // lookup() for n addresses. The walks of kGroup addresses advance one level at a time: each
  // step's entries (and headers, behind a link that skips) are prefetched for the whole group
  // before any is read; finished walks drop out of the group's active list.
  void lookup_bulk(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n) const;
  // The same with `group` walks in lockstep (valid_prefetch_group; another value: kGroup).
  void lookup_bulk(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n,
                   unsigned group) const;
  static constexpr unsigned kDefaultPrefetch = kGroup;

  // Bytes lookups can touch (TBL24's lines that hold a route or link, the groups and their
  // headers) and the mean accesses per lookup over the routes' addresses: the element profile of
  // the placement model (src/plan/). As of the last build().
  size_t working_set_bytes() const { return working_set_; }
  double accesses_per_lookup() const { return levels_; }
  // Of them, those prefetched within their group rather than a group ahead (paper 003's batch
  // model, plan/batch_model.hh): all, since lookup_bulk walks each level in lockstep.
  double within_group_levels() const { return levels_; }

  size_t size() const { return routes_.size(); }  // distinct routes
  std::vector<Addr6> sample_addresses(size_t n) const { return addresses_under(routes_, n); }
  size_t groups() const { return groups_n_; }  // tbl8 groups
  // Groups the compression left out (rte_lpm6 would hold groups() + merged_groups()).
  size_t merged_groups() const { return merged_; }
  size_t memory_bytes() const { return memory_ ? memory_->size() : 0; }
  int depth() const { return depth_; }  // most groups a lookup visits
  bool built() const { return built_; }

  // The flat arrays (layout above), read-only, for uploading to a device; empty before build().
  // header_words(): kHeaderWords uint64 per group: path hi, path lo, fallback hop (bits 0..15).
  static constexpr size_t kHeaderWords = IP6_TRIE_HEADER_WORDS;
  std::span<const uint32_t> tbl24() const { return {tbl24_, tbl24_ ? size_t{kTbl24Entries} : 0}; }
  std::span<const uint32_t> group_entries() const {
    return {groups_, groups_ ? groups_n_ * kGroupEntries : 0};
  }
  std::span<const uint64_t> header_words() const {
    return {reinterpret_cast<const uint64_t*>(headers_), headers_ ? groups_n_ * kHeaderWords : 0};
  }

 private:
  struct alignas(32) Header {
    uint64_t hi;  // the group's path: the first 8 x byte bits of every address routed to it
    uint64_t lo;
    uint16_t fallback;  // the next hop for an address off the path (kNoRoute: none)
  };
  static_assert(sizeof(Header) == kHeaderWords * sizeof(uint64_t));
  static_assert(offsetof(Header, fallback) == 2 * sizeof(uint64_t));

  using Route = Route6Entry;
  struct Builder;

  static constexpr uint32_t kLink = IP6_TRIE_LINK;
  static constexpr uint32_t kByteShift = IP6_TRIE_BYTE_SHIFT;
  static constexpr uint32_t kByteMask = IP6_TRIE_BYTE_MASK;
  static constexpr uint32_t kGroupMask = IP6_TRIE_GROUP_MASK;
  static constexpr uint32_t kHopMask = IP6_TRIE_HOP_MASK;
  static constexpr uint32_t kTbl24Shift = IP6_TRIE_TBL24_SHIFT;
  static constexpr uint32_t kFirstGroupByte = IP6_TRIE_FIRST_GROUP_BYTE;
  static_assert(kGroupMask == kMaxGroups - 1 && kGroupEntries == IP6_TRIE_GROUP_ENTRIES);
  static constexpr uint32_t kBytesPerWord = 8;
  static constexpr uint32_t kLastByteShift = 56;  // byte 0 of a word: its top 8 bits

  static uint32_t link_byte(uint32_t e) { return (e >> kByteShift) & kByteMask; }
  static uint32_t byte_of(Addr6 a, uint32_t byte) {
    const uint64_t w = byte < kBytesPerWord ? a.hi : a.lo;
    return static_cast<uint32_t>(w >> (kLastByteShift - kStrideBits * (byte % kBytesPerWord))) &
           (kGroupEntries - 1);
  }
  // Whether `a` carries the path of the group (whose entries `byte` indexes).
  static bool on_path(const Header& h, Addr6 a, uint32_t byte) {
    const uint32_t bits = byte * kStrideBits;
    return (((a.hi & Addr6::hi_mask(bits)) ^ h.hi) | ((a.lo & Addr6::lo_mask(bits)) ^ h.lo)) == 0;
  }

  template <size_t G>
  void lookup_grouped(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n) const;
  void measure_working_set();
  size_t walk_levels(Addr6 a) const;  // accesses lookup(a) makes

  std::vector<Route> routes_;
  std::unique_ptr<TableMemory> memory_;
  const uint32_t* tbl24_ = nullptr;
  const uint32_t* groups_ = nullptr;
  const Header* headers_ = nullptr;
  size_t groups_n_ = 0;
  size_t merged_ = 0;
  int depth_ = 0;
  bool built_ = false;
  size_t working_set_ = 0;
  double levels_ = 1;
};

}  // namespace fulcrum
