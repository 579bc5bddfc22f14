#include "lib/dir24_8.hh"

#include <gtest/gtest.h>
#include <rte_lpm.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lib/route_table.hh"

namespace fulcrum {
namespace {

constexpr uint16_t kNone = Dir24_8::kNoRoute;

uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// An address inside route r: its prefix with the host bits taken from `random`.
uint32_t inside(const Route4& r, uint32_t random) {
  uint32_t host_mask = r.len == 0 ? ~uint32_t{0} : r.len == 32 ? 0 : ~uint32_t{0} >> r.len;
  return r.prefix | (random & host_mask);
}

std::unique_ptr<Dir24_8> build(const std::vector<Route4>& routes) {
  auto t = std::make_unique<Dir24_8>();
  for (const Route4& r : routes) EXPECT_TRUE(t->add(r.prefix, r.len, r.port).ok());
  Status s = t->build();
  EXPECT_TRUE(s.ok()) << s.error();
  return t;
}

TEST(Dir24_8, SampledAddressesLieUnderTheTablesRoutesEachDrawn) {
  // PREFETCH auto's probe keys: each address under a route, every route drawn, the host bits
  // varied, the same addresses on every call; none from a table without routes.
  const std::vector<Route4> routes = {
      {ip(10, 1, 2, 0), 24, 1}, {ip(172, 16, 0, 0), 12, 2}, {ip(8, 8, 8, 8), 32, 3}};
  const std::unique_ptr<Dir24_8> t = build(routes);
  const std::vector<uint32_t> a = t->sample_addresses(256);
  ASSERT_EQ(a.size(), 256u);
  std::vector<uint16_t> hops;
  for (uint32_t x : a) hops.push_back(t->lookup(x));
  std::sort(hops.begin(), hops.end());
  EXPECT_EQ(std::unique(hops.begin(), hops.end()) - hops.begin(), 3);
  EXPECT_EQ(hops.front(), 1);
  EXPECT_EQ(hops.back(), 3);
  std::vector<uint32_t> distinct = a;
  std::sort(distinct.begin(), distinct.end());
  EXPECT_GT(std::unique(distinct.begin(), distinct.end()) - distinct.begin(), 100);
  EXPECT_EQ(t->sample_addresses(256), a);
  EXPECT_TRUE(Dir24_8{}.sample_addresses(256).empty());
}

TEST(Dir24_8, EmptyTableHasNoRoute) {
  Dir24_8 t;
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(0), kNone);
  EXPECT_EQ(t.lookup(ip(10, 1, 2, 3)), kNone);
  EXPECT_EQ(t.lookup(0xFFFFFFFF), kNone);
  EXPECT_EQ(t.size(), 0u);
  EXPECT_EQ(t.segments(), 0u);
  EXPECT_EQ(t.memory_bytes(), size_t{Dir24_8::kTbl24Entries} * 2);
}

TEST(Dir24_8, DefaultRouteMatchesEverything) {
  Dir24_8 t;
  ASSERT_TRUE(t.add(0, 0, 7).ok());
  ASSERT_TRUE(t.add(ip(10, 0, 0, 0), 8, 1).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(0), 7);
  EXPECT_EQ(t.lookup(0xFFFFFFFF), 7);
  EXPECT_EQ(t.lookup(ip(9, 255, 255, 255)), 7);
  EXPECT_EQ(t.lookup(ip(10, 0, 0, 0)), 1);
  EXPECT_EQ(t.lookup(ip(10, 255, 255, 255)), 1);
  EXPECT_EQ(t.lookup(ip(11, 0, 0, 0)), 7);
}

TEST(Dir24_8, HostRoutes) {
  Dir24_8 t;
  ASSERT_TRUE(t.add(ip(192, 168, 1, 1), 32, 3).ok());
  ASSERT_TRUE(t.add(ip(192, 168, 1, 255), 32, 4).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(ip(192, 168, 1, 1)), 3);
  EXPECT_EQ(t.lookup(ip(192, 168, 1, 255)), 4);
  EXPECT_EQ(t.lookup(ip(192, 168, 1, 0)), kNone);
  EXPECT_EQ(t.lookup(ip(192, 168, 1, 2)), kNone);
  EXPECT_EQ(t.lookup(ip(192, 168, 1, 254)), kNone);
  EXPECT_EQ(t.segments(), 1u);
}

TEST(Dir24_8, BoundaryAddresses) {
  Dir24_8 t;
  ASSERT_TRUE(t.add(0, 32, 1).ok());
  ASSERT_TRUE(t.add(0xFFFFFFFF, 32, 2).ok());
  ASSERT_TRUE(t.add(ip(255, 255, 255, 0), 24, 5).ok());
  ASSERT_TRUE(t.add(0, 8, 6).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(0), 1);
  EXPECT_EQ(t.lookup(1), 6);
  EXPECT_EQ(t.lookup(ip(0, 255, 255, 255)), 6);
  EXPECT_EQ(t.lookup(ip(1, 0, 0, 0)), kNone);
  EXPECT_EQ(t.lookup(0xFFFFFFFF), 2);
  EXPECT_EQ(t.lookup(0xFFFFFFFE), 5);
  EXPECT_EQ(t.lookup(ip(255, 255, 255, 0)), 5);
  EXPECT_EQ(t.lookup(ip(255, 255, 254, 255)), kNone);
}

TEST(Dir24_8, NestedPrefixesInAnyInsertionOrder) {
  const std::vector<Route4> routes = {
      {ip(10, 0, 0, 0), 8, 1},    {ip(10, 1, 0, 0), 16, 2},   {ip(10, 1, 2, 0), 24, 3},
      {ip(10, 1, 2, 128), 25, 4}, {ip(10, 1, 2, 192), 26, 5}, {ip(10, 1, 2, 200), 30, 6},
      {ip(10, 1, 2, 201), 32, 7}, {ip(10, 1, 3, 0), 24, 8},   {ip(10, 1, 0, 0), 23, 9},
  };
  struct Probe {
    uint32_t addr;
    uint16_t hop;
  };
  const std::vector<Probe> probes = {
      {ip(10, 0, 0, 1), 1},     {ip(10, 2, 0, 0), 1},          {ip(10, 1, 0, 5), 9},
      {ip(10, 1, 1, 255), 9},   {ip(10, 1, 4, 0), 2},          {ip(10, 1, 2, 0), 3},
      {ip(10, 1, 2, 127), 3},   {ip(10, 1, 2, 128), 4},        {ip(10, 1, 2, 191), 4},
      {ip(10, 1, 2, 192), 5},   {ip(10, 1, 2, 199), 5},        {ip(10, 1, 2, 200), 6},
      {ip(10, 1, 2, 201), 7},   {ip(10, 1, 2, 202), 6},        {ip(10, 1, 2, 203), 6},
      {ip(10, 1, 2, 204), 5},   {ip(10, 1, 2, 255), 5},        {ip(10, 1, 3, 77), 8},
      {ip(11, 0, 0, 0), kNone}, {ip(9, 255, 255, 255), kNone},
  };
  std::vector<Route4> order = routes;
  std::mt19937 rng(1);
  for (int round = 0; round < 50; ++round) {
    std::unique_ptr<Dir24_8> t = build(order);
    for (const Probe& p : probes)
      EXPECT_EQ(t->lookup(p.addr), p.hop) << "round " << round << " addr " << std::hex << p.addr;
    EXPECT_EQ(t->segments(), 1u);
    std::shuffle(order.begin(), order.end(), rng);
  }
}

TEST(Dir24_8, SegmentStartsWithCoveringRoute) {
  // The /25 is added before the covering /16: the segment's other half must still see the /16.
  Dir24_8 t;
  ASSERT_TRUE(t.add(ip(172, 16, 5, 0), 25, 1).ok());
  ASSERT_TRUE(t.add(ip(172, 16, 0, 0), 16, 2).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(ip(172, 16, 5, 0)), 1);
  EXPECT_EQ(t.lookup(ip(172, 16, 5, 127)), 1);
  EXPECT_EQ(t.lookup(ip(172, 16, 5, 128)), 2);
  EXPECT_EQ(t.lookup(ip(172, 16, 5, 255)), 2);
  EXPECT_EQ(t.lookup(ip(172, 16, 6, 0)), 2);
}

TEST(Dir24_8, FullSegmentOfHostRoutes) {
  // Every one of the 256 entries of one segment is a distinct /32: checks the segment size.
  Dir24_8 t;
  for (uint32_t i = 0; i < Dir24_8::kSegmentEntries; ++i)
    ASSERT_TRUE(t.add(ip(1, 2, 3, i), 32, static_cast<uint16_t>(i)).ok());
  for (uint32_t i = 0; i < Dir24_8::kSegmentEntries; ++i)
    ASSERT_TRUE(t.add(ip(1, 2, 4, i), 32, static_cast<uint16_t>(1000 + i)).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.segments(), 2u);
  for (uint32_t i = 0; i < Dir24_8::kSegmentEntries; ++i) {
    EXPECT_EQ(t.lookup(ip(1, 2, 3, i)), i);
    EXPECT_EQ(t.lookup(ip(1, 2, 4, i)), 1000 + i);
  }
  EXPECT_EQ(t.lookup(ip(1, 2, 2, 255)), kNone);
  EXPECT_EQ(t.lookup(ip(1, 2, 5, 0)), kNone);
}

TEST(Dir24_8, DuplicatePrefixKeepsLastNextHop) {
  Dir24_8 t;
  ASSERT_TRUE(t.add(ip(10, 0, 0, 0), 8, 1).ok());
  ASSERT_TRUE(t.add(ip(10, 0, 0, 0), 8, 2).ok());
  ASSERT_TRUE(t.add(ip(10, 0, 0, 0), 9, 3).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.lookup(ip(10, 200, 0, 0)), 2);
  EXPECT_EQ(t.lookup(ip(10, 0, 0, 0)), 3);
}

TEST(Dir24_8, RebuildAfterMoreRoutes) {
  Dir24_8 t;
  ASSERT_TRUE(t.add(ip(10, 0, 0, 0), 8, 1).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(ip(10, 9, 9, 9)), 1);
  ASSERT_TRUE(t.add(ip(10, 9, 9, 8), 30, 2).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(ip(10, 9, 9, 9)), 2);
  EXPECT_EQ(t.lookup(ip(10, 9, 9, 12)), 1);
  EXPECT_EQ(t.size(), 2u);
}

TEST(Dir24_8, RejectsInvalidRoutes) {
  Dir24_8 t;
  Status s = t.add(ip(10, 0, 0, 1), 8, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "host bits set in 10.0.0.1/8");
  s = t.add(0, 33, 1);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "prefix length 33 out of range 0..32");
  s = t.add(0, 0, Dir24_8::kNoRoute);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error(), "next hop 65535 out of range 0..32766");
  EXPECT_TRUE(t.add(0, 0, Dir24_8::kMaxNextHop).ok());
  ASSERT_TRUE(t.build().ok());
  EXPECT_EQ(t.lookup(ip(1, 2, 3, 4)), Dir24_8::kMaxNextHop);
}

TEST(Dir24_8, TooManySegmentsFailsAndKeepsTable) {
  Dir24_8 t;
  ASSERT_TRUE(t.add(ip(10, 0, 0, 0), 8, 1).ok());
  ASSERT_TRUE(t.build().ok());
  for (uint32_t i = 0; i <= Dir24_8::kMaxSegments; ++i)
    ASSERT_TRUE(t.add(ip(20, 0, 0, 0) + (i << 8), 25, 2).ok());
  Status s = t.build();
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("at most 32767 segments"), std::string::npos) << s.error();
  EXPECT_EQ(t.lookup(ip(10, 1, 1, 1)), 1);
  EXPECT_EQ(t.lookup(ip(20, 0, 0, 1)), kNone);
}

TEST(Dir24_8, BulkMatchesSingleLookups) {
  std::vector<Route4> routes = generate_routes4(20000, 7, 100);
  std::unique_ptr<Dir24_8> t = build(routes);
  std::mt19937 rng(3);
  for (size_t n : {0, 1, 15, 16, 17, 64, 255, 1000}) {
    std::vector<uint32_t> addrs(n);
    for (size_t i = 0; i < n; ++i) {
      const Route4& r = routes[rng() % routes.size()];
      addrs[i] = i % 2 ? static_cast<uint32_t>(rng()) : inside(r, static_cast<uint32_t>(rng()));
    }
    std::vector<uint16_t> out(n);
    t->lookup_bulk(addrs.data(), out.data(), n);
    for (size_t i = 0; i < n; ++i)
      EXPECT_EQ(out[i], t->lookup(addrs[i])) << "n " << n << " i " << i;
  }
}

// --- Differential test against DPDK rte_lpm --------------------------------------------------
//
// rte_lpm_add finds a rule by scanning every rule of the same depth, so filling one rte_lpm with
// 500k routes is quadratic (about 45 s). No generated route is shorter than /8, so the routes
// that can match an address all share its first octet: the reference is built as kLpmPartitions
// rte_lpm tables, one per range of first octets, one at a time. Ours holds the whole table.

constexpr size_t kDiffRoutes = 500000;
constexpr size_t kDiffRandomAddrs = 10'000'000;
constexpr uint16_t kDiffPorts = 4096;
constexpr uint32_t kLpmPartitions = 64;
constexpr uint32_t kOctetsPerPartition = 256 / kLpmPartitions;
constexpr uint32_t kLpmTbl8Groups = 1u << 14;
constexpr size_t kBulk = 64;

class LpmTable {
 public:
  LpmTable(const std::string& name, size_t max_rules) {
    rte_lpm_config cfg{};
    cfg.max_rules = static_cast<uint32_t>(max_rules);
    cfg.number_tbl8s = kLpmTbl8Groups;
    lpm_ = rte_lpm_create(name.c_str(), SOCKET_ID_ANY, &cfg);
  }
  ~LpmTable() {
    if (lpm_ != nullptr) rte_lpm_free(lpm_);
  }
  rte_lpm* get() const { return lpm_; }

 private:
  rte_lpm* lpm_;
};

// Looks up addrs with both tables in batches of kBulk; returns the number of mismatches and
// counts the addresses rte_lpm found a route for in *hits.
size_t compare(const Dir24_8& ours, rte_lpm* lpm, const std::vector<uint32_t>& addrs,
               size_t* hits) {
  std::vector<uint16_t> a(addrs.size());
  std::vector<uint32_t> b(addrs.size());
  for (size_t i = 0; i < addrs.size(); i += kBulk) {
    size_t n = std::min(kBulk, addrs.size() - i);
    ours.lookup_bulk(addrs.data() + i, a.data() + i, n);
    rte_lpm_lookup_bulk(lpm, addrs.data() + i, b.data() + i, static_cast<unsigned>(n));
  }
  size_t mismatches = 0;
  for (size_t i = 0; i < addrs.size(); ++i) {
    uint16_t expect =
        (b[i] & RTE_LPM_LOOKUP_SUCCESS) ? static_cast<uint16_t>(b[i] & 0xFFFFFF) : kNone;
    if (expect != kNone) ++*hits;
    if (a[i] != expect && ++mismatches <= 10)
      ADD_FAILURE() << "address " << std::hex << addrs[i] << ": ours " << std::dec << a[i]
                    << ", rte_lpm " << expect;
  }
  return mismatches;
}

TEST(Dir24_8, DifferentialAgainstRteLpm) {
  const std::vector<Route4> routes = generate_routes4(kDiffRoutes, 42, kDiffPorts);
  ASSERT_EQ(routes.size(), kDiffRoutes);
  size_t more_specific = 0, covering = 0;
  for (const Route4& r : routes) {
    ASSERT_GE(r.len, 8) << "the partitioned reference needs routes of /8 or longer";
    more_specific += r.len > 24;
    covering += r.len <= 16;
  }
  EXPECT_GT(more_specific, kDiffRoutes / 50);
  EXPECT_GT(covering, kDiffRoutes / 100);

  // Insert in a shuffled order: the result must not depend on it.
  std::vector<Route4> shuffled = routes;
  std::shuffle(shuffled.begin(), shuffled.end(), std::mt19937(5));
  std::unique_ptr<Dir24_8> ours = build(shuffled);
  ASSERT_EQ(ours->size(), kDiffRoutes);
  EXPECT_GT(ours->segments(), kDiffRoutes / 100);

  std::vector<std::vector<Route4>> parts(kLpmPartitions);
  for (const Route4& r : shuffled) parts[(r.prefix >> 24) / kOctetsPerPartition].push_back(r);

  std::mt19937_64 rng(9);
  size_t route_hits = 0, route_addrs = 0, random_hits = 0, random_addrs = 0;
  for (uint32_t part = 0; part < kLpmPartitions; ++part) {
    LpmTable lpm("dir24_8_diff" + std::to_string(part), parts[part].size() + 1);
    ASSERT_NE(lpm.get(), nullptr) << "rte_lpm_create failed";
    for (const Route4& r : parts[part])
      ASSERT_EQ(rte_lpm_add(lpm.get(), r.prefix, r.len, r.port), 0) << format_route4(r);

    // Addresses inside every route (so each more-specific is hit), both ends of each range too.
    std::vector<uint32_t> addrs;
    for (const Route4& r : parts[part]) {
      addrs.push_back(r.prefix);
      addrs.push_back(inside(r, ~uint32_t{0}));
      addrs.push_back(inside(r, static_cast<uint32_t>(rng())));
    }
    route_addrs += addrs.size();
    ASSERT_EQ(compare(*ours, lpm.get(), addrs, &route_hits), 0u) << "partition " << part;

    // Uniformly random addresses with a first octet in this partition.
    addrs.resize(kDiffRandomAddrs / kLpmPartitions);
    const uint32_t first_octet = part * kOctetsPerPartition;
    for (uint32_t& a : addrs) {
      uint64_t x = rng();
      a = ((first_octet + static_cast<uint32_t>(x >> 32) % kOctetsPerPartition) << 24) |
          (static_cast<uint32_t>(x) & 0xFFFFFF);
    }
    random_addrs += addrs.size();
    ASSERT_EQ(compare(*ours, lpm.get(), addrs, &random_hits), 0u) << "partition " << part;
  }
  EXPECT_EQ(route_hits, route_addrs);
  EXPECT_EQ(random_addrs, kDiffRandomAddrs);
  EXPECT_GT(random_hits, 0u);
  EXPECT_LT(random_hits, random_addrs);
}

}  // namespace
}  // namespace fulcrum
