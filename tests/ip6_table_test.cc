// Ip6Table (binary search on prefix lengths, Waldvogel et al.): its structure, and the
// differential test of both IPv6 tables against rte_lpm6. What every IPv6 table must do is the
// typed suite in ip6_tables_test.cc.
#include "lib/ip6_table.hh"

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

#include "ip6_testing.hh"
#include "lib/ip6_trie.hh"
#include "lib/route6_table.hh"

namespace fulcrum {
namespace {

using namespace ip6_testing;

TEST(Ip6Table, LevelsAreTheDistinctPrefixLengths) {
  Ip6Table empty;
  ASSERT_TRUE(empty.build().ok());
  EXPECT_EQ(empty.levels(), 0u);
  EXPECT_EQ(empty.memory_bytes(), 0u);
  std::unique_ptr<Ip6Table> t = build<Ip6Table>({r6("::", 0, 7), r6("2001:db8::", 32, 1)});
  EXPECT_EQ(t->levels(), 1u);  // the default route is not a level
  EXPECT_GT(t->memory_bytes(), 0u);
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
  std::unique_ptr<Ip6Table> ours = build<Ip6Table>(shuffled);
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
