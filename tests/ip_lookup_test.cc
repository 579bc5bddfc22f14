#include "elements/ip/ip_lookup.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "core/registry.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

constexpr int kPorts = 8;

int reason_index(std::string_view name) {
  const auto& reasons = IPLookup::kTraits.drop_reasons;
  for (size_t i = 0; i < reasons.size(); ++i)
    if (reasons[i] == name) return static_cast<int>(i);
  return -1;
}

class IPLookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("fulcrum-iplookup-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt"))
                .string();
    std::ofstream out(path_);
    out << "# test routes\n"
           "10.0.0.0/8        1\n"
           "10.1.0.0/16       2\n"
           "10.1.2.128/25     3   # more-specific in a TBLlong segment\n"
           "192.168.1.1/32    0\n"
           "172.16.0.0/12     7   # the last of 8 ports; no such port with 4\n";
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string path_;
};

std::vector<uint8_t> to(uint32_t dst) {
  return testing::ipv4_udp_frame(ip(1, 1, 1, 1), dst);
}

TEST_F(IPLookupTest, DropReasonsAreDeclared) {
  EXPECT_EQ(reason_index("no-route"), IPLookup::kDropReasons["no-route"]);
  EXPECT_EQ(reason_index("no-such-port"), IPLookup::kDropReasons["no-such-port"]);
  EXPECT_EQ(reason_index("not-ipv4"), IPLookup::kDropReasons["not-ipv4"]);
  EXPECT_EQ(IPLookup::kTraits.drop_reasons.size(), 3u);
  EXPECT_NE(element_doc("IPLookup").find("IPLookup — "), std::string_view::npos);
}

TEST_F(IPLookupTest, SetsOutPortPerRoute) {
  std::string err;
  auto e = testing::make_element("IPLookup", {path_}, &err, kPorts);
  ASSERT_NE(e, nullptr) << err;
  struct Case {
    uint32_t dst;
    uint16_t port;
  };
  const std::vector<Case> cases = {
      {ip(10, 0, 0, 1), 1},   {ip(10, 255, 255, 255), 1}, {ip(10, 1, 0, 0), 2},
      {ip(10, 1, 2, 127), 2}, {ip(10, 1, 2, 128), 3},     {ip(10, 1, 2, 255), 3},
      {ip(10, 1, 3, 0), 2},   {ip(192, 168, 1, 1), 0},
  };
  std::vector<std::vector<uint8_t>> frames;
  for (const Case& c : cases) frames.push_back(to(c.dst));
  PacketBatch batch;
  std::vector<Verdict> v = testing::run_batch(*e, batch, frames, 2);
  ASSERT_EQ(v.size(), cases.size());
  for (size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(v[i].v, Verdict::out(0).v) << i;
    EXPECT_EQ(anno(batch.at(static_cast<uint32_t>(i))).out_port, cases[i].port) << i;
    EXPECT_EQ(anno(batch.at(static_cast<uint32_t>(i))).in_port, 2) << i;
  }
  testing::free_batch(batch);
}

TEST_F(IPLookupTest, DropsWithReasons) {
  auto e = testing::make_element("IPLookup", {path_}, nullptr, kPorts);
  ASSERT_NE(e, nullptr);
  std::vector<uint8_t> ipv6 = to(ip(10, 0, 0, 1));
  ipv6[12] = 0x86, ipv6[13] = 0xDD;
  std::vector<uint8_t> runt = to(ip(10, 0, 0, 1));
  runt.resize(IPLookup::kMinFrameLen - 1);
  std::vector<uint8_t> vlan = to(ip(10, 0, 0, 1));
  vlan[12] = 0x81, vlan[13] = 0x00;
  const std::vector<std::vector<uint8_t>> frames = {
      to(ip(11, 0, 0, 1)),
      to(ip(192, 168, 1, 2)),
      to(ip(172, 16, 0, 1)),
      to(ip(172, 31, 255, 255)),
      ipv6,
      runt,
      vlan,
      to(ip(10, 9, 9, 9)),
  };
  PacketBatch batch;
  std::vector<Verdict> v = testing::run_batch(*e, batch, frames);
  const std::vector<Verdict> expect = {
      Verdict::drop(reason_index("no-route")),
      Verdict::drop(reason_index("no-route")),
      Verdict::out(0),
      Verdict::out(0),
      Verdict::drop(reason_index("not-ipv4")),
      Verdict::drop(reason_index("not-ipv4")),
      Verdict::drop(reason_index("not-ipv4")),
      Verdict::out(0),
  };
  ASSERT_EQ(v.size(), expect.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i].v, expect[i].v) << i;
  EXPECT_EQ(batch.live(), 3u);
  EXPECT_EQ(anno(batch.at(2)).out_port, 7);
  EXPECT_EQ(anno(batch.at(3)).out_port, 7);
  EXPECT_EQ(anno(batch.at(7)).out_port, 1);
  testing::free_batch(batch);
}

TEST_F(IPLookupTest, RouteToAPortTheRunLacksIsALoadError) {
  std::string err;
  EXPECT_EQ(testing::make_element("IPLookup", {path_}, &err, 4), nullptr);
  EXPECT_EQ(err, "test.click:1:1: test :: IPLookup: " + path_ + ":6: port 7 out of range 0..3");
  auto e = testing::make_element("IPLookup", {path_}, &err, 8);
  ASSERT_NE(e, nullptr) << err;
  PacketBatch batch;
  std::vector<Verdict> v = testing::run_batch(*e, batch, {to(ip(172, 20, 1, 1))});
  EXPECT_EQ(v[0].v, Verdict::out(0).v);
  EXPECT_EQ(anno(batch.at(0)).out_port, 7);
  testing::free_batch(batch);
}

TEST_F(IPLookupTest, SkipsExcludedSlots) {
  auto e = testing::make_element("IPLookup", {path_}, nullptr, kPorts);
  ASSERT_NE(e, nullptr);
  PacketBatch batch;
  std::vector<Packet*> pkts;
  for (int i = 0; i < 100; ++i) {
    pkts.push_back(testing::make_packet(to(i % 2 ? ip(10, 1, 2, 200) : ip(11, 0, 0, 0))));
    batch.push(pkts.back());
  }
  batch.exclude(1);
  batch.exclude(64);
  batch.exclude(99);
  batch.set_result(1, Verdict::out(5));
  e->process_batch(batch);
  EXPECT_EQ(batch.result(1).v, Verdict::out(5).v);
  EXPECT_EQ(anno(pkts[1]).out_port, kNoPort);
  for (uint32_t i = 0; i < 100; ++i) {
    if (batch.excluded(i)) continue;
    if (i % 2) {
      EXPECT_EQ(batch.result(i).v, Verdict::out(0).v) << i;
      EXPECT_EQ(anno(pkts[i]).out_port, 3) << i;
    } else {
      EXPECT_EQ(batch.result(i).v, Verdict::drop(IPLookup::kDropReasons["no-route"]).v) << i;
    }
  }
  for (Packet* p : pkts) rte_pktmbuf_free(p);
}

TEST_F(IPLookupTest, WorkersShareOneTable) {
  auto a = testing::make_element("IPLookup", {path_}, nullptr, kPorts);
  auto b = testing::make_element("IPLookup", {path_}, nullptr, kPorts);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const auto& la = dynamic_cast<const IPLookup&>(*a);
  const auto& lb = dynamic_cast<const IPLookup&>(*b);
  EXPECT_EQ(&la.table(), &lb.table());
  EXPECT_EQ(la.table().size(), 5u);
}

TEST_F(IPLookupTest, ConfigErrors) {
  std::string err;
  EXPECT_EQ(testing::make_element("IPLookup", {}, &err), nullptr);
  EXPECT_EQ(err, "test.click:1:1: test :: IPLookup: FILE: missing required argument");
  EXPECT_EQ(testing::make_element("IPLookup", {"/nonexistent/r.txt"}, &err), nullptr);
  EXPECT_EQ(err,
            "test.click:1:1: test :: IPLookup: cannot open route file /nonexistent/r.txt: No such "
            "file or directory");
  {
    std::ofstream out(path_);
    out << "10.0.0.0/8 1\n10.0.0.0/33 2\n";
  }
  std::string other = path_ + ".bad";
  std::filesystem::rename(path_, other);
  EXPECT_EQ(testing::make_element("IPLookup", {other}, &err), nullptr);
  EXPECT_EQ(err, "test.click:1:1: test :: IPLookup: " + other +
                     ":2: prefix length 33 out of range 0..32");
  std::remove(other.c_str());
}

}  // namespace
}  // namespace fulcrum
