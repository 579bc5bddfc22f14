#include "lib/ip6_table.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <array>
#include <bit>
#include <string>

#include "lib/uniform_draws.hh"

namespace fulcrum {
namespace {

constexpr int kNoParent = -1;
constexpr size_t kLoadDivisor = 2;  // capacity >= 2 x entries
constexpr size_t kMinCapacity = 2;
constexpr int kHashBits = 64;

struct Entry {
  Addr6 key;
  uint16_t hop;
  bool marker;
  bool final;  // a prefix without longer routes under it
};

// Every level weighs its routes plus a floor (a 1/kFloorDivisor share of the average), so that
// rare lengths still form a balanced subtree.
constexpr size_t kFloorDivisor = 4;

// Builds the search tree over levels [lo, hi] (weights by level): the root splits the weight as
// evenly as it can. Writes children into left/right, returns the root (or -1) and the depth.
int build_tree(const std::vector<uint64_t>& weight, int lo, int hi, std::vector<int>& left,
               std::vector<int>& right, int& depth) {
  if (lo > hi) {
    depth = 0;
    return Ip6Table::kNoChild;
  }
  uint64_t total = 0;
  for (int i = lo; i <= hi; ++i) total += weight[static_cast<size_t>(i)];
  int root = lo;
  uint64_t below = 0, best_gap = ~uint64_t{0};
  for (int i = lo; i <= hi; ++i) {
    const uint64_t above = total - below - weight[static_cast<size_t>(i)];
    const uint64_t gap = below > above ? below - above : above - below;
    if (gap < best_gap) {
      best_gap = gap;
      root = i;
    }
    below += weight[static_cast<size_t>(i)];
  }
  int dl = 0, dr = 0;
  left[static_cast<size_t>(root)] = build_tree(weight, lo, root - 1, left, right, dl);
  right[static_cast<size_t>(root)] = build_tree(weight, root + 1, hi, left, right, dr);
  depth = 1 + std::max(dl, dr);
  return root;
}

}  // namespace

Status add_route6(std::vector<Route6Entry>& routes, const uint8_t* prefix, uint8_t len,
                  uint16_t next_hop, uint16_t max_hop) {
  if (len > Ip6Table::kMaxPrefixLen)
    return make_error("prefix length " + std::to_string(len) + " out of range 0..128");
  const Addr6 a = Addr6::from_bytes(prefix);
  if (a.masked(len) != a) {
    char text[INET6_ADDRSTRLEN];
    inet_ntop(AF_INET6, prefix, text, sizeof text);
    return make_error("host bits set in " + std::string(text) + "/" + std::to_string(len));
  }
  if (next_hop > max_hop)
    return make_error("next hop " + std::to_string(next_hop) + " out of range 0.." +
                      std::to_string(max_hop));
  routes.push_back(Route6Entry{a, len, next_hop, static_cast<uint32_t>(routes.size())});
  return {};
}

void distinct_routes6(std::vector<Route6Entry>& routes) {
  using R = Route6Entry;
  std::sort(routes.begin(), routes.end(), [](const R& x, const R& y) {
    if (x.prefix != y.prefix) return x.prefix < y.prefix;
    if (x.len != y.len) return x.len < y.len;
    return x.order > y.order;
  });
  routes.erase(
      std::unique(routes.begin(), routes.end(),
                  [](const R& x, const R& y) { return x.prefix == y.prefix && x.len == y.len; }),
      routes.end());
  for (size_t i = 0; i < routes.size(); ++i) routes[i].order = static_cast<uint32_t>(i);
}

Ip6Table::Ip6Table() = default;
Ip6Table::~Ip6Table() = default;

Status Ip6Table::add(const uint8_t* prefix, uint8_t len, uint16_t next_hop) {
  return add_route6(routes_, prefix, len, next_hop, kMaxNextHop);
}

Status Ip6Table::build() {
  // Distinct routes, ordered so that a prefix comes right before the prefixes it contains; of
  // equal routes the last added wins.
  distinct_routes6(routes_);

  // parent[i]: the longest other route containing route i (a stack walk over the sorted order).
  std::vector<int> parent(routes_.size(), kNoParent);
  std::vector<int> stack;
  for (size_t i = 0; i < routes_.size(); ++i) {
    const Route& r = routes_[i];
    while (!stack.empty()) {
      const Route& top = routes_[static_cast<size_t>(stack.back())];
      if (top.len <= r.len && r.prefix.masked(top.len) == top.prefix) break;
      stack.pop_back();
    }
    if (!stack.empty()) parent[i] = stack.back();
    stack.push_back(static_cast<int>(i));
  }
  std::vector<bool> extended(routes_.size(), false);  // some longer route lies under it
  for (int p : parent)
    if (p != kNoParent) extended[static_cast<size_t>(p)] = true;

  std::array<bool, kMaxPrefixLen + 1> present{};
  uint16_t default_hop = kNoRoute;
  for (const Route& r : routes_) {
    if (r.len == 0)
      default_hop = r.hop;
    else
      present[r.len] = true;
  }
  std::vector<uint8_t> lengths;
  for (uint32_t len = 1; len <= kMaxPrefixLen; ++len)
    if (present[len]) lengths.push_back(static_cast<uint8_t>(len));
  const int k = static_cast<int>(lengths.size());
  std::array<int, kMaxPrefixLen + 1> level_of{};
  for (int i = 0; i < k; ++i) level_of[lengths[static_cast<size_t>(i)]] = i;

  // The search tree, weighted by routes per length: the common lengths sit near the root.
  std::vector<uint64_t> weight(static_cast<size_t>(k));
  for (const Route& r : routes_)
    if (r.len != 0) ++weight[static_cast<size_t>(level_of[r.len])];
  const uint64_t floor = std::max<uint64_t>(1, routes_.size() / (kFloorDivisor * std::max(k, 1)));
  for (uint64_t& w : weight) w += floor;
  std::vector<int> left(static_cast<size_t>(k)), right(static_cast<size_t>(k));
  int depth = 0;
  const int root = build_tree(weight, 0, k - 1, left, right, depth);

  // Entries per level: every prefix at its own length, markers along its search path.
  std::vector<std::vector<Entry>> per_level(static_cast<size_t>(k));
  for (size_t i = 0; i < routes_.size(); ++i) {
    const Route& r = routes_[i];
    if (r.len == 0) continue;
    per_level[static_cast<size_t>(level_of[r.len])].push_back(
        Entry{r.prefix, r.hop, false, !extended[i]});
    for (int node = root; node != kNoChild;) {
      const uint8_t m = lengths[static_cast<size_t>(node)];
      if (m == r.len) break;
      if (m > r.len) {
        node = left[static_cast<size_t>(node)];
        continue;
      }
      // The marker's best-matching prefix: the longest ancestor of r no longer than m (every
      // route containing the marker contains r, so it is on r's parent chain).
      int j = parent[i];
      while (j != kNoParent && routes_[static_cast<size_t>(j)].len > m)
        j = parent[static_cast<size_t>(j)];
      const uint16_t bmp = j == kNoParent ? kNoRoute : routes_[static_cast<size_t>(j)].hop;
      per_level[static_cast<size_t>(node)].push_back(Entry{r.prefix.masked(m), bmp, true, false});
      node = right[static_cast<size_t>(node)];
    }
  }

  size_t total_slots = 0, entries = 0, markers = 0;
  std::vector<size_t> capacity(static_cast<size_t>(k));
  for (int l = 0; l < k; ++l) {
    std::vector<Entry>& es = per_level[static_cast<size_t>(l)];
    // A prefix and markers with the same key share one entry (their BMPs agree).
    std::sort(es.begin(), es.end(), [](const Entry& x, const Entry& y) {
      return x.key != y.key ? x.key < y.key : x.marker < y.marker;
    });
    es.erase(std::unique(es.begin(), es.end(),
                         [](const Entry& x, const Entry& y) { return x.key == y.key; }),
             es.end());
    entries += es.size();
    for (const Entry& e : es) markers += e.marker;
    capacity[static_cast<size_t>(l)] =
        std::bit_ceil(std::max(kMinCapacity, es.size() * kLoadDivisor));
    total_slots += capacity[static_cast<size_t>(l)];
  }

  std::unique_ptr<TableMemory> memory;
  if (total_slots > 0) {
    memory = TableMemory::allocate(total_slots * sizeof(Slot), "ip6_table");
    if (!memory)
      return make_error("out of memory for the IPv6 hash tables (" +
                        std::to_string(total_slots * sizeof(Slot)) + " bytes)");
  }
  std::vector<Level> levels(static_cast<size_t>(k));
  Slot* next = memory ? static_cast<Slot*>(memory->data()) : nullptr;
  for (int l = 0; l < k; ++l) {
    const size_t cap = capacity[static_cast<size_t>(l)];
    const uint8_t len = lengths[static_cast<size_t>(l)];
    Level& level = levels[static_cast<size_t>(l)];
    level = Level{next,
                  cap - 1,
                  kHashBits - std::countr_zero(cap),
                  left[static_cast<size_t>(l)],
                  right[static_cast<size_t>(l)],
                  Addr6::hi_mask(len),
                  Addr6::lo_mask(len)};
    for (const Entry& e : per_level[static_cast<size_t>(l)]) {
      Slot* s = next + (hash(e.key.hi, e.key.lo) >> level.shift);
      while (s->flags & kUsed)
        if (++s == next + cap) s = next;
      *s = Slot{e.key.hi, e.key.lo, e.hop, static_cast<uint16_t>(kUsed | (e.final ? kFinal : 0))};
    }
    next += cap;
  }

  levels_ = std::move(levels);
  memory_ = std::move(memory);
  default_hop_ = default_hop;
  root_ = root;
  depth_ = depth;
  entries_ = entries;
  markers_ = markers;
  slots_bytes_ = total_slots * sizeof(Slot);
  built_ = true;
  return {};
}

uint16_t Ip6Table::lookup(Addr6 a) const {
  uint16_t best = default_hop_;
  for (int node = root_; node != kNoChild;) {
    const Level& l = levels_[static_cast<size_t>(node)];
    const uint64_t kh = a.hi & l.hi_mask, kl = a.lo & l.lo_mask;
    if (const Slot* s = find(l, kh, kl, home(l, kh, kl))) {
      best = s->hop;
      node = (s->flags & kFinal) ? kNoChild : l.right;
    } else {
      node = l.left;
    }
  }
  return best;
}

void Ip6Table::lookup_bulk(const uint8_t (*addrs)[kAddrBytes], uint16_t* out, size_t n) const {
  const Level* levels = levels_.data();
  for (size_t base = 0; base < n; base += kGroup) {
    const uint32_t g = static_cast<uint32_t>(std::min(kGroup, n - base));
    Addr6 a[kGroup];
    int node[kGroup];
    uint8_t active[kGroup];  // the group's searches still under way
    const Slot* slot[kGroup];
    uint16_t* res = out + base;
    for (uint32_t j = 0; j < g; ++j) {
      a[j] = Addr6::from_bytes(addrs[base + j]);
      node[j] = root_;
      res[j] = default_hop_;
      active[j] = static_cast<uint8_t>(j);
    }
    uint32_t live = root_ == kNoChild ? 0 : g;
    while (live > 0) {
      for (uint32_t k = 0; k < live; ++k) {
        const uint32_t j = active[k];
        const Level& l = levels[node[j]];
        slot[j] = home(l, a[j].hi & l.hi_mask, a[j].lo & l.lo_mask);
        __builtin_prefetch(slot[j]);
      }
      uint32_t still = 0;
      for (uint32_t k = 0; k < live; ++k) {
        const uint32_t j = active[k];
        const Level& l = levels[node[j]];
        const uint64_t kh = a[j].hi & l.hi_mask, kl = a[j].lo & l.lo_mask;
        const Slot* s = slot[j];
        // The home slot decides most probes without a branch; a key displaced by linear probing
        // takes the loop.
        bool hit = ((s->hi ^ kh) | (s->lo ^ kl)) == 0 && (s->flags & kUsed);
        if (!hit && (s->flags & kUsed)) [[unlikely]] {
          s = find(l, kh, kl, s);
          hit = s != nullptr;
        }
        const uint16_t flags = hit ? s->flags : 0;
        res[j] = hit ? s->hop : res[j];
        const int next = hit ? ((flags & kFinal) ? kNoChild : l.right) : l.left;
        node[j] = next;
        active[still] = static_cast<uint8_t>(j);
        still += next != kNoChild;
      }
      live = still;
    }
  }
}

std::vector<Addr6> addresses_under(const std::vector<Route6Entry>& routes, size_t n) {
  return draw_uniform(routes, n, [](const Route6Entry& r, std::mt19937_64& rng) {
    const uint64_t hi = rng(), lo = rng();
    return Addr6{r.prefix.hi | (hi & ~Addr6::hi_mask(r.len)),
                 r.prefix.lo | (lo & ~Addr6::lo_mask(r.len))};
  });
}

}  // namespace fulcrum
