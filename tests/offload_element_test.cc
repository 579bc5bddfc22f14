// Offloadable elements in a pipeline (IPLookupOffload on the OpenCL device, PoCL in CI): what
// leaves is what the CPU function makes, in the same order when every batch goes to the device,
// as the same packets with each flow's order kept under a fixed split with AFFINITY, and with
// nothing lost when the device fails mid-run.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lib/route_table.hh"
#include "offload/failure_injection.hh"
#include "offload_testing.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr size_t kRoutes = 5000;
constexpr uint16_t kPorts = 4;
constexpr uint32_t kPackets = 20000;
constexpr uint32_t kFlows = 300;
constexpr uint32_t kBurst = 64;

using testing::Sent;

std::string route_file() {
  static const std::string path = [] {
    std::string p = testing::temp_path("offload-element-routes.txt");
    std::ofstream f(p);
    for (const Route4& r : generate_routes4(kRoutes, 17, kPorts))
      f << ((r.prefix >> 24) & 0xFF) << '.' << ((r.prefix >> 16) & 0xFF) << '.'
        << ((r.prefix >> 8) & 0xFF) << '.' << (r.prefix & 0xFF) << '/' << int{r.len} << ' '
        << r.port << '\n';
    return p;
  }();
  return path;
}

// Frames of kFlows flows (destinations inside routes, and some that match none); packet i of
// flow f keeps the order of i.
std::vector<std::vector<uint8_t>> frames() {
  std::mt19937 rng(5);
  const std::vector<Route4> routes = generate_routes4(kRoutes, 17, kPorts);
  std::vector<uint32_t> dst(kFlows);
  for (uint32_t& d : dst) {
    const Route4& r = routes[rng() % routes.size()];
    const uint32_t host_bits = r.len == 0 ? ~0u : r.len == 32 ? 0 : (1u << (32 - r.len)) - 1;
    d = rng() % 8 == 0 ? static_cast<uint32_t>(rng()) : r.prefix | (rng() & host_bits);
  }
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t i = 0; i < kPackets; ++i)
    out.push_back(testing::ipv4_udp_frame(0x0A000001 + (i % kFlows), dst[i % kFlows]));
  out.push_back(testing::ether_frame(0x0806));  // not IPv4: the CPU function drops it
  return out;
}

testing::PipelineOutcome run(const std::string& balancer, const std::string& extra = "") {
  return testing::run_pipeline("FromInput -> " + balancer + " -> l :: IPLookupOffload(" +
                                   route_file() + ", AGGREGATE 4, FLUSH_US 0" + extra +
                                   ") -> ToOutput;",
                               frames(), kPorts, "l", kBurst);
}

TEST(OffloadElement, DeviceOnlyLeavesAsCpuOnlyInTheSameOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome cpu = run("CPUOnly");
  const testing::PipelineOutcome dev = run("DeviceOnly");
  ASSERT_EQ(cpu.sent.size() + cpu.dropped, kPackets + 1);
  EXPECT_GT(cpu.dropped, 1u);  // the ARP frame and unrouted destinations
  EXPECT_EQ(cpu.counters.at("device_packets"), 0u);
  EXPECT_EQ(dev.sent, cpu.sent);
  EXPECT_EQ(dev.dropped, cpu.dropped);
  EXPECT_EQ(dev.counters.at("device_packets"), kPackets);  // every IPv4 packet went
  EXPECT_EQ(dev.counters.at("cpu_batches"), 0u);
  EXPECT_EQ(dev.counters.at("tasks_failed"), 0u);
}

// Per flow (source address), the order of the packets' tags.
std::map<uint32_t, std::vector<uint16_t>> per_flow(const std::vector<Sent>& sent) {
  std::map<uint32_t, std::vector<uint16_t>> flows;
  for (const Sent& s : sent) flows[s.tag % kFlows].push_back(s.tag);
  return flows;
}

TEST(OffloadElement, FixedFractionWithAffinityKeepsEveryFlowInOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome cpu = run("CPUOnly");
  const testing::PipelineOutcome split = run("FixedFraction(0.5, SEED 3)", ", AFFINITY true");
  EXPECT_GT(split.counters.at("device_packets"), kPackets / 4);
  EXPECT_GT(split.counters.at("cpu_batches"), 0u);
  EXPECT_GT(split.counters.at("affinity_packets"), 0u);
  std::vector<Sent> a = cpu.sent, b = split.sent;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b) << "not the same packets, or not to the same ports";
  for (const auto& [flow, tags] : per_flow(split.sent))
    EXPECT_TRUE(std::is_sorted(tags.begin(), tags.end())) << "flow " << flow << " reordered";
}

TEST(OffloadElement, InjectedDeviceFailureLosesNothing) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome cpu = run("CPUOnly");
  setenv(offload::kFailAfterEnv, "3", 1);
  const testing::PipelineOutcome failed = run("DeviceOnly");
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

// A task not back within TASK_TIMEOUT_MS counts as a silent device: with 0 every task times out
// at once, so each is re-run on the CPU while the device thread still holds its buffers.
TEST(OffloadElement, TaskTimeoutReRunsOnTheCpu) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome cpu = run("CPUOnly");
  const testing::PipelineOutcome late = run("DeviceOnly", ", TASK_TIMEOUT_MS 0");
  EXPECT_FALSE(late.device_up);
  EXPECT_GT(late.counters.at("tasks_timed_out"), 0u);
  std::vector<Sent> a = cpu.sent, b = late.sent;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  EXPECT_EQ(a, b);
  EXPECT_EQ(late.dropped, cpu.dropped);
}

TEST(OffloadElement, ConfigErrors) {
  EXPECT_EQ(testing::config_error("IPLookupOffload", {route_file(), "AGGREGATE 0"}),
            "test.click:1:1: test :: IPLookupOffload: AGGREGATE must be 1..256");
  EXPECT_EQ(testing::config_error("FixedFraction", {"1.5"}),
            "test.click:1:1: test :: FixedFraction: W must be between 0 and 1");
  EXPECT_EQ(testing::config_error("DeviceOnly", {"DEVICE 64"}),
            "test.click:1:1: test :: DeviceOnly: DEVICE must be 0..63");
}

}  // namespace
}  // namespace fulcrum
