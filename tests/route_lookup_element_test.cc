// IPLookup and IP6Lookup (both of its algorithms), one typed suite: each sets out_port from
// its table's longest match, drops with the declared reasons, refuses a route to a port the run
// lacks, leaves excluded slots alone, shares one table among workers and names the file and
// line of a bad route. The address-family specifics are in each Family.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/registry.hh"
#include "elements/ip/ip_lookup.hh"
#include "elements/ip6/ip6_lookup.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;
constexpr int kPorts = 8;
constexpr uint16_t kEtherTypeVlan = 0x8100;

struct Ipv4 {
  using Element = IPLookup;
  static constexpr const char* kName = "Ipv4";
  static constexpr const char* kAlgorithm = "";
  static constexpr uint16_t kOtherEtherType = 0x86DD;
  // Line 6 routes to port 7: a load error with 4 ports.
  static constexpr const char* kRoutes =
      "# test routes\n"
      "10.0.0.0/8        1\n"
      "10.1.0.0/16       2\n"
      "10.1.2.128/25     3   # more-specific in a TBLlong segment\n"
      "192.168.1.1/32    0\n"
      "172.16.0.0/12     7   # the last of 8 ports; no such port with 4\n";
  static constexpr std::pair<const char*, int> kCases[] = {
      {"10.0.0.1", 1},   {"10.255.255.255", 1}, {"10.1.0.0", 2},   {"10.1.2.127", 2},
      {"10.1.2.128", 3}, {"10.1.2.255", 3},     {"10.1.3.0", 2},   {"192.168.1.1", 0},
      {"11.0.0.1", -1},  {"192.168.1.2", -1},   {"172.16.0.1", 7}, {"172.31.255.255", 7}};
  static constexpr const char* kPort3 = "10.1.2.200";
  static constexpr const char* kUnrouted = "11.0.0.0";
  static constexpr const char* kPort7 = "172.20.1.1";
  static constexpr const char* kBadRoutes = "10.0.0.0/8 1\n10.0.0.0/33 2\n";
  static constexpr const char* kBadRouteError = ":2: prefix length 33 out of range 0..32";

  static Frame to(const char* dst) {
    in_addr a{};
    EXPECT_EQ(inet_pton(AF_INET, dst, &a), 1) << dst;
    return testing::ipv4_udp_frame(0x01010101, ntohl(a.s_addr));
  }
};

template <bool kBsearch>
struct Ipv6 {
  using Element = IP6Lookup;
  static constexpr const char* kName = kBsearch ? "Ipv6Bsearch" : "Ipv6Trie";
  static constexpr const char* kAlgorithm = kBsearch ? "ALGORITHM bsearch" : "ALGORITHM trie";
  static constexpr uint16_t kOtherEtherType = 0x0800;
  static constexpr const char* kRoutes =
      "# test routes\n"
      "2001:db8::/32          1\n"
      "2001:db8:1::/48        2\n"
      "2001:db8:1:2::/64      3   # nested\n"
      "2001:db8:1:2::1/128    0\n"
      "2001:db8:7::/48        7   # the last of 8 ports; no such port with 4\n";
  static constexpr std::pair<const char*, int> kCases[] = {
      {"2001:db8::1", 1},     {"2001:db8:ffff::", 1},
      {"2001:db8:1::", 2},    {"2001:db8:1:1::1", 2},
      {"2001:db8:1:2::", 3},  {"2001:db8:1:2::2", 3},
      {"2001:db8:1:2::1", 0}, {"2001:db8:1:3::", 2},
      {"2001:db9::1", -1},    {"::", -1},
      {"2001:db8:7::1", 7},   {"2001:db8:7:ffff::", 7},
      {"2001:db8:9::9", 1}};
  static constexpr const char* kPort3 = "2001:db8:1:2::9";
  static constexpr const char* kUnrouted = "3000::";
  static constexpr const char* kPort7 = "2001:db8:7::5";
  static constexpr const char* kBadRoutes = "2001:db8::/32 1\n2001:db8::1/64 2\n";
  static constexpr const char* kBadRouteError = ":2: host bits set in 2001:db8::1/64";

  static Frame to(const char* dst) {
    constexpr uint32_t kFrameLen = 78;
    constexpr uint32_t kVersion6Word = 0x60000000;
    constexpr uint8_t kProtoUdp = 17;
    Frame f = testing::ether_frame(0x86DD, kFrameLen);
    auto* h = reinterpret_cast<rte_ipv6_hdr*>(f.data() + RTE_ETHER_HDR_LEN);
    h->vtc_flow = rte_cpu_to_be_32(kVersion6Word);
    h->payload_len = rte_cpu_to_be_16(kFrameLen - RTE_ETHER_HDR_LEN - sizeof(rte_ipv6_hdr));
    h->proto = kProtoUdp;
    h->hop_limits = 64;
    EXPECT_EQ(inet_pton(AF_INET6, "2001:db8:ffff::1", h->src_addr), 1);
    EXPECT_EQ(inet_pton(AF_INET6, dst, h->dst_addr), 1) << dst;
    return f;
  }
};

template <class Family>
class RouteLookupElement : public ::testing::Test {
 protected:
  using E = typename Family::Element;
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("fulcrum-route-lookup-" + std::to_string(getpid()) + "-" + Family::kName + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt"))
                .string();
    std::ofstream(path_) << Family::kRoutes;
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::vector<std::string> args(const std::string& path) const {
    if (std::string_view(Family::kAlgorithm).empty()) return {path};
    return {path, Family::kAlgorithm};
  }
  std::unique_ptr<Element> make(int ports = kPorts, std::string* err = nullptr) const {
    return testing::make_element(std::string(E::kTraits.class_name), args(path_), err, ports);
  }
  std::string error_prefix() const {
    return "test.click:1:1: test :: " + std::string(E::kTraits.class_name) + ": ";
  }

  std::string path_;
};

using Families = ::testing::Types<Ipv4, Ipv6<false>, Ipv6<true>>;
struct FamilyName {
  template <class T>
  static std::string GetName(int) {
    return T::kName;
  }
};
TYPED_TEST_SUITE(RouteLookupElement, Families, FamilyName);

TYPED_TEST(RouteLookupElement, DeclaresItsDropReasonsAndManual) {
  using E = typename TestFixture::E;
  const std::string_view cls = E::kTraits.class_name;
  ASSERT_EQ(E::kTraits.drop_reasons.size(), 3u);
  EXPECT_EQ(E::kTraits.drop_reasons[0], "no-route");
  EXPECT_EQ(E::kTraits.drop_reasons[1], "no-such-port");
  EXPECT_EQ(E::kTraits.drop_reasons[2], E::kWrongFamilyReason);
  EXPECT_EQ(element_doc(cls).find(std::string(cls) + " — "), 0u);
}

TYPED_TEST(RouteLookupElement, SetsOutPortOrDropsPerRoute) {
  using F = TypeParam;
  std::string err;
  auto e = this->make(kPorts, &err);
  ASSERT_NE(e, nullptr) << err;
  std::vector<Frame> frames;
  for (const auto& [dst, port] : F::kCases) frames.push_back(F::to(dst));
  PacketBatch batch;
  const std::vector<Verdict> v = testing::run_batch(*e, batch, frames, 2);
  ASSERT_EQ(v.size(), frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    const auto& [dst, port] = F::kCases[i];
    Packet* p = batch.at(static_cast<uint32_t>(i));
    if (port < 0) {
      EXPECT_EQ(v[i].v, Verdict::drop(TestFixture::E::kDropReasons["no-route"]).v) << dst;
      continue;
    }
    EXPECT_EQ(v[i].v, Verdict::out(0).v) << dst;
    EXPECT_EQ(out_port(p), port) << dst;
    EXPECT_EQ(in_port(p), 2) << dst;
    EXPECT_EQ(testing::packet_bytes(p), frames[i]) << dst << ": a lookup changes no byte";
  }
  testing::free_batch(batch);
}

// Frames of the other family, too short for the header, or VLAN-tagged: the wrong family.
TYPED_TEST(RouteLookupElement, OtherFramesAreTheWrongFamily) {
  using F = TypeParam;
  using E = typename TestFixture::E;
  auto e = this->make();
  ASSERT_NE(e, nullptr);
  const char* routed = F::kPort3;
  Frame other = F::to(routed), runt = F::to(routed), vlan = F::to(routed);
  other[12] = static_cast<uint8_t>(F::kOtherEtherType >> 8);
  other[13] = static_cast<uint8_t>(F::kOtherEtherType);
  runt.resize(E::kMinFrameLen - 1);
  vlan[12] = static_cast<uint8_t>(kEtherTypeVlan >> 8), vlan[13] = 0;
  Frame shortest = F::to(routed);
  shortest.resize(E::kMinFrameLen);
  PacketBatch batch;
  const std::vector<Verdict> v = testing::run_batch(*e, batch, {other, runt, vlan, shortest});
  const Verdict wrong = Verdict::drop(E::kDropReasons[E::kWrongFamilyReason]);
  EXPECT_EQ(v[0].v, wrong.v);
  EXPECT_EQ(v[1].v, wrong.v);
  EXPECT_EQ(v[2].v, wrong.v);
  EXPECT_EQ(v[3].v, Verdict::out(0).v) << "a header and nothing more is enough";
  testing::free_batch(batch);
}

TYPED_TEST(RouteLookupElement, RouteToAPortTheRunLacksIsALoadError) {
  using F = TypeParam;
  std::string err;
  EXPECT_EQ(this->make(4, &err), nullptr);
  EXPECT_EQ(err, this->error_prefix() + this->path_ + ":6: port 7 out of range 0..3");
  auto e = this->make(8, &err);
  ASSERT_NE(e, nullptr) << err;
  PacketBatch batch;
  const std::vector<Verdict> v = testing::run_batch(*e, batch, {F::to(F::kPort7)});
  EXPECT_EQ(v[0].v, Verdict::out(0).v);
  EXPECT_EQ(out_port(batch.at(0)), 7);
  testing::free_batch(batch);
}

TYPED_TEST(RouteLookupElement, SkipsExcludedSlots) {
  using F = TypeParam;
  auto e = this->make();
  ASSERT_NE(e, nullptr);
  PacketBatch batch;
  std::vector<Packet*> pkts;
  for (int i = 0; i < 100; ++i) {
    pkts.push_back(testing::make_packet(F::to(i % 2 ? F::kPort3 : F::kUnrouted)));
    batch.push(pkts.back());
  }
  batch.exclude(1);
  batch.exclude(64);
  batch.exclude(99);
  batch.set_result(1, Verdict::out(5));
  e->process_batch(batch);
  EXPECT_EQ(batch.result(1).v, Verdict::out(5).v);
  EXPECT_EQ(out_port(pkts[1]), kNoPort);
  for (uint32_t i = 0; i < 100; ++i) {
    if (batch.excluded(i)) continue;
    if (i % 2) {
      EXPECT_EQ(batch.result(i).v, Verdict::out(0).v) << i;
      EXPECT_EQ(out_port(pkts[i]), 3) << i;
    } else {
      EXPECT_EQ(batch.result(i).v, Verdict::drop(TestFixture::E::kDropReasons["no-route"]).v) << i;
    }
  }
  for (Packet* p : pkts) rte_pktmbuf_free(p);
}

TYPED_TEST(RouteLookupElement, WorkersShareOneTable) {
  using E = typename TestFixture::E;
  auto a = this->make();
  auto b = this->make();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  const auto& la = dynamic_cast<const E&>(*a);
  EXPECT_EQ(&la.table(), &dynamic_cast<const E&>(*b).table());
  EXPECT_EQ(la.table().size(), 5u);
}

TYPED_TEST(RouteLookupElement, ConfigErrors) {
  using F = TypeParam;
  const std::string cls(TestFixture::E::kTraits.class_name);
  std::string err;
  EXPECT_EQ(testing::make_element(cls, {}, &err), nullptr);
  EXPECT_EQ(err, this->error_prefix() + "FILE: missing required argument");
  EXPECT_EQ(testing::make_element(cls, this->args("/nonexistent/r.txt"), &err), nullptr);
  EXPECT_EQ(err, this->error_prefix() +
                     "cannot open route file /nonexistent/r.txt: No such file or directory");
  const std::string bad = this->path_ + ".bad";
  std::ofstream(bad) << F::kBadRoutes;
  EXPECT_EQ(testing::make_element(cls, this->args(bad), &err), nullptr);
  EXPECT_EQ(err, this->error_prefix() + bad + F::kBadRouteError);
  std::remove(bad.c_str());
}

}  // namespace
}  // namespace fulcrum
