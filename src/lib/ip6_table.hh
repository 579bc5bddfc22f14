// Ip6Table: IPv6 longest-prefix match by binary search on prefix lengths (Waldvogel et al.,
// SIGCOMM'97; the IPv6 lookup of PacketShader and NBA).
//
// One open-addressing hash table (a level) per distinct prefix length holds the prefixes of that
// length plus markers. The levels form a binary search tree ordered by length: a search probes
// a level, goes to the longer subtree when the address's first M bits are there and to the
// shorter one when not. For a prefix of length L, a marker is inserted at every length M < L on
// the tree path to L. Every entry (prefix or marker) carries its best-matching prefix (BMP): the
// next hop of the longest real prefix of length <= M that contains it, so a search that follows
// a marker and then finds nothing longer answers with the marker's BMP and never backtracks.
// A prefix that no longer route extends ends the search where it is found.
//
// The tree is weighted by routes per length (Waldvogel's asymmetric binary search): each
// subtree's root splits its routes evenly, so the common lengths (/48, /64 in BGP-like tables)
// sit near the root and most lookups end there after 1..3 probes; a rare length takes at most
// depth() probes (about 9 for 113 distinct lengths).
//
// Layout: the hash tables are flat arrays of 32-byte slots {key hi, key lo, BMP next hop,
// flags} (two slots a cache line) in one TableMemory block, linear probing, load factor at most
// 1/2. Keys are the address bits above the length, as two 64-bit host-order words.
//
// Usage: add() every route, build(), then lookup()/lookup_bulk() from any number of threads
// (build() itself must not run while other threads look up). The result does not depend on the
// insertion order; adding a prefix twice keeps the last next hop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "core/result.hh"
#include "lib/table_memory.hh"

namespace fulcrum {

// An IPv6 address or prefix as two host-order 64-bit words (hi = first 8 bytes on the wire).
struct Addr6 {
  uint64_t hi = 0;
  uint64_t lo = 0;

  static Addr6 from_bytes(const uint8_t* b) {
    uint64_t hi, lo;
    std::memcpy(&hi, b, sizeof hi);
    std::memcpy(&lo, b + sizeof hi, sizeof lo);
    return Addr6{__builtin_bswap64(hi), __builtin_bswap64(lo)};
  }
  void to_bytes(uint8_t* b) const {
    const uint64_t h = __builtin_bswap64(hi), l = __builtin_bswap64(lo);
    std::memcpy(b, &h, sizeof h);
    std::memcpy(b + sizeof h, &l, sizeof l);
  }
  // The first `len` bits (0..128), the rest zero.
  Addr6 masked(uint32_t len) const { return Addr6{hi & hi_mask(len), lo & lo_mask(len)}; }
  static constexpr uint32_t kWordBits = 64;
  static constexpr uint64_t hi_mask(uint32_t len) {
    return len >= kWordBits ? ~uint64_t{0} : len == 0 ? 0 : ~uint64_t{0} << (kWordBits - len);
  }
  static constexpr uint64_t lo_mask(uint32_t len) {
    return len <= kWordBits ? 0 : ~uint64_t{0} << (2 * kWordBits - len);
  }
  bool operator==(const Addr6&) const = default;
  auto operator<=>(const Addr6&) const = default;
};

// A route as the IPv6 lookup structures (Ip6Table, Ip6Trie) collect it before build().
struct Route6Entry {
  Addr6 prefix;
  uint8_t len;
  uint16_t hop;
  uint32_t order;  // insertion order: the last of equal routes wins
};

// n addresses, each under a route drawn uniformly from `routes` (its host bits random),
// deterministic; none without routes. The keys of `PREFETCH auto`'s probe of an IPv6 lookup
// (Ip6Trie, Ip6Table: sample_addresses).
std::vector<Addr6> addresses_under(const std::vector<Route6Entry>& routes, size_t n);

// Checks a route (length 0..128, no host bits set, next hop up to max_hop) and appends it.
Status add_route6(std::vector<Route6Entry>& routes, const uint8_t* prefix, uint8_t len,
                  uint16_t next_hop, uint16_t max_hop);
// Sorts the routes by (prefix, length), keeps the last added of equal ones and renumbers
// `order` to the sorted position.
void distinct_routes6(std::vector<Route6Entry>& routes);

class Ip6Table {
 public:
  static constexpr uint16_t kNoRoute = 0xFFFF;
  static constexpr uint16_t kMaxNextHop = 0x7FFE;
  static constexpr uint8_t kMaxPrefixLen = 128;
  static constexpr size_t kAddrBytes = 16;
  // lookup_bulk runs the searches of this many addresses in lockstep.
  static constexpr size_t kGroup = 16;
  // The end of a search path in the tree of levels.
  static constexpr int kNoChild = -1;

  Ip6Table();
  ~Ip6Table();
  Ip6Table(const Ip6Table&) = delete;
  Ip6Table& operator=(const Ip6Table&) = delete;

  // Adds a route (prefix in network byte order, 16 bytes). Errors: length above 128, host bits
  // set beyond the prefix length, next hop above kMaxNextHop. Takes effect at the next build().
  Status add(const uint8_t* prefix, uint8_t len, uint16_t next_hop);

  // (Re)builds the hash tables from every route added so far. Fails when out of memory.
  Status build();

  // Next hop of the longest prefix matching `addr` (16 bytes, network order), or kNoRoute.
  uint16_t lookup(const uint8_t* addr) const { return lookup(Addr6::from_bytes(addr)); }
  uint16_t lookup(Addr6 a) const;

  // lookup() for n addresses. The searches of kGroup addresses advance one level at a time:
  // every slot of a level is prefetched before any is compared, so the table accesses of the
  // group overlap instead of forming one chain of misses per address; finished searches drop
  // out of the group's active list after each step.
  void lookup_bulk(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n) const;

  size_t size() const { return routes_.size(); }  // distinct routes
  std::vector<Addr6> sample_addresses(size_t n) const { return addresses_under(routes_, n); }
  size_t levels() const { return levels_.size(); }  // distinct non-zero prefix lengths
  size_t entries() const { return entries_; }       // prefixes + markers in the hash tables
  size_t markers() const { return markers_; }       // entries that are markers only
  size_t memory_bytes() const { return slots_bytes_; }
  int depth() const { return depth_; }  // most probes a lookup takes
  bool built() const { return built_; }

 private:
  struct alignas(32) Slot {
    uint64_t hi;
    uint64_t lo;
    uint16_t hop;    // the entry's best-matching prefix: a next hop or kNoRoute
    uint16_t flags;  // kUsed, kFinal
  };
  static constexpr uint16_t kUsed = 1;
  // A prefix that no longer route extends: its next hop is the answer, the search stops here.
  static constexpr uint16_t kFinal = 2;
  static_assert(sizeof(Slot) == 32);

  struct Level {
    const Slot* slots;
    uint64_t mask;  // capacity - 1 (the capacity is a power of two, at least 2)
    int shift;      // 64 - log2(capacity): the home slot is hash >> shift
    int left;       // the level searched next when the key is absent (kNoChild: done)
    int right;      // the level searched next when the key is present
    uint64_t hi_mask;
    uint64_t lo_mask;
  };

  using Route = Route6Entry;

  static uint64_t hash(uint64_t hi, uint64_t lo) {
    uint64_t h = hi * kMulHi ^ lo * kMulLo;
    h ^= h >> kMixShift;
    return h * kMulMix;
  }
  static const Slot* find(const Level& l, uint64_t hi, uint64_t lo, const Slot* s) {
    const Slot* end = l.slots + l.mask + 1;
    while (s->flags & kUsed) {
      if (s->hi == hi && s->lo == lo) return s;
      if (++s == end) s = l.slots;
    }
    return nullptr;
  }
  static const Slot* home(const Level& l, uint64_t hi, uint64_t lo) {
    return l.slots + (hash(hi, lo) >> l.shift);
  }

  static constexpr uint64_t kMulHi = 0x9E3779B97F4A7C15ull;
  static constexpr uint64_t kMulLo = 0xC2B2AE3D27D4EB4Full;
  static constexpr uint64_t kMulMix = 0x94D049BB133111EBull;
  static constexpr int kMixShift = 31;

  std::vector<Route> routes_;
  std::vector<Level> levels_;
  std::unique_ptr<TableMemory> memory_;
  uint16_t default_hop_ = kNoRoute;
  int root_ = kNoChild;
  int depth_ = 0;  // most probes a search can take
  size_t entries_ = 0;
  size_t markers_ = 0;
  size_t slots_bytes_ = 0;
  bool built_ = false;
};

}  // namespace fulcrum
