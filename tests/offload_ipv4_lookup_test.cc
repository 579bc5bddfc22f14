// The DIR-24-8 kernel on every device present, against the CPU function (Dir24_8::lookup_bulk)
// on the same addresses, and both against a brute-force longest-prefix match on a sample.
// OpenCL runs on PoCL's CPU device in CI; CUDA tests skip without a GPU.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <random>
#include <vector>

#include "lib/dir24_8.hh"
#include "lib/route_table.hh"
#include "offload/discovery.hh"
#include "offload/ipv4_lookup.hh"
#include "offload/task.hh"
#include "offload_lookup_testing.hh"
#include "offload_testing.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kRoutes = 12000;
constexpr uint64_t kRouteSeed = 3;
constexpr uint16_t kPorts = 200;
constexpr size_t kAddresses = 100000;
constexpr uint32_t kBatch = 64;
constexpr size_t kBruteForceSample = 2000;

struct Fixture {
  std::vector<Route4> routes;
  Dir24_8 table;
  std::vector<uint32_t> addrs;
  std::vector<uint16_t> cpu;
};

// Half the addresses uniform, half inside a random route (so the /25../32 segments are hit).
const Fixture& fixture() {
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

uint16_t brute_force(const std::vector<Route4>& routes, uint32_t addr) {
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

void expect_devices_match_cpu(Backend backend) {
  const Fixture& f = fixture();
  testing::expect_devices_match(backend, f.cpu, [&](Device& dev) {
    return testing::lookup_on_device<Ipv4LookupTables, Ipv4LookupTask>(dev, f.table, f.addrs.data(),
                                                                       f.addrs.size(), kBatch);
  });
}

TEST(OffloadIpv4Lookup, TestDataReachesLongPrefixSegmentsAndMisses) {
  const Fixture& f = fixture();
  ASSERT_GT(f.table.segments(), 0u);
  size_t in_segment = 0, misses = 0;
  for (uint32_t a : f.addrs) {
    in_segment += Dir24_8::is_segment(f.table.tbl24()[a >> Dir24_8::kSegmentBits]);
    misses += f.table.lookup(a) == Dir24_8::kNoRoute;
  }
  EXPECT_GT(in_segment, 100u);
  EXPECT_GT(misses, 100u);
}

TEST(OffloadIpv4Lookup, CpuFunctionAgreesWithBruteForceOnASample) {
  const Fixture& f = fixture();
  for (size_t i = 0; i < kBruteForceSample; ++i)
    ASSERT_EQ(f.cpu[i], brute_force(f.routes, f.addrs[i])) << "address index " << i;
}

TEST(OffloadIpv4Lookup, OpenCLKernelMatchesCpuOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  expect_devices_match_cpu(Backend::kOpenCL);
}

TEST(OffloadIpv4Lookup, CudaKernelMatchesCpuOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  expect_devices_match_cpu(Backend::kCuda);
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

}  // namespace
}  // namespace fulcrum::offload
