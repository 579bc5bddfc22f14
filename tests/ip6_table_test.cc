#include "lib/ip6_table.hh"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <rte_errno.h>
#include <rte_lpm6.h>
#include <rte_memory.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lib/ip6_trie.hh"
#include "lib/route6_table.hh"

namespace fulcrum {
namespace {

constexpr uint16_t kNone = Ip6Table::kNoRoute;
using Bytes = std::array<uint8_t, Ip6Table::kAddrBytes>;

Bytes a6(const char* text) {
  Bytes b{};
  EXPECT_EQ(inet_pton(AF_INET6, text, b.data()), 1) << text;
  return b;
}

Route6 r6(const char* prefix, uint8_t len, uint16_t port) {
  return Route6{a6(prefix), len, port};
}

std::string text6(const Bytes& b) {
  char s[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, b.data(), s, sizeof s);
  return s;
}

// An address inside route r: its prefix with the host bits taken from `random`.
Bytes inside(const Route6& r, Addr6 random) {
  const Addr6 p = Addr6::from_bytes(r.prefix.data());
  Bytes b{};
  Addr6{p.hi | (random.hi & ~Addr6::hi_mask(r.len)), p.lo | (random.lo & ~Addr6::lo_mask(r.len))}
      .to_bytes(b.data());
  return b;
}

std::unique_ptr<Ip6Table> build(const std::vector<Route6>& routes) {
  auto t = std::make_unique<Ip6Table>();
  for (const Route6& r : routes) EXPECT_TRUE(t->add(r.prefix.data(), r.len, r.port).ok());
  Status s = t->build();
  EXPECT_TRUE(s.ok()) << s.error();
  return t;
}

// Longest-prefix match by scanning every route: the oracle for small tables.
uint16_t naive_lookup(const std::vector<Route6>& routes, const Bytes& addr) {
  const Addr6 a = Addr6::from_bytes(addr.data());
  int best_len = -1;
  uint16_t hop = kNone;
  for (const Route6& r : routes) {
    if (a.masked(r.len) == Addr6::from_bytes(r.prefix.data()) && r.len > best_len) {
      best_len = r.len;
      hop = r.port;
    }
  }
  return hop;
}

TEST(Ip6Table, EmptyTableHasNoRoute) {
  Ip6Table t;
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(a6("::").data()), kNone);
  EXPECT_EQ(t.lookup(a6("2001:db8::1").data()), kNone);
  EXPECT_EQ(t.lookup(a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").data()), kNone);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.levels(), 0u);
  EXPECT_EQ(t.memory_bytes(), 0u);
}

TEST(Ip6Table, DefaultRouteMatchesEverything) {
  const std::vector<Route6> routes = {r6("::", 0, 7), r6("2001:db8::", 32, 1)};
  std::unique_ptr<Ip6Table> t = build(routes);
  EXPECT_EQ(t->lookup(a6("::").data()), 7);
  EXPECT_EQ(t->lookup(a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").data()), 7);
  EXPECT_EQ(t->lookup(a6("2001:db7:ffff::").data()), 7);
  EXPECT_EQ(t->lookup(a6("2001:db8::").data()), 1);
  EXPECT_EQ(t->lookup(a6("2001:db8:ffff:ffff:ffff:ffff:ffff:ffff").data()), 1);
  EXPECT_EQ(t->lookup(a6("2001:db9::").data()), 7);
  EXPECT_EQ(t->levels(), 1u);
}

TEST(Ip6Table, HostRoutes) {
  const std::vector<Route6> routes = {r6("2001:db8::1", 128, 3), r6("2001:db8::ffff", 128, 4),
                                      r6("::", 128, 5),
                                      r6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128, 6)};
  std::unique_ptr<Ip6Table> t = build(routes);
  EXPECT_EQ(t->lookup(a6("2001:db8::1").data()), 3);
  EXPECT_EQ(t->lookup(a6("2001:db8::ffff").data()), 4);
  EXPECT_EQ(t->lookup(a6("::").data()), 5);
  EXPECT_EQ(t->lookup(a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").data()), 6);
  EXPECT_EQ(t->lookup(a6("2001:db8::").data()), kNone);
  EXPECT_EQ(t->lookup(a6("2001:db8::2").data()), kNone);
  EXPECT_EQ(t->lookup(a6("2001:db8::1:1").data()), kNone);
  EXPECT_EQ(t->lookup(a6("::1").data()), kNone);
  EXPECT_EQ(t->lookup(a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe").data()), kNone);
}

TEST(Ip6Table, NestedPrefixesInAnyInsertionOrder) {
  const std::vector<Route6> routes = {
      r6("2001::", 16, 1),
      r6("2001:db8::", 32, 2),
      r6("2001:db8:1::", 48, 3),
      r6("2001:db8:1:2::", 64, 4),
      r6("2001:db8:1:2:8000::", 65, 5),
      r6("2001:db8:1:2::1", 128, 6),
      r6("2001:db8:1:3::", 64, 7),
      r6("2001:db8::", 31, 8),
      r6("2001:db8:1:2:c000::", 66, 9),
  };
  const std::vector<std::pair<const char*, uint16_t>> probes = {
      {"2001::1", 1},
      {"2001:ffff::", 1},
      {"2001:db9::", 8},
      {"2001:db8::", 2},
      {"2001:db8:2::", 2},
      {"2001:db8:1::", 3},
      {"2001:db8:1:1::", 3},
      {"2001:db8:1:2::", 4},
      {"2001:db8:1:2::1", 6},
      {"2001:db8:1:2::2", 4},
      {"2001:db8:1:2:7fff:ffff:ffff:ffff", 4},
      {"2001:db8:1:2:8000::", 5},
      {"2001:db8:1:2:bfff::", 5},
      {"2001:db8:1:2:c000::", 9},
      {"2001:db8:1:2:ffff:ffff:ffff:ffff", 9},
      {"2001:db8:1:3::5", 7},
      {"2001:db8:1:4::", 3},
      {"2002::", kNone},
      {"2000:ffff::", kNone},
  };
  std::vector<Route6> order = routes;
  std::mt19937 rng(1);
  for (int round = 0; round < 50; ++round) {
    std::unique_ptr<Ip6Table> t = build(order);
    for (const auto& [addr, hop] : probes)
      EXPECT_EQ(t->lookup(a6(addr).data()), hop) << "round " << round << " addr " << addr;
    std::shuffle(order.begin(), order.end(), rng);
  }
}

// Lengths 16..128 in steps of 16 make the binary search visit /64 first, then /96 or /32, ...
// The /112 below leaves markers at /64 and /96 for 2001:db8:0:1::; an address that matches those
// markers but not the /112 must fall back to the markers' best-matching prefix, not to nothing.
TEST(Ip6Table, MarkersLeadingAstrayStillGiveTheRightAnswer) {
  const std::vector<Route6> routes = {
      r6("3000::", 16, 9),
      r6("3000:1::", 32, 9),
      r6("3000:1:1::", 48, 9),
      r6("3000:1:1:1::", 64, 9),
      r6("3000:1:1:1:1::", 80, 9),
      r6("3000:1:1:1:1:1::", 96, 9),
      r6("3000:1:1:1:1:1:1::", 112, 9),
      r6("3000:1:1:1:1:1:1:1", 128, 9),
      r6("2001:db8::", 32, 1),             // the BMP of the markers below
      r6("2001:db8:0:1:0:1:2::", 112, 2),  // markers at /64 and /96
      r6("2001:db8:0:1:0:1:3:4", 128, 3),  // markers at /64, /96, /112
      r6("4000::", 16, 4),                 // a /16 whose subtree has only long routes
      r6("4000:0:0:0:0:0:0:1", 128, 5),
  };
  std::unique_ptr<Ip6Table> t = build(routes);
  EXPECT_EQ(t->levels(), 8u);
  EXPECT_GT(t->markers(), 0u);
  const std::vector<std::pair<const char*, uint16_t>> probes = {
      {"2001:db8:0:1:0:1:2:5", 2},  // the /112
      {"2001:db8:0:1:0:1:5::", 1},  // marker /96 found, /112 not: BMP of the marker
      {"2001:db8:0:1:0:2::", 1},    // marker /64 found, /96 not
      {"2001:db8:0:1:0:1:3:5", 1},  // markers /64, /96, /112 (of the /128) found, /128 not
      {"2001:db8:0:1:0:1:3:4", 3},  // the /128
      {"2001:db8:0:2::", 1},        // no marker: the /32 by the search down the left
      {"2001:db9::", kNone},
      {"4000::", 4},  // markers of ::1/128 at /64.. with BMP the /16
      {"4000::1", 5},
      {"4000::2", 4},
      {"3000:1:1:1:1:1:1:1", 9},
      {"3000:1:1:1:1:1:1:2", 9},
  };
  for (const auto& [addr, hop] : probes) EXPECT_EQ(t->lookup(a6(addr).data()), hop) << addr;
  // Without the covering /32, a marker found on the way must not produce a route.
  std::vector<Route6> no_cover = routes;
  no_cover.erase(no_cover.begin() + 8);
  std::unique_ptr<Ip6Table> u = build(no_cover);
  EXPECT_EQ(u->lookup(a6("2001:db8:0:1:0:1:5::").data()), kNone);
  EXPECT_EQ(u->lookup(a6("2001:db8:0:1:0:1:3:5").data()), kNone);
  EXPECT_EQ(u->lookup(a6("2001:db8:0:1:0:1:3:4").data()), 3);
}

TEST(Ip6Table, DuplicatePrefixKeepsLastNextHop) {
  Ip6Table t;
  const Bytes p = a6("2001:db8::");
  ASSERT_TRUE(t.add(p.data(), 32, 1).ok());
  ASSERT_TRUE(t.add(p.data(), 32, 2).ok());
  ASSERT_TRUE(t.add(p.data(), 33, 3).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.lookup(a6("2001:db8:8000::").data()), 2);
  EXPECT_EQ(t.lookup(a6("2001:db8::1").data()), 3);
}

TEST(Ip6Table, RebuildAfterMoreRoutes) {
  Ip6Table t;
  ASSERT_TRUE(t.add(a6("2001:db8::").data(), 32, 1).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(a6("2001:db8::9").data()), 1);
  ASSERT_TRUE(t.add(a6("2001:db8::8").data(), 126, 2).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(a6("2001:db8::9").data()), 2);
  EXPECT_EQ(t.lookup(a6("2001:db8::c").data()), 1);
  EXPECT_EQ(t.size(), 2u);
}

TEST(Ip6Table, RejectsInvalidRoutes) {
  Ip6Table t;
  Status s = t.add(a6("2001:db8::1").data(), 32, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "host bits set in 2001:db8::1/32");
  s = t.add(a6("::").data(), 129, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "prefix length 129 out of range 0..128");
  s = t.add(a6("::").data(), 0, kNone);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "next hop 65535 out of range 0..32766");
  EXPECT_TRUE(t.add(a6("::").data(), 0, Ip6Table::kMaxNextHop).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(a6("1::2").data()), Ip6Table::kMaxNextHop);
}

TEST(Ip6Table, RandomNestedTablesMatchNaiveScan) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 20; ++round) {
    // Few distinct top bits so that prefixes nest deeply; every length 0..128 occurs.
    std::vector<Route6> routes;
    for (int i = 0; i < 300; ++i) {
      const uint32_t len = static_cast<uint32_t>(rng() % 129);
      Addr6 a{(rng() & 0xF00F00000000000Full) | 0x2000000000000000ull,
              rng() & 0xFF000000000000FFull};
      Route6 r{};
      a.masked(len).to_bytes(r.prefix.data());
      r.len = static_cast<uint8_t>(len);
      r.port = static_cast<uint16_t>(rng() % 100);
      if (std::none_of(routes.begin(), routes.end(),
                       [&](const Route6& o) { return o.prefix == r.prefix && o.len == r.len; }))
        routes.push_back(r);
    }
    std::unique_ptr<Ip6Table> t = build(routes);
    for (int i = 0; i < 3000; ++i) {
      const Route6& r = routes[rng() % routes.size()];
      // A third of the probes inside a route, the rest near one: a few structured bits flipped.
      Bytes addr = inside(r, Addr6{rng(), rng()});
      if (i % 3 != 0) {
        Addr6 near = Addr6::from_bytes(r.prefix.data());
        near.hi ^= rng() & rng() & 0xF00F00000000000Full;
        near.lo ^= rng() & rng() & 0xFF000000000000FFull;
        near.to_bytes(addr.data());
      }
      ASSERT_EQ(t->lookup(addr.data()), naive_lookup(routes, addr))
          << "round " << round << " addr " << text6(addr);
    }
  }
}

TEST(Ip6Table, BulkMatchesSingleLookups) {
  const std::vector<Route6> routes = generate_routes6(20000, 7, 100);
  std::unique_ptr<Ip6Table> t = build(routes);
  std::mt19937_64 rng(3);
  for (size_t n : {0, 1, 15, 16, 17, 64, 255, 1000}) {
    std::vector<Bytes> addrs(n);
    for (size_t i = 0; i < n; ++i) {
      const Route6& r = routes[rng() % routes.size()];
      Addr6 x{rng(), rng()};
      if (i % 2)
        x.to_bytes(addrs[i].data());
      else
        addrs[i] = inside(r, x);
    }
    std::vector<uint16_t> out(n);
    t->lookup_bulk(reinterpret_cast<const uint8_t(*)[16]>(addrs.data()), out.data(), n);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(out[i], t->lookup(addrs[i].data())) << "n " << n << " i " << i;
  }
}

// --- Differential test against DPDK rte_lpm6 -------------------------------------------------
//
// rte_lpm6 keeps a 64 MiB TBL24 plus 1 KiB per tbl8 group, and a random /48../64 route takes
// three to five groups of its own: 200k routes need about 1 GiB, more than the 512 MB the test
// EAL has. Every generated route is /16 or longer, so the routes that can match an address all
// share its first 16 bits: the reference is built as kLpm6Partitions rte_lpm6 tables, one per
// class of first 16 bits, one at a time. Ours holds the whole table.

constexpr size_t kDiffRoutes = 200000;
constexpr size_t kDiffRandomAddrs = 1'200'000;
constexpr uint16_t kDiffPorts = 4096;
constexpr uint32_t kLpm6Partitions = 8;
constexpr uint32_t kLpm6Tbl8Groups = 1u << 17;
constexpr size_t kBulk = 64;
constexpr int kTop16Shift = 48;

uint32_t partition_of(const Bytes& b) {
  return static_cast<uint32_t>(Addr6::from_bytes(b.data()).hi >> kTop16Shift) % kLpm6Partitions;
}

class Lpm6Table {
 public:
  Lpm6Table(const std::string& name, size_t max_rules) {
    rte_lpm6_config cfg{};
    cfg.max_rules = static_cast<uint32_t>(max_rules);
    cfg.number_tbl8s = kLpm6Tbl8Groups;
    lpm_ = rte_lpm6_create(name.c_str(), SOCKET_ID_ANY, &cfg);
  }
  ~Lpm6Table() {
    if (lpm_ != nullptr) rte_lpm6_free(lpm_);
  }
  rte_lpm6* get() const { return lpm_; }

 private:
  rte_lpm6* lpm_;
};

// Looks up addrs with our table and rte_lpm6 in batches of kBulk; returns the number of
// mismatches and counts the addresses rte_lpm6 found a route for in *hits.
template <class Table>
size_t compare(const Table& ours, rte_lpm6* lpm, std::vector<Bytes>& addrs, size_t* hits) {
  std::vector<uint16_t> a(addrs.size());
  std::vector<int32_t> b(addrs.size());
  auto* raw = reinterpret_cast<uint8_t(*)[RTE_LPM6_IPV6_ADDR_SIZE]>(addrs.data());
  for (size_t i = 0; i < addrs.size(); i += kBulk) {
    const size_t n = std::min(kBulk, addrs.size() - i);
    ours.lookup_bulk(raw + i, a.data() + i, n);
    rte_lpm6_lookup_bulk_func(lpm, raw + i, b.data() + i, static_cast<unsigned>(n));
  }
  size_t mismatches = 0;
  for (size_t i = 0; i < addrs.size(); ++i) {
    const uint16_t expect = b[i] < 0 ? kNone : static_cast<uint16_t>(b[i]);
    if (expect != kNone) ++*hits;
    if (a[i] != expect && ++mismatches <= 10)
      ADD_FAILURE() << "address " << text6(addrs[i]) << ": ours " << a[i] << ", rte_lpm6 "
                    << expect;
  }
  return mismatches;
}

// Both of our algorithms (binary search on lengths, compressed trie) against one reference.
TEST(Ip6Table, DifferentialAgainstRteLpm6) {
  const std::vector<Route6> routes = generate_routes6(kDiffRoutes, 42, kDiffPorts);
  ASSERT_EQ(routes.size(), kDiffRoutes);
  size_t base = 0, shorter = 0, longer = 0;
  for (const Route6& r : routes) {
    ASSERT_GE(r.len, 16) << "the partitioned reference needs routes of /16 or longer";
    base += r.len >= 48 && r.len <= 64;
    shorter += r.len < 48;
    longer += r.len > 64;
  }
  EXPECT_GT(base, kDiffRoutes * 8 / 10);
  EXPECT_GT(shorter, kDiffRoutes / 20);
  EXPECT_GT(longer, kDiffRoutes / 50);

  std::vector<Route6> shuffled = routes;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
  std::unique_ptr<Ip6Table> ours = build(shuffled);
  ASSERT_EQ(ours->size(), kDiffRoutes);
  EXPECT_GT(ours->markers(), 0u);
  Ip6Trie trie;
  for (const Route6& r : shuffled) ASSERT_TRUE(trie.add(r.prefix.data(), r.len, r.port).ok());
  ASSERT_TRUE(trie.build().ok());
  ASSERT_EQ(trie.size(), kDiffRoutes);
  EXPECT_GT(trie.merged_groups(), trie.groups());  // the compression saved most groups

  std::vector<std::vector<Route6>> parts(kLpm6Partitions);
  for (const Route6& r : shuffled) parts[partition_of(r.prefix)].push_back(r);

  // Random addresses: a third anywhere, a third in 2000::/3, a third sharing a random route's
  // first 16..len bits (near misses around the more-specifics).
  std::mt19937_64 rng(9);
  std::vector<std::vector<Bytes>> random_addrs(kLpm6Partitions);
  for (size_t i = 0; i < kDiffRandomAddrs; ++i) {
    Addr6 x{rng(), rng()};
    Bytes b{};
    if (i % 3 == 0) {
      x.to_bytes(b.data());
    } else if (i % 3 == 1) {
      x.hi = (x.hi >> 3) | (uint64_t{1} << 61);
      x.to_bytes(b.data());
    } else {
      const Route6& r = routes[rng() % routes.size()];
      Route6 cut = r;
      cut.len = static_cast<uint8_t>(16 + rng() % (r.len - 15));
      Addr6::from_bytes(r.prefix.data()).masked(cut.len).to_bytes(cut.prefix.data());
      b = inside(cut, x);
    }
    random_addrs[partition_of(b)].push_back(b);
  }

  size_t route_hits = 0, route_addrs = 0, random_hits = 0, random_total = 0;
  for (uint32_t part = 0; part < kLpm6Partitions; ++part) {
    Lpm6Table lpm("ip6_diff" + std::to_string(part), parts[part].size() + 1);
    ASSERT_NE(lpm.get(), nullptr) << "rte_lpm6_create failed: " << rte_strerror(rte_errno);
    for (const Route6& r : parts[part]) {
      Bytes p = r.prefix;
      ASSERT_EQ(rte_lpm6_add(lpm.get(), p.data(), r.len, r.port), 0) << format_route6(r);
    }
    // Addresses inside every route (so each more-specific is hit), both ends of each range too.
    std::vector<Bytes> addrs;
    for (const Route6& r : parts[part]) {
      addrs.push_back(r.prefix);
      addrs.push_back(inside(r, Addr6{~uint64_t{0}, ~uint64_t{0}}));
      addrs.push_back(inside(r, Addr6{rng(), rng()}));
    }
    route_addrs += addrs.size();
    ASSERT_EQ(compare(*ours, lpm.get(), addrs, &route_hits), 0u) << "partition " << part;
    size_t trie_hits = 0;
    ASSERT_EQ(compare(trie, lpm.get(), addrs, &trie_hits), 0u) << "trie, partition " << part;
    random_total += random_addrs[part].size();
    ASSERT_EQ(compare(*ours, lpm.get(), random_addrs[part], &random_hits), 0u)
        << "partition " << part;
    ASSERT_EQ(compare(trie, lpm.get(), random_addrs[part], &trie_hits), 0u)
        << "trie, partition " << part;
  }
  EXPECT_EQ(route_hits, route_addrs);
  EXPECT_EQ(route_addrs, 3 * kDiffRoutes);
  EXPECT_EQ(random_total, kDiffRandomAddrs);
  EXPECT_GT(random_hits, 0u);
  EXPECT_LT(random_hits, random_total);
}

}  // namespace
}  // namespace fulcrum
