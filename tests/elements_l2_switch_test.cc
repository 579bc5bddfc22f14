// Golden tests for L2Switch: learning, forwarding, same-port filtering, unknown and broadcast
// destinations (output 1 or drop), truncated frames, station moves and configuration errors.
#include <gtest/gtest.h>
#include <rte_ether.h>

#include <array>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "elements/l2/l2_switch.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;
using Mac = std::array<uint8_t, RTE_ETHER_ADDR_LEN>;

constexpr int kPorts = 4;
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint32_t kMaxRobustLen = 20;
constexpr uint64_t kOnlyOutput0 = 0x1;

constexpr Mac kHostA = {0x02, 0, 0, 0, 0, 0x0a};
constexpr Mac kHostB = {0x02, 0, 0, 0, 0, 0x0b};
constexpr Mac kHostC = {0x02, 0, 0, 0, 0, 0x0c};
constexpr Mac kBroadcast = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
constexpr Mac kMulticast = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};

Frame frame(const Mac& dst, const Mac& src) {
  Frame f = testing::ether_frame(kEtherTypeIpv4);
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + RTE_ETHER_ADDR_LEN);
  return f;
}

Mac host(uint32_t i) {
  return {0x02,
          0x10,
          static_cast<uint8_t>(i >> 16),
          static_cast<uint8_t>(i >> 8),
          static_cast<uint8_t>(i),
          0x01};
}

// What one frame sent on `in_port` became: the verdict and, when forwarded, the out_port.
struct Outcome {
  Verdict verdict;
  uint16_t out_port;
};

std::vector<Outcome> send(Element& e, const std::vector<Frame>& frames, uint16_t in_port) {
  PacketBatch b;
  const std::vector<Verdict> v = testing::run_batch(e, b, frames, in_port);
  std::vector<Outcome> out;
  for (uint32_t i = 0; i < v.size(); ++i)
    out.push_back({v[i], v[i].is_drop() ? kNoPort : out_port(b.at(i))});
  testing::free_batch(b);
  return out;
}

Outcome send_one(Element& e, const Frame& f, uint16_t in_port) {
  return send(e, {f}, in_port).at(0);
}

TEST(ElementsL2Switch, LearnsAndForwards) {
  auto e = testing::make_or_fail("L2Switch", {}, kPorts);
  ASSERT_NE(e, nullptr);
  // B is unknown: flooded through output 1 (connected); A is learned on port 1.
  Outcome o = send_one(*e, frame(kHostB, kHostA), 1);
  EXPECT_EQ(o.verdict.port(), L2Switch::kFloodOutput);
  EXPECT_EQ(testing::counter(*e, "entries"), 1u);
  // B answers from port 2: forwarded to port 1; B is learned on port 2.
  o = send_one(*e, frame(kHostA, kHostB), 2);
  EXPECT_EQ(o.verdict.port(), 0);
  EXPECT_EQ(o.out_port, 1);
  o = send_one(*e, frame(kHostB, kHostA), 1);
  EXPECT_EQ(o.verdict.port(), 0);
  EXPECT_EQ(o.out_port, 2);
  EXPECT_EQ(testing::counter(*e, "entries"), 2u);
  EXPECT_EQ(testing::counter(*e, "learn_failures"), 0u);
}

TEST(ElementsL2Switch, FiltersDestinationOnInputPort) {
  auto e = testing::make_or_fail("L2Switch", {}, kPorts);
  ASSERT_NE(e, nullptr);
  send_one(*e, frame(kHostB, kHostA), 1);
  const Outcome o = send_one(*e, frame(kHostA, kHostC), 1);
  EXPECT_EQ(testing::drop_reason(*e, o.verdict), "same-port");
  // C was learned even though its frame was filtered.
  const Outcome back = send_one(*e, frame(kHostC, kHostB), 3);
  EXPECT_EQ(back.verdict.port(), 0);
  EXPECT_EQ(back.out_port, 1);
}

TEST(ElementsL2Switch, UnknownDestinationDroppedWithoutOutput1) {
  std::string error;
  auto e = testing::make_element_connected("L2Switch", {}, kOnlyOutput0, &error, kPorts);
  ASSERT_NE(e, nullptr) << error;
  Outcome o = send_one(*e, frame(kHostB, kHostA), 0);
  EXPECT_EQ(testing::drop_reason(*e, o.verdict), "unknown-destination");
  o = send_one(*e, frame(kBroadcast, kHostB), 2);
  EXPECT_EQ(testing::drop_reason(*e, o.verdict), "unknown-destination");
  o = send_one(*e, frame(kHostB, kHostA), 0);
  EXPECT_EQ(o.verdict.port(), 0);
  EXPECT_EQ(o.out_port, 2);
}

TEST(ElementsL2Switch, BroadcastAndMulticastAreFloodedAndNotLearned) {
  auto e = testing::make_or_fail("L2Switch", {}, kPorts);
  ASSERT_NE(e, nullptr);
  const std::vector<Outcome> o =
      send(*e, {frame(kBroadcast, kHostA), frame(kMulticast, kHostA)}, 1);
  EXPECT_EQ(o[0].verdict.port(), L2Switch::kFloodOutput);
  EXPECT_EQ(o[1].verdict.port(), L2Switch::kFloodOutput);
  // A multicast source is not learned: frames to it stay floods.
  send_one(*e, frame(kHostA, kMulticast), 2);
  EXPECT_EQ(testing::counter(*e, "entries"), 1u);
  EXPECT_EQ(send_one(*e, frame(kMulticast, kHostB), 3).verdict.port(), L2Switch::kFloodOutput);
}

TEST(ElementsL2Switch, StationMoveFollowsLatestPort) {
  auto e = testing::make_or_fail("L2Switch", {}, kPorts);
  ASSERT_NE(e, nullptr);
  send_one(*e, frame(kHostB, kHostA), 1);
  send_one(*e, frame(kHostB, kHostA), 3);
  const Outcome o = send_one(*e, frame(kHostA, kHostB), 0);
  EXPECT_EQ(o.verdict.port(), 0);
  EXPECT_EQ(o.out_port, 3);
  EXPECT_EQ(testing::counter(*e, "entries"), 2u);
}

TEST(ElementsL2Switch, TruncatedFrames) {
  auto e = testing::make_or_fail("L2Switch", {}, kPorts);
  ASSERT_NE(e, nullptr);
  send_one(*e, frame(kHostB, kHostA), 1);
  const std::vector<Outcome> o =
      send(*e, testing::prefixes(frame(kHostA, kHostB), kMaxRobustLen), 2);
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n) {
    if (n < L2Switch::kEtherHeaderLen) {
      EXPECT_EQ(testing::drop_reason(*e, o[n].verdict), "truncated") << n;
    } else {
      EXPECT_EQ(o[n].verdict.port(), 0) << n;
      EXPECT_EQ(o[n].out_port, 1) << n;
    }
  }
}

// A learning round from many hosts (one batch per port, a batch as large as allowed), then every
// host sends to every port's hosts in one mixed batch.
TEST(ElementsL2Switch, ManyHostsInFullBatches) {
  constexpr uint32_t kHostsPerPort = kMaxBatch;
  auto e = testing::make_or_fail("L2Switch", {"CAPACITY 4096"}, kPorts);
  ASSERT_NE(e, nullptr);
  for (uint16_t port = 0; port < kPorts; ++port) {
    std::vector<Frame> frames;
    for (uint32_t h = 0; h < kHostsPerPort; ++h)
      frames.push_back(frame(kBroadcast, host(port * kHostsPerPort + h)));
    for (const Outcome& o : send(*e, frames, port))
      EXPECT_EQ(o.verdict.port(), L2Switch::kFloodOutput);
  }
  EXPECT_EQ(testing::counter(*e, "entries"), uint64_t{kPorts} * kHostsPerPort);
  constexpr uint16_t kSender = 0;
  std::vector<Frame> frames;
  for (uint32_t h = 0; h < kHostsPerPort; ++h)
    frames.push_back(frame(host((h % kPorts) * kHostsPerPort + h), host(h)));
  const std::vector<Outcome> o = send(*e, frames, kSender);
  for (uint32_t h = 0; h < kHostsPerPort; ++h) {
    const uint16_t dst_port = static_cast<uint16_t>(h % kPorts);
    if (dst_port == kSender) {
      EXPECT_EQ(testing::drop_reason(*e, o[h].verdict), "same-port") << h;
    } else {
      EXPECT_EQ(o[h].verdict.port(), 0) << h;
      EXPECT_EQ(o[h].out_port, dst_port) << h;
    }
  }
}

// Excluded slots (a batch reused after a branch) are neither learned nor forwarded.
TEST(ElementsL2Switch, SkipsExcludedSlots) {
  auto e = testing::make_or_fail("L2Switch", {}, kPorts);
  ASSERT_NE(e, nullptr);
  send_one(*e, frame(kHostB, kHostA), 1);
  PacketBatch b;
  b.push(testing::make_packet(frame(kHostA, kHostB), 2));
  Packet* excluded = testing::make_packet(frame(kHostA, kHostC), 3);
  b.push(excluded);
  b.push(testing::make_packet(frame(kHostC, kHostB), 2));
  b.exclude(1);
  e->process_batch(b);
  EXPECT_EQ(b.result(0).port(), 0);
  EXPECT_EQ(out_port(b.at(0)), 1);
  EXPECT_EQ(b.result(2).port(), L2Switch::kFloodOutput);
  EXPECT_EQ(testing::counter(*e, "entries"), 2u);
  rte_pktmbuf_free(excluded);
  testing::free_batch(b);
}

TEST(ElementsL2Switch, FullTableCountsLearnFailures) {
  constexpr uint32_t kCapacity = 8;
  constexpr uint32_t kHosts = 12;
  auto e = testing::make_or_fail("L2Switch", {"CAPACITY " + std::to_string(kCapacity)}, kPorts);
  ASSERT_NE(e, nullptr);
  std::vector<Frame> frames;
  for (uint32_t h = 0; h < kHosts; ++h) frames.push_back(frame(kBroadcast, host(h)));
  send(*e, frames, 1);
  EXPECT_EQ(testing::counter(*e, "entries"), kCapacity);
  EXPECT_EQ(testing::counter(*e, "learn_failures"), kHosts - kCapacity);
}

TEST(ElementsL2Switch, AgingKeepsRecentAddresses) {
  auto e = testing::make_or_fail("L2Switch", {"AGING_S 300"}, kPorts);
  ASSERT_NE(e, nullptr);
  send_one(*e, frame(kHostB, kHostA), 1);
  const Outcome o = send_one(*e, frame(kHostA, kHostB), 2);
  EXPECT_EQ(o.verdict.port(), 0);
  EXPECT_EQ(o.out_port, 1);
}

std::string write_static(std::string_view stem, const std::string& text) {
  const std::string path = testing::temp_path(stem);
  std::ofstream(path) << text;
  return path;
}

TEST(ElementsL2Switch, StaticEntriesForwardWithoutLearningAndOverrideIt) {
  const std::string file =
      write_static("l2-static.txt", "# static hosts\n02:00:00:00:00:0a 3\n02:00:00:00:00:0c 2\n");
  auto e = testing::make_or_fail("L2Switch", {"STATIC " + file, "AGING_S 1"}, kPorts);
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(testing::counter(*e, "static_entries"), 2u);
  // A is static on port 3: known before it ever sent a frame.
  Outcome o = send_one(*e, frame(kHostA, kHostB), 1);
  EXPECT_EQ(o.verdict.port(), 0);
  EXPECT_EQ(o.out_port, 3);
  // A sends from port 1: learned there, but the static entry wins.
  send_one(*e, frame(kHostB, kHostA), 1);
  o = send_one(*e, frame(kHostA, kHostB), 2);
  EXPECT_EQ(o.out_port, 3);
  // A static destination on the input port is filtered like a learned one.
  o = send_one(*e, frame(kHostC, kHostB), 2);
  EXPECT_EQ(testing::drop_reason(*e, o.verdict), "same-port");

  // Replaced while running: C moves to port 1, A is no longer static (learned on port 1 now).
  std::ofstream(file) << "02:00:00:00:00:0c 1\n";
  TableSlotBase* slot = e->table_slot();
  ASSERT_NE(slot, nullptr);
  Result<std::shared_ptr<const void>> old = slot->replace(file);
  ASSERT_TRUE(old) << old.error();
  EXPECT_EQ(testing::counter(*e, "static_entries"), 1u);
  EXPECT_EQ(send_one(*e, frame(kHostC, kHostB), 2).out_port, 1);
  EXPECT_EQ(send_one(*e, frame(kHostA, kHostB), 2).out_port, 1);
}

TEST(ElementsL2Switch, StaticEntryFileErrorsSayWhere) {
  const std::string bad = write_static("l2-static-bad.txt", "02:00:00:00:00:0a 1\nnot-a-mac 2\n");
  EXPECT_NE(testing::config_error("L2Switch", {"STATIC " + bad}).find(bad + ":2: expected"),
            std::string::npos);
  const std::string dup =
      write_static("l2-static-dup.txt", "02:00:00:00:00:0a 1\n02:00:00:00:00:0A 2\n");
  EXPECT_NE(testing::config_error("L2Switch", {"STATIC " + dup})
                .find(dup + ":2: duplicate address 02:00:00:00:00:0A (first on line 1)"),
            std::string::npos);
  const std::string port = write_static("l2-static-port.txt", "02:00:00:00:00:0a 4\n");
  EXPECT_NE(testing::config_error("L2Switch", {"STATIC " + port}, kPorts)
                .find(port + ":1: port 4 out of range 0..3"),
            std::string::npos);
}

TEST(ElementsL2Switch, ConfigurationErrors) {
  EXPECT_EQ(testing::config_error("L2Switch", {"CAPACITY 1000", "AGING_S 10"}), "(no error)");
  EXPECT_NE(testing::config_error("L2Switch", {"CAPACITY 0"}).find("CAPACITY"), std::string::npos);
  EXPECT_NE(testing::config_error("L2Switch", {"CAPACITY x"}).find("CAPACITY"), std::string::npos);
  EXPECT_NE(testing::config_error("L2Switch", {"extra"}), "(no error)");
}

}  // namespace
}  // namespace fulcrum
