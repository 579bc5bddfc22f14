// The lookup kernels on every device present, against the CPU functions on the same addresses,
// and the CPU functions against a brute-force longest-prefix match on a sample: the IPv4
// DIR-24-8 kernel (Dir24_8::lookup_bulk) and the IPv6 trie kernel (Ip6Trie::lookup_bulk), run
// the way IPLookupOffload and IP6LookupOffload run them. What both families check is one typed
// suite (OffloadLookupKernel/Ipv4, /Ipv6); each family's own cases follow it. OpenCL runs on
// PoCL's CPU device in CI; CUDA tests skip without a GPU.
#include <gtest/gtest.h>

#include <array>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "elements/ip/ip_lookup_offload.hh"
#include "elements/ip6/ip6_lookup_offload.hh"
#include "lib/dir24_8.hh"
#include "lib/ip6_trie.hh"
#include "lib/route6_table.hh"
#include "lib/route_table.hh"
#include "offload/discovery.hh"
#include "offload/ipv4_lookup.hh"
#include "offload/ipv6_lookup.hh"
#include "offload/task.hh"
#include "offload_lookup_testing.hh"
#include "offload_testing.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kRoutes = 12000;
constexpr uint64_t kRouteSeed = 3;
constexpr uint16_t kPorts = 200;
constexpr uint32_t kBatch = 64;

// ---- IPv4: a Dir24_8 ---------------------------------------------------------------------------

struct Ipv4 {
  using Element = IPLookupOffload;
  using Tables = Ipv4LookupTables;
  using Route = Route4;
  using Addr = uint32_t;
  static constexpr size_t kAddresses = 100000;
  static constexpr size_t kBruteForceSample = 2000;

  struct Fixture {
    std::vector<Route4> routes;
    Dir24_8 table;
    std::vector<uint32_t> addrs;
    std::vector<uint16_t> cpu;
  };

  // Half the addresses uniform, half inside a random route (so the /25../32 segments are hit).
  static const Fixture& fixture() {
    static const Fixture* f = [] {
      auto* x = new Fixture;
      x->routes = generate_routes4(kRoutes, kRouteSeed, kPorts);
      for (const Route4& r : x->routes) EXPECT_TRUE(x->table.add(r.prefix, r.len, r.port).ok());
      EXPECT_TRUE(x->table.build().ok());
      std::mt19937 rng(7);
      for (size_t i = 0; i < kAddresses; ++i) {
        const uint32_t random = rng();
        if (i % 2 == 0) {
          x->addrs.push_back(random);
          continue;
        }
        const Route4& r = x->routes[rng() % x->routes.size()];
        const uint32_t host = r.len == 0 ? ~0u : r.len == 32 ? 0 : ~0u >> r.len;
        x->addrs.push_back(r.prefix | (random & host));
      }
      x->cpu.resize(kAddresses);
      x->table.lookup_bulk(x->addrs.data(), x->cpu.data(), kAddresses);
      return x;
    }();
    return *f;
  }
  static const Dir24_8& table(const Fixture& f) { return f.table; }

  static uint16_t brute_force(const std::vector<Route4>& routes, uint32_t addr) {
    int best = -1;
    uint16_t hop = Dir24_8::kNoRoute;
    for (const Route4& r : routes) {
      const uint32_t mask = r.len == 0 ? 0 : ~0u << (32 - r.len);
      if ((addr & mask) == r.prefix && r.len > best) {
        best = r.len;
        hop = r.port;
      }
    }
    return hop;
  }
};

// ---- IPv6: an Ip6Trie --------------------------------------------------------------------------

constexpr uint32_t kFirstGroupBit = Ip6Trie::kTbl24Bits;
using Bytes = std::array<uint8_t, Ip6Trie::kAddrBytes>;

Bytes inside(const Route6& r, Addr6 random) {
  const Addr6 p = Addr6::from_bytes(r.prefix.data());
  Bytes b{};
  Addr6{p.hi | (random.hi & ~Addr6::hi_mask(r.len)), p.lo | (random.lo & ~Addr6::lo_mask(r.len))}
      .to_bytes(b.data());
  return b;
}

struct Ipv6 {
  using Element = IP6LookupOffload;
  using Tables = Ipv6LookupTables;
  using Route = Route6;
  using Addr = Bytes;
  static constexpr size_t kAddresses = 120000;
  static constexpr size_t kBruteForceSample = 1500;

  struct Fixture {
    std::vector<Route6> routes;
    Ip6Trie trie;
    std::vector<Bytes> addrs;
    std::vector<uint16_t> cpu;
  };

  // A third of the addresses uniform, a third inside a random route, a third inside a random
  // route with one prefix bit below TBL24 flipped: those leave the path of merged groups, so the
  // kernel takes the fallback of a group header.
  static const Fixture& fixture() {
    static const Fixture* f = [] {
      auto* x = new Fixture;
      x->routes = generate_routes6(kRoutes, kRouteSeed, kPorts);
      for (const Route6& r : x->routes)
        EXPECT_TRUE(x->trie.add(r.prefix.data(), r.len, r.port).ok());
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
  static const Ip6Trie& table(const Fixture& f) { return f.trie; }

  static uint16_t brute_force(const std::vector<Route6>& routes, const Bytes& addr) {
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
};

// ---- Both families -----------------------------------------------------------------------------

struct FamilyName {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, Ipv4> ? "Ipv4" : "Ipv6";
  }
};

template <class Family>
class OffloadLookupKernel : public ::testing::Test {
 protected:
  static void expect_devices_match_cpu(Backend backend) {
    const auto& f = Family::fixture();
    static_assert(sizeof(typename Family::Addr) == Family::Element::kOffload.read_bytes);
    testing::expect_devices_match(backend, f.cpu, [&](Device& dev) {
      return testing::lookup_on_device<typename Family::Element, typename Family::Tables>(
          dev, Family::table(f), f.addrs.data(), f.addrs.size(), kBatch);
    });
  }
};

using Families = ::testing::Types<Ipv4, Ipv6>;
TYPED_TEST_SUITE(OffloadLookupKernel, Families, FamilyName);

TYPED_TEST(OffloadLookupKernel, CpuFunctionAgreesWithBruteForceOnASample) {
  const auto& f = TypeParam::fixture();
  for (size_t i = 0; i < TypeParam::kBruteForceSample; ++i)
    ASSERT_EQ(f.cpu[i], TypeParam::brute_force(f.routes, f.addrs[i])) << "address index " << i;
}

TYPED_TEST(OffloadLookupKernel, OpenCLKernelMatchesCpuOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  this->expect_devices_match_cpu(Backend::kOpenCL);
}

TYPED_TEST(OffloadLookupKernel, CudaKernelMatchesCpuOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  this->expect_devices_match_cpu(Backend::kCuda);
}

TYPED_TEST(OffloadLookupKernel, HostKernelMatchesCpuOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  this->expect_devices_match_cpu(Backend::kEmu);
}

// ---- IPv4 only ---------------------------------------------------------------------------------

TEST(OffloadIpv4Lookup, TestDataReachesLongPrefixSegmentsAndMisses) {
  const Ipv4::Fixture& f = Ipv4::fixture();
  ASSERT_GT(f.table.segments(), 0u);
  size_t in_segment = 0, misses = 0;
  for (uint32_t a : f.addrs) {
    in_segment += Dir24_8::is_segment(f.table.tbl24()[a >> Dir24_8::kSegmentBits]);
    misses += f.table.lookup(a) == Dir24_8::kNoRoute;
  }
  EXPECT_GT(in_segment, 100u);
  EXPECT_GT(misses, 100u);
}

TEST(OffloadIpv4Lookup, DevicesAreDiscoveredOnlyForCompiledBackends) {
  for (const auto& dev : discover_devices()) {
    EXPECT_TRUE(backend_compiled(dev->info().backend)) << dev->label();
    EXPECT_TRUE(dev->is_up());
    EXPECT_FALSE(dev->info().name.empty());
  }
}

TEST(OffloadIpv4Lookup, UnknownKernelAndWrongArgumentsAreErrors) {
  for (const auto& dev : discover_devices()) {
    SCOPED_TRACE(dev->label());
    EXPECT_FALSE(dev->kernel("no_such_kernel").ok());
    auto k = dev->kernel(kIpv4LookupKernel);
    ASSERT_TRUE(k.ok()) << k.error();
    EXPECT_EQ(k.value()->signature(), "bbbbu");
    auto q = dev->create_queue();
    ASSERT_TRUE(q.ok()) << q.error();
    const KernelArg too_few[] = {KernelArg::of(1u)};
    EXPECT_FALSE(q.value()->launch(*k.value(), {1, 0}, too_few).ok());
  }
}

// ---- IPv6 only ---------------------------------------------------------------------------------

TEST(OffloadIpv6Lookup, TestDataReachesGroupsMergedPathsAndMisses) {
  const Ipv6::Fixture& f = Ipv6::fixture();
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
  EXPECT_GT(hits, Ipv6::kAddresses / 3);
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
    const std::vector<uint16_t> hops =
        testing::lookup_on_device<IP6LookupOffload, Ipv6LookupTables>(*dev, trie, addrs.data(),
                                                                      addrs.size(), kBatch);
    ASSERT_EQ(hops.size(), addrs.size());
    EXPECT_EQ(hops[0], 5);
    EXPECT_EQ(hops[1], Ip6Trie::kNoRoute);
  }
}

}  // namespace
}  // namespace fulcrum::offload
