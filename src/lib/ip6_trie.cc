#include "lib/ip6_trie.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <string>

namespace fulcrum {

// Builds the groups depth first from the routes sorted by (prefix, length): the routes under one
// entry are then a sorted list, the routes under one of its bytes a run of it. Runs twice: first
// without tables (groups == nullptr) to count the groups, then writing them, in the same order.
struct Ip6Trie::Builder {
  const std::vector<Route>& routes;
  uint32_t* groups = nullptr;
  Header* headers = nullptr;
  size_t groups_n = 0;
  size_t merged = 0;
  int depth = 0;

  // The entry for the routes `ids` (non-empty, all longer than 8 x first bits, all sharing those
  // bits), below which `inherited` applies: a link to their (compressed) subtree.
  uint32_t subtree(std::span<const uint32_t> ids, uint32_t first, uint16_t inherited, int level) {
    const Route& any = routes[ids.front()];
    // Merge: skip every byte that ends no route and where all routes go on to one child.
    uint32_t byte = first;
    for (;; ++byte) {
      const uint32_t end_bits = (byte + 1) * kStrideBits;
      const uint32_t b0 = byte_of(any.prefix, byte);
      const bool single = std::all_of(ids.begin(), ids.end(), [&](uint32_t i) {
        return routes[i].len > end_bits && byte_of(routes[i].prefix, byte) == b0;
      });
      if (!single) break;
    }
    merged += byte - first;
    depth = std::max(depth, level);
    const size_t g = groups_n++;
    uint32_t* entries = groups ? groups + g * kGroupEntries : nullptr;
    const uint32_t end_bits = (byte + 1) * kStrideBits;
    if (entries) {
      const Addr6 path = any.prefix.masked(byte * kStrideBits);
      headers[g] = Header{path.hi, path.lo, inherited};
      std::fill_n(entries, kGroupEntries, uint32_t{inherited});
      // Routes ending in this group, shortest first: a longer one overwrites what it covers.
      std::vector<uint32_t> ending;
      for (uint32_t i : ids)
        if (routes[i].len <= end_bits) ending.push_back(i);
      std::stable_sort(ending.begin(), ending.end(),
                       [&](uint32_t x, uint32_t y) { return routes[x].len < routes[y].len; });
      for (uint32_t i : ending) {
        const Route& r = routes[i];
        std::fill_n(entries + byte_of(r.prefix, byte), uint32_t{1} << (end_bits - r.len),
                    uint32_t{r.hop});
      }
    }
    // Routes going deeper, one run per byte value; each inherits what its entry holds now.
    std::vector<uint32_t> deeper;
    for (uint32_t i : ids)
      if (routes[i].len > end_bits) deeper.push_back(i);
    for (size_t lo = 0; lo < deeper.size();) {
      const uint32_t b = byte_of(routes[deeper[lo]].prefix, byte);
      size_t hi = lo + 1;
      while (hi < deeper.size() && byte_of(routes[deeper[hi]].prefix, byte) == b) ++hi;
      const uint16_t below = entries ? static_cast<uint16_t>(entries[b] & kHopMask) : kNoRoute;
      const uint32_t e =
          subtree(std::span(deeper).subspan(lo, hi - lo), byte + 1, below, level + 1);
      if (entries) entries[b] = e;
      lo = hi;
    }
    return kLink | (byte << kByteShift) | static_cast<uint32_t>(g & kGroupMask);
  }

  // Every subtree below TBL24 (`longer`: the routes longer than /24, sorted); fills tbl24's
  // links when given.
  void all(const std::vector<uint32_t>& longer, uint32_t* tbl24) {
    for (size_t lo = 0; lo < longer.size();) {
      const uint64_t top = routes[longer[lo]].prefix.hi >> kTbl24Shift;
      size_t hi = lo + 1;
      while (hi < longer.size() && routes[longer[hi]].prefix.hi >> kTbl24Shift == top) ++hi;
      const uint16_t inherited = tbl24 ? static_cast<uint16_t>(tbl24[top]) : kNoRoute;
      const uint32_t e =
          subtree(std::span(longer).subspan(lo, hi - lo), kFirstGroupByte, inherited, 1);
      if (tbl24) tbl24[top] = e;
      lo = hi;
    }
  }
};

Ip6Trie::Ip6Trie() = default;
Ip6Trie::~Ip6Trie() = default;

Status Ip6Trie::add(const uint8_t* prefix, uint8_t len, uint16_t next_hop) {
  return add_route6(routes_, prefix, len, next_hop, kMaxNextHop);
}

Status Ip6Trie::build() {
  // Distinct routes sorted by (prefix, length); of equal routes the last added wins.
  distinct_routes6(routes_);

  std::vector<uint32_t> longer;
  for (uint32_t i = 0; i < routes_.size(); ++i)
    if (routes_[i].len > kTbl24Bits) longer.push_back(i);
  Builder count{routes_};
  count.all(longer, nullptr);
  if (count.groups_n > kMaxGroups)
    return make_error("IPv6 trie needs more than " + std::to_string(kMaxGroups) + " groups");

  const size_t tbl24_bytes = size_t{kTbl24Entries} * sizeof(uint32_t);
  const size_t groups_bytes = count.groups_n * kGroupEntries * sizeof(uint32_t);
  const size_t bytes = tbl24_bytes + groups_bytes + count.groups_n * sizeof(Header);
  std::unique_ptr<TableMemory> memory = TableMemory::allocate(bytes, "ip6_trie");
  if (!memory)
    return make_error("out of memory for the IPv6 trie (" + std::to_string(bytes) + " bytes)");
  auto* base = static_cast<uint8_t*>(memory->data());
  auto* tbl24 = reinterpret_cast<uint32_t*>(base);

  // TBL24: the routes of /24 or shorter, expanded shortest first; then the subtrees.
  std::fill_n(tbl24, kTbl24Entries, uint32_t{kNoRoute});
  std::vector<uint32_t> by_len;
  for (uint32_t i = 0; i < routes_.size(); ++i)
    if (routes_[i].len <= kTbl24Bits) by_len.push_back(i);
  std::stable_sort(by_len.begin(), by_len.end(),
                   [&](uint32_t x, uint32_t y) { return routes_[x].len < routes_[y].len; });
  for (uint32_t i : by_len) {
    const Route& r = routes_[i];
    std::fill_n(tbl24 + (r.prefix.hi >> kTbl24Shift), size_t{1} << (kTbl24Bits - r.len),
                uint32_t{r.hop});
  }
  Builder b{routes_, reinterpret_cast<uint32_t*>(base + tbl24_bytes),
            reinterpret_cast<Header*>(base + tbl24_bytes + groups_bytes)};
  b.all(longer, tbl24);

  memory_ = std::move(memory);
  tbl24_ = reinterpret_cast<const uint32_t*>(base);
  groups_ = reinterpret_cast<const uint32_t*>(base + tbl24_bytes);
  headers_ = reinterpret_cast<const Header*>(base + tbl24_bytes + groups_bytes);
  groups_n_ = b.groups_n;
  merged_ = b.merged;
  depth_ = b.depth;
  built_ = true;
  measure_working_set();
  return {};
}

void Ip6Trie::measure_working_set() {
  constexpr size_t kLineBytes = 64;
  constexpr size_t kEntriesPerLine = kLineBytes / sizeof(uint32_t);
  size_t lines = 0;
  for (size_t l = 0; l < kTbl24Entries / kEntriesPerLine; ++l) {
    bool used = false;
    for (size_t k = 0; k < kEntriesPerLine; ++k)
      used |= tbl24_[l * kEntriesPerLine + k] != kNoRoute;
    lines += used ? 1 : 0;
  }
  working_set_ =
      lines * kLineBytes + groups_n_ * (kGroupEntries * sizeof(uint32_t) + sizeof(Header));
  // The mean walk over (a sample of) the routes' own addresses: TBL24 plus the groups visited.
  constexpr size_t kSample = 4096;
  const size_t step = std::max<size_t>(1, routes_.size() / kSample);
  size_t walks = 0, steps = 0;
  for (size_t i = 0; i < routes_.size(); i += step, ++walks)
    steps += walk_levels(routes_[i].prefix);
  levels_ = walks == 0 ? 1 : static_cast<double>(steps) / static_cast<double>(walks);
}

size_t Ip6Trie::walk_levels(Addr6 a) const {
  uint32_t e = tbl24_[a.hi >> kTbl24Shift];
  size_t n = 1;
  uint32_t expect = kFirstGroupByte;
  while (e & kLink) {
    const uint32_t byte = link_byte(e), g = e & kGroupMask;
    ++n;
    if (byte != expect && !on_path(headers_[g], a, byte)) break;
    expect = byte + 1;
    e = groups_[size_t{g} * kGroupEntries + byte_of(a, byte)];
  }
  return n;
}

void Ip6Trie::lookup_bulk(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n) const {
  lookup_grouped<kGroup>(addrs, out, n);
}

void Ip6Trie::lookup_bulk(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n,
                          unsigned group) const {
  with_prefetch_group<kGroup>(group,
                              [&](auto g) { lookup_grouped<decltype(g)::value>(addrs, out, n); });
}

template <size_t G>
void Ip6Trie::lookup_grouped(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n) const {
  if (tbl24_ == nullptr) [[unlikely]] {
    std::fill_n(out, n, kNoRoute);
    return;
  }
  for (size_t base = 0; base < n; base += G) {
    const uint32_t g = static_cast<uint32_t>(std::min(G, n - base));
    Addr6 a[G];
    const uint32_t* slot[G];  // the entry the walk reads next
    uint32_t link[G];         // the link that led to it
    uint32_t expect[G];       // the byte a link without skip leads to
    uint8_t active[G];
    uint16_t* res = out + base;
    for (uint32_t j = 0; j < g; ++j) {
      a[j] = Addr6::from_bytes(addrs[base + j]);
      slot[j] = tbl24_ + (a[j].hi >> kTbl24Shift);
      __builtin_prefetch(slot[j]);
      link[j] = 0;
      expect[j] = kFirstGroupByte;
      active[j] = static_cast<uint8_t>(j);
    }
    uint32_t live = g;
    while (live > 0) {
      uint32_t still = 0;
      for (uint32_t k = 0; k < live; ++k) {
        const uint32_t j = active[k];
        const uint32_t e = *slot[j];
        const uint32_t l = link[j];
        if (l != 0 && link_byte(l) != expect[j]) {
          const Header& h = headers_[l & kGroupMask];
          if (!on_path(h, a[j], link_byte(l))) {
            res[j] = h.fallback;
            continue;
          }
        }
        if (!(e & kLink)) {
          res[j] = static_cast<uint16_t>(e);
          continue;
        }
        const uint32_t byte = link_byte(e), grp = e & kGroupMask;
        if (l != 0) expect[j] = link_byte(l) + 1;
        slot[j] = groups_ + size_t{grp} * kGroupEntries + byte_of(a[j], byte);
        __builtin_prefetch(slot[j]);
        if (byte != expect[j]) __builtin_prefetch(headers_ + grp);
        link[j] = e;
        active[still++] = static_cast<uint8_t>(j);
      }
      live = still;
    }
  }
}

}  // namespace fulcrum
