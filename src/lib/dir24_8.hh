// Dir24_8: IPv4 longest-prefix match with the DIR-24-8 layout (Gupta et al.; PacketShader, NBA).
//
//   TBL24    2^24 16-bit entries, indexed by the top 24 bits of the address (32 MiB).
//   TBLlong  segments of exactly 256 16-bit entries, indexed by the low 8 bits of the address.
//
// A TBL24 entry is one of
//   0x0000..0x7FFE  a next hop (every address of that /24 resolves to it),
//   0xFFFF          kNoRoute,
//   0x8000 | s      s in 0..0x7FFE: the /24 has routes longer than /24; look in segment s.
// A TBLlong entry is a next hop or kNoRoute. One lookup is one memory access for prefixes up to
// /24 and two for the /24s that hold longer prefixes.
//
// Usage: add() every route, build(), then lookup()/lookup_bulk() from any number of threads
// (build() itself must not run while other threads look up).
// build() orders the routes by prefix length, so the result does not depend on insertion order;
// it can be called again after more add()s. Adding a prefix twice keeps the last next hop.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/result.hh"
#include "kernels/common/dir24_8_layout.h"
#include "lib/prefetch_group.hh"
#include "lib/table_memory.hh"

namespace fulcrum {

class Dir24_8 {
 public:
  static constexpr uint16_t kNoRoute = 0xFFFF;
  static constexpr uint16_t kMaxNextHop = 0x7FFE;
  // The encoding the device kernel walks too (kernels/common/dir24_8_layout.h).
  static constexpr uint16_t kSegmentFlag = DIR24_8_SEGMENT_FLAG;
  static constexpr uint32_t kMaxSegments = DIR24_8_MAX_SEGMENTS;  // segment indices 0..0x7FFE
  static constexpr uint32_t kSegmentBits = DIR24_8_SEGMENT_BITS;  // address bits below the /24
  static constexpr uint32_t kSegmentEntries = 1u << kSegmentBits;
  static constexpr uint32_t kSegmentIndexMask = kSegmentEntries - 1;
  static constexpr uint32_t kTbl24Entries = 1u << 24;
  static constexpr uint8_t kMaxPrefixLen = 32;
  // lookup_bulk resolves addresses in groups of this many, prefetching one group ahead.
  static constexpr size_t kPrefetchGroup = 16;
  static constexpr unsigned kDefaultPrefetch = kPrefetchGroup;

  Dir24_8();
  ~Dir24_8();
  Dir24_8(const Dir24_8&) = delete;
  Dir24_8& operator=(const Dir24_8&) = delete;

  // Adds a route (prefix in host byte order). Errors: length above 32, host bits set beyond the
  // prefix length, next hop above kMaxNextHop. Takes effect at the next build().
  Status add(uint32_t prefix, uint8_t len, uint16_t next_hop);

  // (Re)builds the tables from every route added so far. Fails when the memory cannot be
  // allocated or when more than kMaxSegments /24s hold routes longer than /24.
  Status build();

  // Next hop of the longest prefix matching `addr` (host byte order), or kNoRoute. Only valid
  // after a successful build().
  uint16_t lookup(uint32_t addr) const { return resolve(tbl24_[addr >> kSegmentBits], addr); }

  // lookup() for n addresses, in groups of kPrefetchGroup: the TBL24 entries of the next group
  // are prefetched before the current group is resolved, so the table accesses of two groups are
  // in flight together.
  void lookup_bulk(const uint32_t* addrs, uint16_t* out, size_t n) const {
    lookup_grouped<kPrefetchGroup>(addrs, out, n);
  }
  // The same in groups of `group` (valid_prefetch_group; another value: kPrefetchGroup).
  void lookup_bulk(const uint32_t* addrs, uint16_t* out, size_t n, unsigned group) const {
    with_prefetch_group<kPrefetchGroup>(
        group, [&](auto g) { lookup_grouped<decltype(g)::value>(addrs, out, n); });
  }
  template <size_t G>
  void lookup_grouped(const uint32_t* addrs, uint16_t* out, size_t n) const {
    prefetch(addrs, 0, std::min(n, G));
    for (size_t i = 0; i < n; i += G) {
      const size_t end = std::min(n, i + G);
      prefetch(addrs, end, std::min(n, end + G));
      for (size_t j = i; j < end; ++j) out[j] = lookup(addrs[j]);
    }
  }

  // n addresses, each under a route drawn uniformly from the table's (its host bits random),
  // deterministic; none without routes. The keys of `PREFETCH auto`'s probe of the lookup
  // (elements/ip/route_lookup.hh): real routes' entries and branches, not one address repeated.
  std::vector<uint32_t> sample_addresses(size_t n) const;

  // Distinct routes in the table (as of the last build(); before it, routes added so far).
  size_t size() const { return routes_.size(); }
  size_t segments() const { return segments_; }
  // Bytes of lookup tables: TBL24 plus the TBLlong segments in use.
  size_t memory_bytes() const;
  // Bytes lookups can touch (the cache lines of TBL24 that hold a route, plus the segments), and
  // the table accesses per lookup (one, two for the /24s with longer prefixes): the element
  // profile of the placement model (src/plan/). As of the last build().
  size_t working_set_bytes() const { return working_set_; }
  double accesses_per_lookup() const { return accesses_; }
  bool built() const { return tbl24_ != nullptr; }
  // The tables themselves, for copying to a device (offload/ipv4_lookup.hh); empty before
  // build().
  std::span<const uint16_t> tbl24() const { return {tbl24_, built() ? kTbl24Entries : 0}; }
  std::span<const uint16_t> tbllong() const { return {tbllong_, segments_ * kSegmentEntries}; }

  static bool is_segment(uint16_t e) {
    // True for 0x8000..0xFFFE: one unsigned compare excludes kNoRoute.
    return static_cast<uint16_t>(e - kSegmentFlag) < kMaxSegments;
  }

 private:
  struct Route {
    uint32_t prefix;
    uint8_t len;
    uint16_t next_hop;
  };

  void measure_working_set();

  void prefetch(const uint32_t* addrs, size_t begin, size_t end) const {
    for (size_t j = begin; j < end; ++j) __builtin_prefetch(&tbl24_[addrs[j] >> kSegmentBits]);
  }

  uint16_t resolve(uint16_t e, uint32_t addr) const {
    if (is_segment(e)) [[unlikely]]
      return tbllong_[(static_cast<size_t>(e - kSegmentFlag) << kSegmentBits) |
                      (addr & kSegmentIndexMask)];
    return e;
  }

  std::vector<Route> routes_;
  std::unique_ptr<TableMemory> tbl24_mem_;
  std::unique_ptr<TableMemory> tbllong_mem_;
  uint16_t* tbl24_ = nullptr;
  const uint16_t* tbllong_ = nullptr;
  size_t segments_ = 0;
  size_t working_set_ = 0;
  double accesses_ = 1;
};

}  // namespace fulcrum
