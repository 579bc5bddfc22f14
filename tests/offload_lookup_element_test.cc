// The offloadable route lookups in a pipeline (IPLookupOffload and IP6LookupOffload, one typed
// suite, on the OpenCL device: PoCL in CI): what leaves is what the CPU element makes, in the
// same order when every batch goes to the device, as the same packets with each flow's order
// kept under a fixed split with AFFINITY, and with nothing lost when the device fails or goes
// silent mid-run.
#include <gtest/gtest.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lib/route6_table.hh"
#include "lib/route_table.hh"
#include "offload/failure_injection.hh"
#include "offload_testing.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using testing::Sent;
using Outcome = testing::PipelineOutcome;

constexpr uint16_t kPorts = 4;
constexpr uint32_t kFlows = 300;
constexpr uint32_t kBurst = 64;
constexpr uint64_t kRouteSeed = 17;
constexpr uint16_t kEtherTypeArp = 0x0806;

// IPv4: kPackets frames of kFlows flows (destinations inside routes, and some that match none),
// then one ARP frame.
struct Ipv4 {
  static constexpr const char* kElement = "IPLookupOffload";
  static constexpr const char* kCpuElement = "IPLookup";
  static constexpr size_t kRoutes = 5000;
  static constexpr uint32_t kPackets = 20000;
  static constexpr uint32_t kNotIp = 1;

  static const std::vector<Route4>& routes() {
    static const std::vector<Route4> r = generate_routes4(kRoutes, kRouteSeed, kPorts);
    return r;
  }
  static std::string route_file() {
    static const std::string path = [] {
      std::string p = testing::temp_path("offload-ipv4-element-routes.txt");
      EXPECT_TRUE(write_routes4(p, routes()).ok());
      return p;
    }();
    return path;
  }
  static std::vector<std::vector<uint8_t>> frames() {
    std::mt19937 rng(5);
    std::vector<uint32_t> dst(kFlows);
    for (uint32_t& d : dst) {
      const Route4& r = routes()[rng() % routes().size()];
      const uint32_t host_bits = r.len == 0 ? ~0u : r.len == 32 ? 0 : (1u << (32 - r.len)) - 1;
      d = rng() % 8 == 0 ? static_cast<uint32_t>(rng()) : r.prefix | (rng() & host_bits);
    }
    std::vector<std::vector<uint8_t>> out;
    for (uint32_t i = 0; i < kPackets; ++i)
      out.push_back(testing::ipv4_udp_frame(0x0A000001 + (i % kFlows), dst[i % kFlows]));
    out.push_back(testing::ether_frame(kEtherTypeArp));
    return out;
  }
  // The flow of the packet whose tag (frame index) is `tag`; kFlows for the ARP frame.
  static uint32_t flow_of(uint16_t tag) { return tag < kPackets ? tag % kFlows : kFlows; }
};

// IPv6: kPackets frames of kFlows flows (destinations inside routes, some with a prefix bit
// flipped below TBL24 so that they leave merged trie paths, some random); an ARP frame after
// every 1000th.
struct Ipv6 {
  static constexpr const char* kElement = "IP6LookupOffload";
  static constexpr const char* kCpuElement = "IP6Lookup";
  static constexpr size_t kRoutes = 3000;
  static constexpr uint32_t kPackets = 12000;
  static constexpr uint32_t kArpEvery = 1000;
  static constexpr uint32_t kNotIp = kPackets / kArpEvery;
  static constexpr uint32_t kFrameLen = 78;
  using Bytes = std::array<uint8_t, 16>;

  static const std::vector<Route6>& routes() {
    static const std::vector<Route6> r = generate_routes6(kRoutes, kRouteSeed, kPorts);
    return r;
  }
  static std::string route_file() {
    static const std::string path = [] {
      std::string p = testing::temp_path("offload-ipv6-element-routes.txt");
      EXPECT_TRUE(write_routes6(p, routes()).ok());
      return p;
    }();
    return path;
  }
  static std::vector<uint8_t> udp_frame(const Bytes& src, const Bytes& dst) {
    constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
    constexpr uint32_t kVersion6Word = 0x60000000;
    constexpr uint8_t kProtoUdp = 17;
    std::vector<uint8_t> f = testing::ether_frame(kEtherTypeIpv6, kFrameLen);
    auto* h = reinterpret_cast<rte_ipv6_hdr*>(f.data() + RTE_ETHER_HDR_LEN);
    h->vtc_flow = rte_cpu_to_be_32(kVersion6Word);
    h->payload_len = rte_cpu_to_be_16(kFrameLen - RTE_ETHER_HDR_LEN - sizeof(rte_ipv6_hdr));
    h->proto = kProtoUdp;
    h->hop_limits = 64;
    std::memcpy(h->src_addr, src.data(), src.size());
    std::memcpy(h->dst_addr, dst.data(), dst.size());
    return f;
  }
  static std::vector<std::vector<uint8_t>> frames() {
    std::mt19937_64 rng(5);
    std::vector<Bytes> dst(kFlows);
    for (Bytes& d : dst) {
      const Route6& r = routes()[rng() % routes().size()];
      const Addr6 p = Addr6::from_bytes(r.prefix.data());
      const Addr6 x{rng(), rng()};
      const Addr6 a = rng() % 8 == 0 ? x
                                     : Addr6{p.hi | (x.hi & ~Addr6::hi_mask(r.len)),
                                             p.lo | (x.lo & ~Addr6::lo_mask(r.len))};
      a.to_bytes(d.data());
      constexpr uint32_t kFirstGroupBit = 24;
      if (rng() % 4 == 0 && r.len > kFirstGroupBit) {
        const auto bit = static_cast<uint32_t>(kFirstGroupBit + rng() % (r.len - kFirstGroupBit));
        d[bit / 8] ^= static_cast<uint8_t>(0x80u >> (bit % 8));
      }
    }
    std::vector<std::vector<uint8_t>> out;
    for (uint32_t i = 0; i < kPackets; ++i) {
      Bytes src{0xfd};
      src[15] = static_cast<uint8_t>(i % kFlows);
      src[14] = static_cast<uint8_t>((i % kFlows) >> 8);
      out.push_back(udp_frame(src, dst[i % kFlows]));
      if (i % kArpEvery == 0) out.push_back(testing::ether_frame(kEtherTypeArp));
    }
    return out;
  }
  static uint32_t flow_of(uint16_t tag) {
    static const std::vector<uint32_t> flows = [] {
      std::vector<uint32_t> f;
      for (uint32_t i = 0; i < kPackets; ++i) {
        f.push_back(i % kFlows);
        if (i % kArpEvery == 0) f.push_back(kFlows);
      }
      return f;
    }();
    return flows.at(tag);
  }
};

template <class Family>
Outcome run(const std::string& balancer, const std::string& extra = "",
            const char* element = Family::kElement) {
  const std::string args =
      std::string(element) == Family::kElement ? ", AGGREGATE 4, FLUSH_US 0" + extra : "";
  return testing::run_pipeline("FromInput -> " + balancer + " -> l :: " + element + "(" +
                                   Family::route_file() + args + ") -> ToOutput;",
                               Family::frames(), kPorts, "l", kBurst);
}

std::vector<Sent> sorted(std::vector<Sent> s) {
  std::sort(s.begin(), s.end());
  return s;
}

template <class Family>
class OffloadLookupElement : public ::testing::Test {};
using Families = ::testing::Types<Ipv4, Ipv6>;
struct FamilyName {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, Ipv4> ? "Ipv4" : "Ipv6";
  }
};
TYPED_TEST_SUITE(OffloadLookupElement, Families, FamilyName);

// The CPU path is the CPU element itself: the same packets to the same ports in the same order.
TYPED_TEST(OffloadLookupElement, CpuOnlyLeavesAsTheCpuElement) {
  using F = TypeParam;
  const Outcome plain = run<F>("CPUOnly", "", F::kCpuElement);
  const Outcome cpu = run<F>("CPUOnly");
  ASSERT_EQ(plain.sent.size() + plain.dropped, F::kPackets + F::kNotIp);
  EXPECT_GT(plain.dropped, F::kNotIp);  // the ARP frames and unrouted packets
  EXPECT_GT(plain.sent.size(), F::kPackets / 2);
  EXPECT_EQ(cpu.sent, plain.sent);
  EXPECT_EQ(cpu.dropped, plain.dropped);
  EXPECT_EQ(cpu.counters.at("device_packets"), 0u);
}

TYPED_TEST(OffloadLookupElement, DeviceOnlyLeavesAsCpuOnlyInTheSameOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  using F = TypeParam;
  const Outcome cpu = run<F>("CPUOnly");
  const Outcome dev = run<F>("DeviceOnly");
  EXPECT_EQ(dev.sent, cpu.sent);
  EXPECT_EQ(dev.dropped, cpu.dropped);
  EXPECT_EQ(dev.counters.at("device_packets"), F::kPackets);  // every IP packet went
  EXPECT_EQ(dev.counters.at("cpu_batches"), 0u);
  EXPECT_EQ(dev.counters.at("tasks_failed"), 0u);
}

TYPED_TEST(OffloadLookupElement, FixedFractionWithAffinityKeepsEveryFlowInOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  using F = TypeParam;
  const Outcome cpu = run<F>("CPUOnly");
  const Outcome split = run<F>("FixedFraction(0.5, SEED 3)", ", AFFINITY true");
  EXPECT_EQ(sorted(split.sent), sorted(cpu.sent)) << "not the same packets, or not the same ports";
  EXPECT_GT(split.counters.at("device_packets"), F::kPackets / 4);
  EXPECT_GT(split.counters.at("cpu_batches"), 0u);
  EXPECT_GT(split.counters.at("affinity_packets"), 0u);
  std::map<uint32_t, std::vector<uint16_t>> flows;  // per flow, the order of the packets' tags
  for (const Sent& s : split.sent) flows[F::flow_of(s.tag)].push_back(s.tag);
  for (const auto& [flow, tags] : flows)
    EXPECT_TRUE(std::is_sorted(tags.begin(), tags.end())) << "flow " << flow << " reordered";
}

TYPED_TEST(OffloadLookupElement, InjectedDeviceFailureLosesNothing) {
  REQUIRE_OFFLOAD_DEVICE();
  using F = TypeParam;
  const Outcome cpu = run<F>("CPUOnly");
  setenv(offload::kFailAfterEnv, "3", 1);
  const Outcome failed = run<F>("DeviceOnly");
  unsetenv(offload::kFailAfterEnv);
  EXPECT_FALSE(failed.device_up);
  EXPECT_GT(failed.counters.at("tasks_failed"), 0u);
  EXPECT_GT(failed.counters.at("no_device_batches"), 0u);  // later batches: device down
  EXPECT_EQ(sorted(failed.sent), sorted(cpu.sent));
  EXPECT_EQ(failed.dropped, cpu.dropped);
}

// With AFFINITY, packets of flows still held for the failed device wait behind them (and run on
// the CPU at their turn) instead of overtaking them, and none is given to the device that is
// down: under DeviceOnly a batch runs on the CPU only once the device is down, so no packet
// follows its flow onto a device (affinity_packets).
TYPED_TEST(OffloadLookupElement, InjectedDeviceFailureWithAffinityKeepsEveryFlowInOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  using F = TypeParam;
  const Outcome cpu = run<F>("CPUOnly");
  setenv(offload::kFailAfterEnv, "3", 1);
  const Outcome failed = run<F>("DeviceOnly", ", AFFINITY true");
  unsetenv(offload::kFailAfterEnv);
  EXPECT_FALSE(failed.device_up);
  EXPECT_GT(failed.counters.at("tasks_failed"), 0u);
  EXPECT_EQ(failed.counters.at("affinity_packets"), 0u);
  EXPECT_EQ(sorted(failed.sent), sorted(cpu.sent));
  EXPECT_EQ(failed.dropped, cpu.dropped);
  std::map<uint32_t, std::vector<uint16_t>> flows;
  for (const Sent& s : failed.sent) flows[F::flow_of(s.tag)].push_back(s.tag);
  for (const auto& [flow, tags] : flows)
    EXPECT_TRUE(std::is_sorted(tags.begin(), tags.end())) << "flow " << flow << " reordered";
}

// A task not back within TASK_TIMEOUT_MS counts as a silent device: with 0 every task times out
// at once, so each is re-run on the CPU while the device thread still holds its buffers.
TYPED_TEST(OffloadLookupElement, TaskTimeoutReRunsOnTheCpu) {
  REQUIRE_OFFLOAD_DEVICE();
  using F = TypeParam;
  const Outcome cpu = run<F>("CPUOnly");
  const Outcome late = run<F>("DeviceOnly", ", TASK_TIMEOUT_MS 0");
  EXPECT_FALSE(late.device_up);
  EXPECT_GT(late.counters.at("tasks_timed_out"), 0u);
  EXPECT_EQ(sorted(late.sent), sorted(cpu.sent));
  EXPECT_EQ(late.dropped, cpu.dropped);
}

TYPED_TEST(OffloadLookupElement, ConfigErrors) {
  using F = TypeParam;
  EXPECT_EQ(testing::config_error(F::kElement, {F::route_file(), "AGGREGATE 0"}),
            std::string("test.click:1:1: test :: ") + F::kElement + ": AGGREGATE must be 1..256");
}

// The offloaded IPv6 lookup runs the trie only: IP6Lookup's ALGORITHM is not one of its keys.
TEST(OffloadIpv6Element, HasNoAlgorithmChoice) {
  EXPECT_EQ(
      testing::config_error("IP6LookupOffload", {Ipv6::route_file(), "ALGORITHM bsearch"}),
      "test.click:1:1: test :: IP6LookupOffload: unknown keyword 'ALGORITHM'; IP6LookupOffload "
      "takes AGGREGATE, FLUSH_US, AFFINITY, TASK_TIMEOUT_MS, CHAIN, FUSE");
}

TEST(OffloadBalancers, ConfigErrors) {
  EXPECT_EQ(testing::config_error("FixedFraction", {"1.5"}),
            "test.click:1:1: test :: FixedFraction: W must be between 0 and 1");
  EXPECT_EQ(testing::config_error("DeviceOnly", {"DEVICE 64"}),
            "test.click:1:1: test :: DeviceOnly: DEVICE must be 0..63");
}

}  // namespace
}  // namespace fulcrum
