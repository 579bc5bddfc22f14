// Ip6Trie (the compressed DIR-24-8 trie of paper 003 §3.6). Its differential test against
// rte_lpm6 on 200k routes is in ip6_table_test.cc, next to Ip6Table's (one reference, both
// algorithms).
#include "lib/ip6_trie.hh"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/route6_table.hh"

namespace fulcrum {
namespace {

constexpr uint16_t kNone = Ip6Trie::kNoRoute;
using Bytes = std::array<uint8_t, Ip6Trie::kAddrBytes>;

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

Bytes inside(const Route6& r, Addr6 random) {
  const Addr6 p = Addr6::from_bytes(r.prefix.data());
  Bytes b{};
  Addr6{p.hi | (random.hi & ~Addr6::hi_mask(r.len)), p.lo | (random.lo & ~Addr6::lo_mask(r.len))}
      .to_bytes(b.data());
  return b;
}

void build(Ip6Trie& t, const std::vector<Route6>& routes) {
  for (const Route6& r : routes) ASSERT_TRUE(t.add(r.prefix.data(), r.len, r.port).ok());
  Status s = t.build();
  ASSERT_TRUE(s.ok()) << s.error();
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

// The tbl8 groups of the uncompressed trie (rte_lpm6's): one per distinct prefix of 24, 32,
// 40, ... bits that a longer route extends.
size_t uncompressed_groups(const std::vector<Route6>& routes) {
  std::set<std::pair<Addr6, uint32_t>> groups;
  for (const Route6& r : routes)
    for (uint32_t bits = Ip6Trie::kTbl24Bits; bits < r.len; bits += Ip6Trie::kStrideBits)
      groups.insert({Addr6::from_bytes(r.prefix.data()).masked(bits), bits});
  return groups.size();
}

TEST(Ip6Trie, EmptyAndUnbuiltTablesHaveNoRoute) {
  Ip6Trie unbuilt;
  EXPECT_EQ(unbuilt.lookup(a6("2001:db8::1").data()), kNone);
  Ip6Trie t;
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(a6("::").data()), kNone);
  EXPECT_EQ(t.lookup(a6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff").data()), kNone);
  EXPECT_EQ(t.groups(), 0u);
  EXPECT_EQ(t.depth(), 0);
}

TEST(Ip6Trie, ShortRoutesExpandInTbl24) {
  const std::vector<Route6> routes = {r6("::", 0, 7), r6("8000::", 1, 1), r6("2001:c00::", 23, 2),
                                      r6("2001:d00::", 24, 3), r6("2001:d80::", 25, 4)};
  Ip6Trie t;
  build(t, routes);
  EXPECT_EQ(t.groups(), 1u);  // only the /25 needs a group
  const std::vector<std::pair<const char*, uint16_t>> probes = {
      {"::", 7},         {"7fff::", 7},     {"8000::", 1},          {"ffff::1", 1},
      {"2001:b00::", 7}, {"2001:c00::", 2}, {"2001:cff::", 2},      {"2001:d00::", 3},
      {"2001:d7f::", 3}, {"2001:d80::", 4}, {"2001:dff:ffff::", 4}, {"2001:e00::", 7}};
  for (const auto& [addr, hop] : probes) {
    EXPECT_EQ(t.lookup(a6(addr).data()), hop) << addr;
    EXPECT_EQ(naive_lookup(routes, a6(addr)), hop) << addr;
  }
}

// A lone /48 under its TBL24 entry: rte_lpm6 walks groups for bytes 3, 4 and 5; the
// compressed trie merges the first two into the third. An address leaving the /48's path inside
// the merged bytes gets the route above them.
TEST(Ip6Trie, SingleChildGroupsAreMerged) {
  const std::vector<Route6> routes = {r6("2001::", 16, 1), r6("2001:db8:1234::", 48, 2),
                                      r6("2001:db8:1234:5600::", 56, 3)};
  Ip6Trie t;
  build(t, routes);
  EXPECT_EQ(uncompressed_groups(routes), 4u);
  EXPECT_EQ(t.groups(), 2u);  // byte 5 (ends the /48) and byte 6 (ends the /56)
  EXPECT_EQ(t.merged_groups(), 2u);
  EXPECT_EQ(t.depth(), 2);
  const std::vector<std::pair<const char*, uint16_t>> probes = {
      {"2001:db8:1234::", 2},
      {"2001:db8:1234:ffff::", 2},
      {"2001:db8:1234:5600::1", 3},
      {"2001:db8:1234:56ff:ffff::", 3},
      {"2001:db8:1234:5700::", 2},
      {"2001:db8:1235::", 1},  // off the path in byte 5: the group's own entry
      {"2001:db8:1334::", 1},  // off the path in byte 4 (merged)
      {"2001:db8:2234::", 1},  // off the path in byte 4 (merged), high bits
      {"2001:db9:1234::", 1},  // another TBL24 entry
      {"2002:db8:1234::", kNone},
  };
  for (const auto& [addr, hop] : probes) {
    EXPECT_EQ(t.lookup(a6(addr).data()), hop) << addr;
    EXPECT_EQ(naive_lookup(routes, a6(addr)), hop) << addr;
  }
}

TEST(Ip6Trie, HostRoutesAndNestedPrefixesInAnyInsertionOrder) {
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
      r6("::", 128, 10),
      r6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128, 11),
  };
  const std::vector<std::pair<const char*, uint16_t>> probes = {
      {"2001::1", 1},
      {"2001:db9::", 8},
      {"2001:db8:2::", 2},
      {"2001:db8:1:1::", 3},
      {"2001:db8:1:2::1", 6},
      {"2001:db8:1:2::2", 4},
      {"2001:db8:1:2:7fff:ffff:ffff:ffff", 4},
      {"2001:db8:1:2:bfff::", 5},
      {"2001:db8:1:2:ffff:ffff:ffff:ffff", 9},
      {"2001:db8:1:3::5", 7},
      {"2001:db8:1:4::", 3},
      {"::", 10},
      {"::1", kNone},
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 11},
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", kNone},
      {"2002::", kNone},
  };
  std::vector<Route6> order = routes;
  std::mt19937 rng(1);
  for (int round = 0; round < 5; ++round) {
    Ip6Trie t;
    build(t, order);
    EXPECT_EQ(t.groups() + t.merged_groups(), uncompressed_groups(routes));
    for (const auto& [addr, hop] : probes) {
      EXPECT_EQ(naive_lookup(routes, a6(addr)), hop) << addr;
      EXPECT_EQ(t.lookup(a6(addr).data()), hop) << "round " << round << " addr " << addr;
    }
    std::shuffle(order.begin(), order.end(), rng);
  }
}

TEST(Ip6Trie, DuplicatePrefixKeepsLastNextHopAndRejectsInvalidRoutes) {
  Ip6Trie t;
  const Bytes p = a6("2001:db8::");
  ASSERT_TRUE(t.add(p.data(), 32, 1).ok());
  ASSERT_TRUE(t.add(p.data(), 32, 2).ok());
  ASSERT_TRUE(t.add(p.data(), 33, 3).ok());
  Status s = t.add(a6("2001:db8::1").data(), 32, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "host bits set in 2001:db8::1/32");
  s = t.add(a6("::").data(), 129, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "prefix length 129 out of range 0..128");
  s = t.add(a6("::").data(), 0, kNone);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "next hop 65535 out of range 0..32766");
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.lookup(a6("2001:db8:8000::").data()), 2);
  EXPECT_EQ(t.lookup(a6("2001:db8::1").data()), 3);
  ASSERT_TRUE(t.add(a6("2001:db8::8").data(), 126, 4).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(a6("2001:db8::9").data()), 4);
  EXPECT_EQ(t.lookup(a6("2001:db8::c").data()), 3);
}

TEST(Ip6Trie, RandomNestedTablesMatchNaiveScan) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 8; ++round) {
    // Few distinct structured bits so that prefixes nest deeply and chains of single-child
    // groups form; every length 0..128 occurs.
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
    Ip6Trie t;
    build(t, routes);
    EXPECT_EQ(t.groups() + t.merged_groups(), uncompressed_groups(routes));
    EXPECT_GT(t.merged_groups(), 0u);
    std::vector<Bytes> addrs;
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
      ASSERT_EQ(t.lookup(addr.data()), naive_lookup(routes, addr))
          << "round " << round << " addr " << text6(addr);
      addrs.push_back(addr);
    }
    std::vector<uint16_t> out(addrs.size());
    t.lookup_bulk(reinterpret_cast<const uint8_t(*)[Ip6Trie::kAddrBytes]>(addrs.data()), out.data(),
                  addrs.size());
    for (size_t i = 0; i < addrs.size(); ++i)
      ASSERT_EQ(out[i], t.lookup(addrs[i].data())) << "round " << round << " i " << i;
  }
}

TEST(Ip6Trie, BulkMatchesSingleLookups) {
  const std::vector<Route6> routes = generate_routes6(20000, 7, 100);
  Ip6Trie t;
  build(t, routes);
  EXPECT_EQ(t.groups() + t.merged_groups(), uncompressed_groups(routes));
  std::mt19937_64 rng(3);
  for (size_t n : {0, 1, 31, 32, 33, 64, 255, 1000}) {
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
    t.lookup_bulk(reinterpret_cast<const uint8_t(*)[Ip6Trie::kAddrBytes]>(addrs.data()), out.data(),
                  n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i], t.lookup(addrs[i].data())) << "n " << n << " i " << i;
      EXPECT_EQ(out[i], naive_lookup(routes, addrs[i])) << "n " << n << " i " << i;
    }
  }
}

}  // namespace
}  // namespace fulcrum
