// CheckIPChecksumOffload, the example offloadable element: on the device (PoCL) it passes and
// drops exactly the frames its CPU function does, and the CPU function agrees with DPDK's
// rte_ipv4_cksum on every header.
#include <gtest/gtest.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "elements/ip/check_ip_checksum_offload.hh"
#include "offload_testing.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kFrames = 3000;
constexpr uint32_t kIpOffset = 14;

// Valid headers (some with options), corrupted checksums, and frames the element must drop as
// not IPv4; the IPv4 headers' checksums are set by DPDK's rte_ipv4_cksum.
std::vector<std::vector<uint8_t>> frames() {
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t i = 0; i < kFrames; ++i) {
    std::vector<uint8_t> f =
        testing::ipv4_udp_frame(0x0A000001 + i, 0xC0A80001 + i * 7, static_cast<uint8_t>(i));
    auto* ip = reinterpret_cast<rte_ipv4_hdr*>(f.data() + kIpOffset);
    if (i % 5 == 1) {  // IHL 6: four bytes of options (zeros), checksum over 24 bytes
      f.insert(f.begin() + kIpOffset + sizeof(rte_ipv4_hdr), 4, 0);
      ip = reinterpret_cast<rte_ipv4_hdr*>(f.data() + kIpOffset);
      ip->version_ihl = 0x46;
    }
    ip->hdr_checksum = 0;
    ip->hdr_checksum = rte_ipv4_cksum(ip);
    if (i % 7 == 3) f[kIpOffset + 10] ^= 0x01;    // bad checksum
    if (i % 11 == 4) f[12] = 0x86, f[13] = 0xDD;  // not IPv4
    if (i % 13 == 5) f.resize(kIpOffset + 10);    // truncated header
    out.push_back(f);
  }
  return out;
}

TEST(CheckIPChecksumOffload, CpuFunctionAgreesWithDpdk) {
  auto e = testing::make_element("CheckIPChecksumOffload", {});
  ASSERT_NE(e, nullptr);
  const std::vector<std::vector<uint8_t>> fs = frames();
  for (size_t first = 0; first < fs.size(); first += kMaxBatch) {
    const std::vector<std::vector<uint8_t>> part(
        fs.begin() + static_cast<std::ptrdiff_t>(first),
        fs.begin() + static_cast<std::ptrdiff_t>(std::min<size_t>(fs.size(), first + kMaxBatch)));
    PacketBatch batch;
    const std::vector<Verdict> v = testing::run_batch(*e, batch, part);
    for (size_t k = 0; k < part.size(); ++k) {
      const std::vector<uint8_t>& f = part[k];
      const bool ipv4 = f.size() >= kIpOffset + 20 && f[12] == 0x08 && f[13] == 0x00;
      if (!ipv4) {
        EXPECT_EQ(testing::drop_reason(*e, v[k]), "not-ipv4") << first + k;
        continue;
      }
      std::vector<uint8_t> hdr(f.begin() + kIpOffset,
                               f.begin() + kIpOffset + (f[kIpOffset] & 0xF) * 4);
      auto* copy = reinterpret_cast<rte_ipv4_hdr*>(hdr.data());
      const uint16_t stored = copy->hdr_checksum;
      copy->hdr_checksum = 0;
      const bool good = rte_ipv4_cksum(copy) == stored;
      EXPECT_EQ(testing::drop_reason(*e, v[k]), good ? "(not dropped)" : "bad-checksum")
          << first + k;
    }
    testing::free_batch(batch);
  }
}

TEST(CheckIPChecksumOffload, DeviceOnlyLeavesAsCpuOnly) {
  REQUIRE_OFFLOAD_DEVICE();
  const std::vector<std::vector<uint8_t>> fs = frames();
  const testing::PipelineOutcome cpu = testing::run_pipeline(
      "FromInput -> CPUOnly -> c :: CheckIPChecksumOffload -> ToOutput;", fs, 1, "c");
  const testing::PipelineOutcome dev = testing::run_pipeline(
      "FromInput -> DeviceOnly -> c :: CheckIPChecksumOffload(AGGREGATE 4) -> ToOutput;", fs, 1,
      "c");
  EXPECT_GT(cpu.dropped, 0u);
  EXPECT_LT(cpu.dropped, fs.size());
  EXPECT_EQ(dev.frames, cpu.frames);
  EXPECT_EQ(dev.dropped, cpu.dropped);
  EXPECT_GT(dev.counters.at("device_packets"), 0u);
  EXPECT_EQ(dev.counters.at("tasks_failed"), 0u);
  EXPECT_TRUE(dev.device_up);
}

}  // namespace
}  // namespace fulcrum
