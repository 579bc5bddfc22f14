// MD5DigestOffload in a pipeline (on the OpenCL device, PoCL in CI): CPU-only is MD5Digest
// itself; device-only leaves the same frames (digest trailers included), in the same order, with
// the same digests in user[0..1] and the same drops; a FixedFraction split and an injected device
// failure lose nothing. The digests are also checked against OpenSSL's MD5 of each payload.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ids_test_frames.hh"
#include "lib/re/md5.hh"
#include "offload/failure_injection.hh"
#include "offload_testing.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kPackets = 3000;
constexpr uint32_t kMaxPayload = 1400;
constexpr uint32_t kBurst = 64;
constexpr uint32_t kMalformedEvery = 97;
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint32_t kEthIpUdp = 14 + 20 + 8;
constexpr uint32_t kEthIpTcp = 14 + 20 + 20;

struct Traffic {
  std::vector<std::vector<uint8_t>> frames;
  std::vector<std::string> payloads;  // per frame; empty for malformed ones (dropped)
  uint32_t malformed = 0;
};

// UDP and TCP frames with payloads of 0..1400 bytes (every MD5 padding edge among them), and
// now and then an ARP frame or a frame cut inside its IPv4 packet (dropped by the CPU function).
const Traffic& traffic() {
  static const Traffic* t = [] {
    auto* x = new Traffic;
    std::mt19937 rng(21);
    for (uint32_t i = 0; i < kPackets; ++i) {
      if (i % kMalformedEvery == kMalformedEvery - 1) {
        std::vector<uint8_t> f = i % 2 ? testing::ether_frame(kEtherTypeArp)
                                       : testing::l4_frame(testing::kProtoUdp, 0x0a000001,
                                                           0x0a000002, 1, 2, std::string(100, 'x'));
        if (i % 2 == 0) f.resize(f.size() - 10);  // total length past the frame
        x->frames.push_back(f);
        x->payloads.emplace_back();
        ++x->malformed;
        continue;
      }
      const uint32_t len = i < 130 ? i : rng() % (kMaxPayload + 1);
      std::string p(len, '\0');
      for (char& c : p) c = static_cast<char>(rng());
      const uint8_t proto = i % 3 == 0 ? testing::kProtoTcp : testing::kProtoUdp;
      x->frames.push_back(testing::l4_frame(proto, 0x0a000000 + i % 50, 0x0b000001,
                                            static_cast<uint16_t>(1000 + i % 50), 80, p));
      x->payloads.push_back(p);
    }
    return x;
  }();
  return *t;
}

using Outcome = testing::PipelineOutcome;

Outcome run(const std::string& balancer, const std::string& element = "MD5DigestOffload",
            const std::string& extra = "") {
  const std::string args = element == "MD5DigestOffload"
                               ? "TRAILER true, AGGREGATE 4, FLUSH_US 0" + extra
                               : "TRAILER true";
  return testing::run_pipeline(
      "FromInput -> " + balancer + " -> m :: " + element + "(" + args + ") -> ToOutput;",
      traffic().frames, 1, "m", kBurst);
}

// Every packet that left carries the OpenSSL MD5 of its payload in user[0..1] and as trailer.
void expect_openssl_digests(const Outcome& o) {
  const Traffic& t = traffic();
  ASSERT_EQ(o.sent.size(), o.frames.size());
  for (size_t k = 0; k < o.sent.size(); ++k) {
    const std::string& p = t.payloads.at(o.sent[k].tag);
    const re::Md5Digest want = re::md5(reinterpret_cast<const uint8_t*>(p.data()), p.size());
    re::Md5Digest user;
    std::memcpy(user.b, o.user01[k].data(), re::kMd5Len);
    ASSERT_EQ(user, want) << "frame " << o.sent[k].tag;
    const std::vector<uint8_t>& f = o.frames[k];
    ASSERT_EQ(f.size(), t.frames[o.sent[k].tag].size() + re::kMd5Len);
    ASSERT_TRUE(std::equal(want.b, want.b + re::kMd5Len, f.end() - re::kMd5Len));
  }
}

TEST(OffloadMd5Element, CpuOnlyLeavesAsMD5Digest) {
  const Outcome plain = run("CPUOnly", "MD5Digest");
  const Outcome cpu = run("CPUOnly");
  EXPECT_EQ(plain.sent.size(), kPackets - traffic().malformed);
  EXPECT_EQ(plain.dropped, traffic().malformed);
  EXPECT_EQ(cpu.sent, plain.sent);
  EXPECT_EQ(cpu.frames, plain.frames);
  EXPECT_EQ(cpu.user01, plain.user01);
  EXPECT_EQ(cpu.counters.at("bytes"), plain.counters.at("bytes"));
  EXPECT_EQ(cpu.counters.at("device_packets"), 0u);
  expect_openssl_digests(cpu);
}

TEST(OffloadMd5Element, DeviceOnlyLeavesAsCpuOnlyInTheSameOrder) {
  REQUIRE_OFFLOAD_DEVICE();
  const Outcome cpu = run("CPUOnly");
  const Outcome dev = run("DeviceOnly");
  EXPECT_EQ(dev.sent, cpu.sent);
  EXPECT_EQ(dev.frames, cpu.frames);
  EXPECT_EQ(dev.user01, cpu.user01);
  EXPECT_EQ(dev.dropped, cpu.dropped);
  EXPECT_EQ(dev.counters.at("bytes"), cpu.counters.at("bytes"));
  EXPECT_EQ(dev.counters.at("device_packets"), kPackets - traffic().malformed);
  EXPECT_EQ(dev.counters.at("tasks_failed"), 0u);
  expect_openssl_digests(dev);
}

// TASK_BYTES at its smallest (one region of 2048 bytes): tasks close on their packed bytes in the
// middle of a batch, and the packets gathered after that point go to the next task.
TEST(OffloadMd5Element, TasksClosedByTheirBytesLeaveAsCpuOnly) {
  REQUIRE_OFFLOAD_DEVICE();
  const Outcome cpu = run("CPUOnly");
  const Outcome dev = run("DeviceOnly", "MD5DigestOffload", ", TASK_BYTES 2048");
  const Outcome roomy = run("DeviceOnly");
  EXPECT_EQ(dev.sent, cpu.sent);
  EXPECT_EQ(dev.frames, cpu.frames);
  EXPECT_EQ(dev.user01, cpu.user01);
  EXPECT_EQ(dev.counters.at("device_packets"), kPackets - traffic().malformed);
  // Payloads average 700 bytes: about three to a task instead of AGGREGATE 4 bursts of 64.
  EXPECT_GT(dev.counters.at("tasks"), 10 * roomy.counters.at("tasks"));
  expect_openssl_digests(dev);
}

TEST(OffloadMd5Element, FixedFractionAndDeviceFailureLoseNothing) {
  REQUIRE_OFFLOAD_DEVICE();
  const Outcome cpu = run("CPUOnly");
  const Outcome split = run("FixedFraction(0.5, SEED 3)");
  setenv(offload::kFailAfterEnv, "3", 1);
  const Outcome failed = run("DeviceOnly");
  unsetenv(offload::kFailAfterEnv);
  EXPECT_GT(split.counters.at("device_packets"), kPackets / 4);
  EXPECT_GT(split.counters.at("cpu_batches"), 0u);
  EXPECT_FALSE(failed.device_up);
  EXPECT_GT(failed.counters.at("tasks_failed"), 0u);
  for (const Outcome* o : {&split, &failed}) {
    EXPECT_EQ(o->sent.size(), cpu.sent.size());
    EXPECT_EQ(o->dropped, cpu.dropped);
    EXPECT_EQ(o->counters.at("bytes"), cpu.counters.at("bytes"));
    expect_openssl_digests(*o);
  }
}

TEST(OffloadMd5Element, ConfigErrors) {
  EXPECT_EQ(testing::config_error("MD5DigestOffload", {"AGGREGATE 0"}),
            "test.click:1:1: test :: MD5DigestOffload: AGGREGATE must be 1..256");
  EXPECT_EQ(testing::config_error("MD5DigestOffload", {"TASK_BYTES 1000"}),
            "test.click:1:1: test :: MD5DigestOffload: TASK_BYTES must hold one region of 2048 "
            "bytes");
  EXPECT_EQ(testing::config_error("MD5DigestOffload", {"TRAILER maybe"}).find("TRAILER") !=
                std::string::npos,
            true);
}

}  // namespace
}  // namespace fulcrum
