// What both IPv6 route tables must do (Ip6Table: binary search on prefix lengths; Ip6Trie: the
// compressed DIR-24-8 trie), as one typed suite. The structure of each (markers, groups) is
// checked where the suite knows the type; the rest of each algorithm's own tests are in
// ip6_table_test.cc (with the differential test of both against rte_lpm6) and ip6_trie_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ip6_testing.hh"
#include "lib/ip6_table.hh"
#include "lib/ip6_trie.hh"
#include "lib/route6_table.hh"

namespace fulcrum {
namespace {

using namespace ip6_testing;

template <class Table>
void expect_groups_accounted(const Table& t, const std::vector<Route6>& routes) {
  if constexpr (std::is_same_v<Table, Ip6Trie>) {
    EXPECT_EQ(t.groups() + t.merged_groups(), uncompressed_groups(routes));
  }
}

void expect_probes(const auto& t, const std::vector<Route6>& routes,
                   const std::vector<std::pair<const char*, uint16_t>>& probes) {
  for (const auto& [addr, hop] : probes) {
    EXPECT_EQ(naive_lookup(routes, a6(addr)), hop) << "the oracle, " << addr;
    EXPECT_EQ(t.lookup(a6(addr).data()), hop) << addr;
  }
}

template <class Table>
class Ip6Tables : public ::testing::Test {};
using Tables = ::testing::Types<Ip6Table, Ip6Trie>;
struct TableName {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, Ip6Table> ? "Bsearch" : "Trie";
  }
};
TYPED_TEST_SUITE(Ip6Tables, Tables, TableName);

TYPED_TEST(Ip6Tables, EmptyTableHasNoRoute) {
  std::unique_ptr<TypeParam> t = build<TypeParam>({});
  expect_probes(
      *t, {},
      {{"::", kNone}, {"2001:db8::1", kNone}, {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", kNone}});
  EXPECT_EQ(t->size(), 0u);
}

TYPED_TEST(Ip6Tables, DefaultRouteMatchesEverything) {
  const std::vector<Route6> routes = {r6("::", 0, 7), r6("2001:db8::", 32, 1)};
  expect_probes(*build<TypeParam>(routes), routes,
                {{"::", 7},
                 {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 7},
                 {"2001:db7:ffff::", 7},
                 {"2001:db8::", 1},
                 {"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", 1},
                 {"2001:db9::", 7}});
}

TYPED_TEST(Ip6Tables, HostRoutes) {
  const std::vector<Route6> routes = {r6("2001:db8::1", 128, 3), r6("2001:db8::ffff", 128, 4),
                                      r6("::", 128, 5),
                                      r6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128, 6)};
  expect_probes(*build<TypeParam>(routes), routes,
                {{"2001:db8::1", 3},
                 {"2001:db8::ffff", 4},
                 {"::", 5},
                 {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 6},
                 {"2001:db8::", kNone},
                 {"2001:db8::2", kNone},
                 {"2001:db8::1:1", kNone},
                 {"::1", kNone},
                 {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", kNone}});
}

TYPED_TEST(Ip6Tables, NestedPrefixesInAnyInsertionOrder) {
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
      {"::", 10},
      {"::1", kNone},
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 11},
      {"ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe", kNone},
      {"2002::", kNone},
      {"2000:ffff::", kNone},
  };
  std::vector<Route6> order = routes;
  std::mt19937 rng(1);
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    std::unique_ptr<TypeParam> t = build<TypeParam>(order);
    expect_groups_accounted(*t, routes);
    expect_probes(*t, routes, probes);
    std::shuffle(order.begin(), order.end(), rng);
  }
}

// Lengths 16..128 in steps of 16 make Ip6Table's binary search visit /64 first, then /96 or /32,
// ... The /112 below leaves markers at /64 and /96 for 2001:db8:0:1::; an address that matches
// those markers but not the /112 must fall back to the markers' best-matching prefix, not to
// nothing. For the trie the same routes are long single-child chains.
TYPED_TEST(Ip6Tables, MarkersLeadingAstrayStillGiveTheRightAnswer) {
  std::vector<Route6> routes = {
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
  std::unique_ptr<TypeParam> t = build<TypeParam>(routes);
  if constexpr (std::is_same_v<TypeParam, Ip6Table>) {
    EXPECT_EQ(t->levels(), 8u);
    EXPECT_GT(t->markers(), 0u);
  }
  expect_groups_accounted(*t, routes);
  expect_probes(*t, routes,
                {
                    {"2001:db8:0:1:0:1:2:5", 2},  // the /112
                    {"2001:db8:0:1:0:1:5::", 1},  // marker /96 found, /112 not: its BMP
                    {"2001:db8:0:1:0:2::", 1},    // marker /64 found, /96 not
                    {"2001:db8:0:1:0:1:3:5", 1},  // markers of the /128 found, /128 not
                    {"2001:db8:0:1:0:1:3:4", 3},  // the /128
                    {"2001:db8:0:2::", 1},        // no marker: the /32
                    {"2001:db9::", kNone},
                    {"4000::", 4},
                    {"4000::1", 5},
                    {"4000::2", 4},
                    {"3000:1:1:1:1:1:1:1", 9},
                    {"3000:1:1:1:1:1:1:2", 9},
                });
  // Without the covering /32, a marker found on the way must not produce a route.
  routes.erase(routes.begin() + 8);
  expect_probes(*build<TypeParam>(routes), routes,
                {{"2001:db8:0:1:0:1:5::", kNone},
                 {"2001:db8:0:1:0:1:3:5", kNone},
                 {"2001:db8:0:1:0:1:3:4", 3}});
}

TYPED_TEST(Ip6Tables, DuplicatePrefixKeepsLastNextHopAndRebuildTakesNewRoutes) {
  TypeParam t;
  const Bytes p = a6("2001:db8::");
  ASSERT_TRUE(t.add(p.data(), 32, 1).ok());
  ASSERT_TRUE(t.add(p.data(), 32, 2).ok());
  ASSERT_TRUE(t.add(p.data(), 33, 3).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.lookup(a6("2001:db8:8000::").data()), 2);
  EXPECT_EQ(t.lookup(a6("2001:db8::1").data()), 3);
  ASSERT_TRUE(t.add(a6("2001:db8::8").data(), 126, 4).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.lookup(a6("2001:db8::9").data()), 4);
  EXPECT_EQ(t.lookup(a6("2001:db8::c").data()), 3);
}

TYPED_TEST(Ip6Tables, RejectsInvalidRoutes) {
  TypeParam t;
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

TYPED_TEST(Ip6Tables, RandomNestedTablesMatchNaiveScan) {
  std::mt19937_64 rng(11);
  for (int round = 0; round < 10; ++round) {
    // Few distinct structured bits so that prefixes nest deeply (and, in the trie, chains of
    // single-child groups form); every length 0..128 occurs.
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
    std::unique_ptr<TypeParam> t = build<TypeParam>(routes);
    expect_groups_accounted(*t, routes);
    if constexpr (std::is_same_v<TypeParam, Ip6Trie>) {
      EXPECT_GT(t->merged_groups(), 0u);
    }
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
      ASSERT_EQ(t->lookup(addr.data()), naive_lookup(routes, addr))
          << "round " << round << " addr " << text6(addr);
      addrs.push_back(addr);
    }
    std::vector<uint16_t> out(addrs.size());
    t->lookup_bulk(reinterpret_cast<const uint8_t(*)[Ip6Table::kAddrBytes]>(addrs.data()),
                   out.data(), addrs.size());
    for (size_t i = 0; i < addrs.size(); ++i)
      ASSERT_EQ(out[i], t->lookup(addrs[i].data())) << "round " << round << " i " << i;
  }
}

// Batch sizes around both tables' inner group sizes (16 and 32).
TYPED_TEST(Ip6Tables, BulkMatchesSingleLookups) {
  const std::vector<Route6> routes = generate_routes6(20000, 7, 100);
  std::unique_ptr<TypeParam> t = build<TypeParam>(routes);
  expect_groups_accounted(*t, routes);
  std::mt19937_64 rng(3);
  for (size_t n : {0, 1, 15, 16, 17, 31, 32, 33, 64, 255, 1000}) {
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
    t->lookup_bulk(reinterpret_cast<const uint8_t(*)[Ip6Table::kAddrBytes]>(addrs.data()),
                   out.data(), n);
    for (size_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i], t->lookup(addrs[i].data())) << "n " << n << " i " << i;
      EXPECT_EQ(out[i], naive_lookup(routes, addrs[i])) << "n " << n << " i " << i;
    }
  }
}

}  // namespace
}  // namespace fulcrum
