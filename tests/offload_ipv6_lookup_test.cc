// The IPv6 trie kernel on every device present, against the CPU function (Ip6Trie::lookup_bulk)
// on the same addresses, and the CPU function against a brute-force longest-prefix match on a
// sample. OpenCL runs on PoCL's CPU device in CI; the CUDA test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "lib/ip6_trie.hh"
#include "lib/route6_table.hh"
#include "offload/discovery.hh"
#include "offload/ipv6_lookup.hh"
#include "offload/task.hh"
#include "offload_lookup_testing.hh"
#include "offload_testing.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kRoutes = 12000;
constexpr uint64_t kRouteSeed = 3;
constexpr uint16_t kPorts = 200;
constexpr size_t kAddresses = 120000;
constexpr uint32_t kBatch = 64;
constexpr size_t kBruteForceSample = 1500;
constexpr uint32_t kFirstGroupBit = Ip6Trie::kTbl24Bits;

using Bytes = std::array<uint8_t, Ip6Trie::kAddrBytes>;

struct Fixture {
  std::vector<Route6> routes;
  Ip6Trie trie;
  std::vector<Bytes> addrs;
  std::vector<uint16_t> cpu;
};

Bytes inside(const Route6& r, Addr6 random) {
  const Addr6 p = Addr6::from_bytes(r.prefix.data());
  Bytes b{};
  Addr6{p.hi | (random.hi & ~Addr6::hi_mask(r.len)), p.lo | (random.lo & ~Addr6::lo_mask(r.len))}
      .to_bytes(b.data());
  return b;
}

// A third of the addresses uniform, a third inside a random route, a third inside a random
// route with one prefix bit below TBL24 flipped: those leave the path of merged groups, so the
// kernel takes the fallback of a group header.
const Fixture& fixture() {
  static const Fixture* f = [] {
    auto* x = new Fixture;
    x->routes = generate_routes6(kRoutes, kRouteSeed, kPorts);
    for (const Route6& r : x->routes) EXPECT_TRUE(x->trie.add(r.prefix.data(), r.len, r.port).ok());
    Status s = x->trie.build();
    EXPECT_TRUE(s.ok()) << s.error();
    std::mt19937_64 rng(7);
    for (size_t i = 0; i < kAddresses; ++i) {
      const Addr6 random{rng(), rng()};
      Bytes b{};
      if (i % 3 == 0) {
        random.to_bytes(b.data());
      } else {
        const Route6& r = x->routes[rng() % x->routes.size()];
        b = inside(r, random);
        if (i % 3 == 2 && r.len > kFirstGroupBit) {
          const uint32_t bit =
              kFirstGroupBit + static_cast<uint32_t>(rng() % (r.len - kFirstGroupBit));
          b[bit / 8] ^= static_cast<uint8_t>(0x80u >> (bit % 8));
        }
      }
      x->addrs.push_back(b);
    }
    x->cpu.resize(kAddresses);
    x->trie.lookup_bulk(reinterpret_cast<const uint8_t(*)[Ip6Trie::kAddrBytes]>(x->addrs.data()),
                        x->cpu.data(), kAddresses);
    return x;
  }();
  return *f;
}

uint16_t brute_force(const std::vector<Route6>& routes, const Bytes& addr) {
  const Addr6 a = Addr6::from_bytes(addr.data());
  int best = -1;
  uint16_t hop = Ip6Trie::kNoRoute;
  for (const Route6& r : routes) {
    if (a.masked(r.len) == Addr6::from_bytes(r.prefix.data()) && r.len > best) {
      best = r.len;
      hop = r.port;
    }
  }
  return hop;
}

void expect_devices_match_cpu(Backend backend) {
  const Fixture& f = fixture();
  testing::expect_devices_match(backend, f.cpu, [&](Device& dev) {
    return testing::lookup_on_device<Ipv6LookupTables, Ipv6LookupTask>(
        dev, f.trie, reinterpret_cast<const Ipv6LookupTask::Addr*>(f.addrs.data()), f.addrs.size(),
        kBatch);
  });
}

TEST(OffloadIpv6Lookup, TestDataReachesGroupsMergedPathsAndMisses) {
  const Fixture& f = fixture();
  EXPECT_GT(f.trie.groups(), 1000u);
  EXPECT_GT(f.trie.merged_groups(), 1000u);  // links that skip bytes: the header check runs
  EXPECT_GE(f.trie.depth(), 3);
  size_t short_routes = 0, mid_routes = 0;
  for (const Route6& r : f.routes) {
    short_routes += r.len < 48;
    mid_routes += r.len >= 48 && r.len <= 64;
  }
  EXPECT_GT(short_routes, 500u);
  EXPECT_GT(mid_routes, 10000u);
  size_t misses = 0, hits = 0;
  for (uint16_t h : f.cpu) (h == Ip6Trie::kNoRoute ? misses : hits) += 1;
  EXPECT_GT(misses, 1000u);
  EXPECT_GT(hits, kAddresses / 3);
}

TEST(OffloadIpv6Lookup, CpuFunctionAgreesWithBruteForceOnASample) {
  const Fixture& f = fixture();
  for (size_t i = 0; i < kBruteForceSample; ++i)
    ASSERT_EQ(f.cpu[i], brute_force(f.routes, f.addrs[i])) << "address index " << i;
}

TEST(OffloadIpv6Lookup, OpenCLKernelMatchesCpuOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  expect_devices_match_cpu(Backend::kOpenCL);
}

TEST(OffloadIpv6Lookup, CudaKernelMatchesCpuOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  expect_devices_match_cpu(Backend::kCuda);
}

TEST(OffloadIpv6Lookup, KernelSignatureAndUnbuiltTrie) {
  Ip6Trie unbuilt;
  for (const auto& dev : discover_devices()) {
    SCOPED_TRACE(dev->label());
    auto k = dev->kernel(kIpv6LookupKernel);
    ASSERT_TRUE(k.ok()) << k.error();
    EXPECT_EQ(k.value()->signature(), "bbbbbu");
    EXPECT_FALSE(Ipv6LookupTables::upload(*dev, unbuilt).ok());
  }
}

// A trie with only short routes has no group: the upload still gives the kernel valid buffers.
TEST(OffloadIpv6Lookup, TrieWithoutGroupsRunsOnEveryDevice) {
  Ip6Trie trie;
  const Route6 r{{0x20, 0x01, 0x0d}, 24, 5};
  ASSERT_TRUE(trie.add(r.prefix.data(), r.len, r.port).ok());
  ASSERT_TRUE(trie.build().ok());
  ASSERT_EQ(trie.groups(), 0u);
  const std::array<Bytes, 2> addrs{Bytes{0x20, 0x01, 0x0d, 0x77}, Bytes{0x20, 0x01, 0x0e}};
  for (const auto& dev : discover_devices()) {
    SCOPED_TRACE(dev->label());
    auto tables = Ipv6LookupTables::upload(*dev, trie);
    ASSERT_TRUE(tables.ok()) << tables.error();
    auto task = Ipv6LookupTask::create(*tables.value(), kBatch);
    auto exec = TaskExecutor::create(*dev);
    ASSERT_TRUE(task.ok() && exec.ok());
    Ipv6LookupTask& t = *task.value();
    ASSERT_TRUE(t.add_batch(reinterpret_cast<const Ipv6LookupTask::Addr*>(addrs.data()), 2));
    ASSERT_EQ(run_task_sync(*exec.value(), t.task), TaskStatus::kOk) << t.task.error;
    EXPECT_EQ(t.next_hops()[0], 5);
    EXPECT_EQ(t.next_hops()[1], Ip6Trie::kNoRoute);
  }
}

}  // namespace
}  // namespace fulcrum::offload
