// Ip6Trie (the compressed DIR-24-8 trie of paper 003 §3.6): its structure (TBL24 expansion,
// merged single-child groups). What every IPv6 table must do is the typed suite in
// ip6_tables_test.cc; the differential test against rte_lpm6 on 200k routes is in
// ip6_table_test.cc (one reference, both algorithms).
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

#include "ip6_testing.hh"
#include "lib/route6_table.hh"

namespace fulcrum {
namespace {

using namespace ip6_testing;

void build(Ip6Trie& t, const std::vector<Route6>& routes) {
  for (const Route6& r : routes) ASSERT_TRUE(t.add(r.prefix.data(), r.len, r.port).ok());
  Status s = t.build();
  ASSERT_TRUE(s.ok()) << s.error();
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

TEST(Ip6Trie, SampledAddressesLieUnderTheTablesRoutesEachDrawn) {
  // PREFETCH auto's probe keys, from the trie and from the hash tables alike: each address under
  // a route (the naive longest match finds one), every route drawn; none without routes.
  const std::vector<Route6> routes = {r6("2001:db8::", 32, 1), r6("2001:db8:1::", 48, 2),
                                      r6("2001:db8:2::5", 128, 3)};
  Ip6Trie t;
  build(t, routes);
  Ip6Table h;
  for (const Route6& r : routes) ASSERT_TRUE(h.add(r.prefix.data(), r.len, r.port).ok());
  ASSERT_TRUE(h.build().ok());
  for (const std::vector<Addr6>& a : {t.sample_addresses(256), h.sample_addresses(256)}) {
    ASSERT_EQ(a.size(), 256u);
    std::set<uint16_t> hops;
    for (const Addr6& x : a) {
      Bytes b;
      x.to_bytes(b.data());
      const uint16_t hop = naive_lookup(routes, b);
      EXPECT_NE(hop, kNone) << text6(b);
      EXPECT_EQ(t.lookup(b.data()), hop) << text6(b);
      hops.insert(hop);
    }
    EXPECT_EQ(hops, (std::set<uint16_t>{1, 2, 3}));
  }
  EXPECT_TRUE(Ip6Trie{}.sample_addresses(256).empty());
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

}  // namespace
}  // namespace fulcrum
