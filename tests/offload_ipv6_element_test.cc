// IP6LookupOffload in a pipeline (on the OpenCL device, PoCL in CI): what leaves is what the
// CPU function makes, in the same order when every batch goes to the device, and nothing is
// lost when the device fails mid-run.
#include <gtest/gtest.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "lib/route6_table.hh"
#include "offload/failure_injection.hh"
#include "offload_testing.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr size_t kRoutes = 3000;
constexpr uint64_t kRouteSeed = 17;
constexpr uint16_t kPorts = 4;
constexpr uint32_t kPackets = 12000;
constexpr uint32_t kFlows = 300;
constexpr uint32_t kBurst = 64;
constexpr uint32_t kFrameLen = 78;
constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint32_t kVersion6Word = 0x60000000;
constexpr uint8_t kProtoUdp = 17;

using Bytes = std::array<uint8_t, 16>;

using testing::Sent;

const std::vector<Route6>& routes() {
  static const std::vector<Route6> r = generate_routes6(kRoutes, kRouteSeed, kPorts);
  return r;
}

std::string route_file() {
  static const std::string path = [] {
    std::string p = testing::temp_path("offload-ipv6-element-routes.txt");
    EXPECT_TRUE(write_routes6(p, routes()).ok());
    return p;
  }();
  return path;
}

std::vector<uint8_t> ipv6_udp_frame(const Bytes& src, const Bytes& dst) {
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

// Frames of kFlows flows (destinations inside routes, some with a prefix bit flipped, some
// random); packet i of flow f keeps the order of i. Plus frames that are not IPv6.
std::vector<std::vector<uint8_t>> frames() {
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
    constexpr uint32_t kFirstGroupBit = 24;  // a flipped bit below TBL24 leaves merged paths
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
    out.push_back(ipv6_udp_frame(src, dst[i % kFlows]));
    if (i % 1000 == 0) out.push_back(testing::ether_frame(kEtherTypeArp));  // CPU drops it
  }
  return out;
}

using Outcome = testing::PipelineOutcome;

Outcome run(const std::string& balancer, const std::string& extra = "",
            const std::string& element = "IP6LookupOffload") {
  const std::string args = element == "IP6LookupOffload" ? ", AGGREGATE 4, FLUSH_US 0" + extra : "";
  return testing::run_pipeline("FromInput -> " + balancer + " -> l :: " + element + "(" +
                                   route_file() + args + ") -> ToOutput;",
                               frames(), kPorts, "l", kBurst);
}

constexpr uint32_t kNotIpv6 = kPackets / 1000;

// The flow of the packet whose tag (frame index) is `tag`; kFlows for the ARP frames.
uint32_t flow_of(uint16_t tag) {
  static const std::vector<uint32_t> flows = [] {
    std::vector<uint32_t> f;
    for (uint32_t i = 0; i < kPackets; ++i) {
      f.push_back(i % kFlows);
      if (i % 1000 == 0) f.push_back(kFlows);
    }
    return f;
  }();
  return flows.at(tag);
}

// The CPU path is IP6Lookup itself: the same packets to the same ports in the same order.
TEST(OffloadIpv6Element, CpuOnlyLeavesAsIP6Lookup) {
  const Outcome plain = run("CPUOnly", "", "IP6Lookup");
  const Outcome cpu = run("CPUOnly");
  ASSERT_EQ(plain.sent.size() + plain.dropped, kPackets + kNotIpv6);
  EXPECT_GT(plain.dropped, kNotIpv6);  // the ARP frames and unrouted packets
  EXPECT_GT(plain.sent.size(), kPackets / 2);
  EXPECT_EQ(cpu.sent, plain.sent);
  EXPECT_EQ(cpu.dropped, plain.dropped);
  EXPECT_EQ(cpu.counters.at("device_packets"), 0u);
}

TEST(OffloadIpv6Element, DeviceOnlyLeavesAsCpuOnlyInTheSameOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  const Outcome cpu = run("CPUOnly");
  const Outcome dev = run("DeviceOnly");
  EXPECT_EQ(dev.sent, cpu.sent);
  EXPECT_EQ(dev.dropped, cpu.dropped);
  EXPECT_EQ(dev.counters.at("device_packets"), kPackets);  // every IPv6 packet went
  EXPECT_EQ(dev.counters.at("cpu_batches"), 0u);
  EXPECT_EQ(dev.counters.at("tasks_failed"), 0u);
}

TEST(OffloadIpv6Element, FixedFractionWithAffinityKeepsEveryFlowInOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  const Outcome cpu = run("CPUOnly");
  const Outcome split = run("FixedFraction(0.5, SEED 3)", ", AFFINITY true");
  std::vector<Sent> a = cpu.sent, b = split.sent;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b) << "not the same packets, or not to the same ports";
  EXPECT_GT(split.counters.at("device_packets"), kPackets / 4);
  EXPECT_GT(split.counters.at("cpu_batches"), 0u);
  EXPECT_GT(split.counters.at("affinity_packets"), 0u);
  std::map<uint32_t, std::vector<uint16_t>> flows;  // per flow, the order of the packets' tags
  for (const Sent& s : split.sent) flows[flow_of(s.tag)].push_back(s.tag);
  for (const auto& [flow, tags] : flows)
    EXPECT_TRUE(std::is_sorted(tags.begin(), tags.end())) << "flow " << flow << " reordered";
}

TEST(OffloadIpv6Element, InjectedDeviceFailureLosesNothing) {
  REQUIRE_OFFLOAD_DEVICE();
  const Outcome cpu = run("CPUOnly");
  setenv(offload::kFailAfterEnv, "3", 1);
  const Outcome failed = run("DeviceOnly");
  unsetenv(offload::kFailAfterEnv);
  EXPECT_FALSE(failed.device_up);
  EXPECT_GT(failed.counters.at("tasks_failed"), 0u);
  EXPECT_GT(failed.counters.at("no_device_batches"), 0u);  // later batches: device down
  std::vector<Sent> a = cpu.sent, b = failed.sent;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_EQ(failed.dropped, cpu.dropped);
}

TEST(OffloadIpv6Element, ConfigErrors) {
  EXPECT_EQ(testing::config_error("IP6LookupOffload", {route_file(), "AGGREGATE 0"}),
            "test.click:1:1: test :: IP6LookupOffload: AGGREGATE must be 1..256");
  EXPECT_EQ(testing::config_error("IP6LookupOffload", {route_file(), "ALGORITHM bsearch"}),
            "test.click:1:1: test :: IP6LookupOffload: unknown keyword 'ALGORITHM'");
}

}  // namespace
}  // namespace fulcrum
