// Golden tests for the IPv6 elements: CheckIP6Header, DecIP6HLim, IP6Lookup.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "core/registry.hh"
#include "elements/ip6/check_ip6_header.hh"
#include "elements/ip6/dec_ip6_hlim.hh"
#include "elements/ip6/ip6_lookup.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;

constexpr uint32_t kMinFrame = RTE_ETHER_HDR_LEN + sizeof(rte_ipv6_hdr);  // 54
constexpr uint32_t kUdpFrame = kMinFrame + sizeof(rte_udp_hdr);           // 62
constexpr uint32_t kMaxRobustLen = 70;
constexpr uint8_t kHopLimit = 64;
constexpr uint16_t kEtherTypeIpv6 = 0x86DD;
constexpr uint16_t kEtherTypeIpv4 = 0x0800;
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint8_t kProtoUdp = 17;
constexpr uint32_t kVersion6Word = 0x60000000;
constexpr int kPorts = 8;

rte_ipv6_hdr* ip6(Frame& f) {
  return reinterpret_cast<rte_ipv6_hdr*>(f.data() + RTE_ETHER_HDR_LEN);
}

// An Ethernet + IPv6 + UDP frame of `frame_len` bytes (>= 62), payload length filling the frame.
Frame ipv6_udp_frame(const char* src, const char* dst, uint8_t hlim = kHopLimit,
                     uint32_t frame_len = 78) {
  Frame f = testing::ether_frame(kEtherTypeIpv6, frame_len);
  rte_ipv6_hdr* h = ip6(f);
  h->vtc_flow = rte_cpu_to_be_32(kVersion6Word);
  h->payload_len = rte_cpu_to_be_16(static_cast<uint16_t>(frame_len - kMinFrame));
  h->proto = kProtoUdp;
  h->hop_limits = hlim;
  EXPECT_EQ(inet_pton(AF_INET6, src, h->src_addr), 1);
  EXPECT_EQ(inet_pton(AF_INET6, dst, h->dst_addr), 1);
  uint8_t* udp = f.data() + kMinFrame;
  udp[0] = 0x13, udp[1] = 0x88, udp[2] = 0x13, udp[3] = 0x89;
  const uint16_t ulen = static_cast<uint16_t>(frame_len - kMinFrame);
  udp[4] = static_cast<uint8_t>(ulen >> 8), udp[5] = static_cast<uint8_t>(ulen);
  return f;
}

Frame to(const char* dst) {
  return ipv6_udp_frame("2001:db8:ffff::1", dst);
}

std::unique_ptr<Element> make(const std::string& cls, const std::vector<std::string>& args = {}) {
  return testing::make_or_fail(cls, args);
}

struct Outcome {
  Verdict verdict;
  Frame bytes;  // the frame as it left; empty when dropped
};

// Runs any number of frames through `e`, kMaxBatch at a time.
std::vector<Outcome> run(Element& e, const std::vector<Frame>& frames, uint16_t in_port = 0) {
  std::vector<Outcome> out;
  PacketBatch b;
  for (size_t begin = 0; begin < frames.size(); begin += kMaxBatch) {
    const size_t end = std::min(frames.size(), begin + kMaxBatch);
    auto v = testing::run_batch(e, b, {frames.begin() + begin, frames.begin() + end}, in_port);
    for (uint32_t i = 0; i < v.size(); ++i)
      out.push_back({v[i], v[i].is_drop() ? Frame{} : testing::packet_bytes(b.at(i))});
    testing::free_batch(b);
  }
  return out;
}

// The reason each frame was dropped, or "out N".
std::vector<std::string> results(Element& e, const std::vector<Frame>& frames) {
  std::vector<std::string> out;
  for (const Outcome& o : run(e, frames))
    out.push_back(o.verdict.is_drop() ? std::string(testing::drop_reason(e, o.verdict))
                                      : "out " + std::to_string(o.verdict.port()));
  return out;
}

// --- CheckIP6Header ----------------------------------------------------------------------------

TEST(ElementsIp6, ManualsAndReasons) {
  for (const char* cls : {"CheckIP6Header", "DecIP6HLim", "IP6Lookup"})
    EXPECT_EQ(element_doc(cls).find(std::string(cls) + " — "), 0u) << cls;
  EXPECT_EQ(CheckIP6Header::kTraits.drop_reasons.size(), 5u);
  EXPECT_EQ(DecIP6HLim::kTraits.drop_reasons[DecIP6HLim::kDropReasons["hlim-expired"]],
            "hlim-expired");
  EXPECT_EQ(IP6Lookup::kTraits.drop_reasons[IP6Lookup::kDropReasons["not-ipv6"]], "not-ipv6");
}

TEST(ElementsIp6, CheckIP6HeaderPassesValidFramesUnchanged) {
  auto e = make("CheckIP6Header");
  ASSERT_NE(e, nullptr);
  Frame padded = to("2001:db8::1");  // payload length 8 in a 78-byte frame: Ethernet padding
  ip6(padded)->payload_len = rte_cpu_to_be_16(8);
  Frame empty_payload = to("2001:db8::1");
  ip6(empty_payload)->payload_len = 0;
  Frame flow = to("2001:db8::1");
  ip6(flow)->vtc_flow = rte_cpu_to_be_32(0x6ABFFFFF);  // traffic class and flow label set
  const std::vector<Frame> frames = {
      to("2001:db8::1"),
      ipv6_udp_frame("2001:db8::1", "ff02::1"),     // multicast destinations are fine
      ipv6_udp_frame("::1", "2001:db8::1"),         // loopback source: not checked
      ipv6_udp_frame("fe80::1", "2001:db8::1", 0),  // hop limit is DecIP6HLim's business
      ipv6_udp_frame("2001:db8::1", "2001:db8::2", kHopLimit, 1514),
      ipv6_udp_frame("2001:db8::1", "2001:db8::2", kHopLimit, kUdpFrame),
      padded,
      empty_payload,
      flow,
  };
  auto out = run(*e, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(out[i].verdict.port(), 0) << i << " " << testing::drop_reason(*e, out[i].verdict);
    EXPECT_EQ(out[i].bytes, frames[i]) << i;
  }
}

TEST(ElementsIp6, CheckIP6HeaderTruncatedFrames) {
  auto e = make("CheckIP6Header");
  ASSERT_NE(e, nullptr);
  auto r = results(*e, testing::prefixes(to("2001:db8::1"), kMaxRobustLen));
  ASSERT_EQ(r.size(), kMaxRobustLen + 1);
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n)
    EXPECT_EQ(r[n], n < kMinFrame ? "truncated" : "bad-length") << n;
  // A header alone with payload length 0 passes at exactly 54 bytes.
  Frame bare = to("2001:db8::1");
  bare.resize(kMinFrame);
  ip6(bare)->payload_len = 0;
  EXPECT_EQ(results(*e, {bare}), (std::vector<std::string>{"out 0"}));
}

TEST(ElementsIp6, CheckIP6HeaderBadHeaders) {
  auto e = make("CheckIP6Header");
  ASSERT_NE(e, nullptr);
  Frame v4 = to("2001:db8::1");
  v4[12] = 0x08, v4[13] = 0x00;
  Frame vlan = to("2001:db8::1");
  vlan[12] = 0x81, vlan[13] = 0x00;
  Frame version4 = to("2001:db8::1");
  ip6(version4)->vtc_flow = rte_cpu_to_be_32(0x40000000);
  Frame version0 = to("2001:db8::1");
  ip6(version0)->vtc_flow = 0;
  Frame version7 = to("2001:db8::1");
  ip6(version7)->vtc_flow = rte_cpu_to_be_32(0x7FFFFFFF);
  Frame long_payload = to("2001:db8::1");
  ip6(long_payload)->payload_len = rte_cpu_to_be_16(78 - kMinFrame + 1);
  Frame max_payload = to("2001:db8::1");
  ip6(max_payload)->payload_len = rte_cpu_to_be_16(0xFFFF);
  const std::vector<Frame> frames = {
      v4,
      vlan,
      testing::ether_frame(kEtherTypeIpv4, 64),
      testing::ether_frame(kEtherTypeArp, 42),  // short, but not IPv6 first
      testing::ether_frame(kEtherTypeArp, 14),
      testing::ipv4_udp_frame(1, 2, 64, 64),
      version4,
      version0,
      version7,
      long_payload,
      max_payload,
      ipv6_udp_frame("::", "2001:db8::1"),
      ipv6_udp_frame("ff02::1", "2001:db8::1"),
      ipv6_udp_frame("ff00::", "2001:db8::1"),
      ipv6_udp_frame("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "2001:db8::1"),
      ipv6_udp_frame("fe80::", "2001:db8::1"),
      ipv6_udp_frame("::1", "2001:db8::1"),
      ipv6_udp_frame("feff::", "2001:db8::1"),
  };
  EXPECT_EQ(results(*e, frames),
            (std::vector<std::string>{"not-ipv6", "not-ipv6", "not-ipv6", "not-ipv6", "not-ipv6",
                                      "not-ipv6", "bad-version", "bad-version", "bad-version",
                                      "bad-length", "bad-length", "bad-source", "bad-source",
                                      "bad-source", "bad-source", "out 0", "out 0", "out 0"}));
}

TEST(ElementsIp6, CheckIP6HeaderRejectsArguments) {
  EXPECT_EQ(testing::config_error("CheckIP6Header", {"CHECKSUM true"}),
            "test.click:1:1: test :: CheckIP6Header: unknown keyword 'CHECKSUM'; CheckIP6Header "
            "takes no keywords");
  EXPECT_EQ(testing::config_error("DecIP6HLim", {"x"}),
            "test.click:1:1: test :: DecIP6HLim: unexpected argument 'x'");
}

// --- DecIP6HLim --------------------------------------------------------------------------------

TEST(ElementsIp6, DecIP6HLimDecrementsOnlyTheHopLimit) {
  auto e = make("DecIP6HLim");
  ASSERT_NE(e, nullptr);
  std::vector<Frame> frames;
  for (int h : {2, 3, 64, 128, 255})
    frames.push_back(ipv6_udp_frame("2001:db8::1", "2001:db8::2", static_cast<uint8_t>(h)));
  auto out = run(*e, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_EQ(out[i].verdict.port(), 0) << i;
    Frame expect = frames[i];
    --ip6(expect)->hop_limits;
    EXPECT_EQ(out[i].bytes, expect) << i;
  }
}

TEST(ElementsIp6, DecIP6HLimExpired) {
  auto to_icmp = make("DecIP6HLim");
  std::string error;
  auto dropping = testing::make_element_connected("DecIP6HLim", {}, 0b1, &error);
  ASSERT_NE(to_icmp, nullptr);
  ASSERT_NE(dropping, nullptr) << error;
  const std::vector<Frame> frames = {ipv6_udp_frame("2001:db8::1", "2001:db8::2", 1),
                                     ipv6_udp_frame("2001:db8::1", "2001:db8::2", 0)};
  auto out = run(*to_icmp, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(out[i].verdict.port(), DecIP6HLim::kExpiredOutput);
    EXPECT_EQ(out[i].bytes, frames[i]);
  }
  EXPECT_EQ(results(*dropping, frames), (std::vector<std::string>{"hlim-expired", "hlim-expired"}));
}

TEST(ElementsIp6, DecIP6HLimTruncatedFrames) {
  auto e = make("DecIP6HLim");
  ASSERT_NE(e, nullptr);
  auto r = results(*e, testing::prefixes(to("2001:db8::1"), kMaxRobustLen));
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n)
    EXPECT_EQ(r[n], n < kMinFrame ? "truncated" : "out 0") << n;
}

// --- IP6Lookup ---------------------------------------------------------------------------------

class IP6LookupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (std::filesystem::temp_directory_path() /
             ("fulcrum-ip6lookup-" + std::to_string(getpid()) + "-" +
              ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".txt"))
                .string();
    std::ofstream out(path_);
    out << "# test routes\n"
           "2001:db8::/32          1\n"
           "2001:db8:1::/48        2\n"
           "2001:db8:1:2::/64      3   # nested\n"
           "2001:db8:1:2::1/128    0\n"
           "2001:db8:7::/48        7   # the last of 8 ports; no such port with 4\n";
  }
  void TearDown() override { std::remove(path_.c_str()); }

  std::string path_;
};

TEST_F(IP6LookupTest, TruncatedFrames) {
  auto e = testing::make_element("IP6Lookup", {path_}, nullptr, kPorts);
  ASSERT_NE(e, nullptr);
  auto r = results(*e, testing::prefixes(to("2001:db8::1"), kMaxRobustLen));
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n)
    EXPECT_EQ(r[n], n < kMinFrame ? "not-ipv6" : "out 0") << n;
}

// Each algorithm on the same file builds (and shares among workers) a table of its own; the
// default is the trie. What both algorithms must do alike is route_lookup_element_test.cc.
TEST_F(IP6LookupTest, EachAlgorithmHasATableOfItsOwn) {
  auto a = testing::make_element("IP6Lookup", {path_}, nullptr, kPorts);
  auto c = testing::make_element("IP6Lookup", {path_, "ALGORITHM bsearch"}, nullptr, kPorts);
  auto d = testing::make_element("IP6Lookup", {path_, "ALGORITHM bsearch"}, nullptr, kPorts);
  ASSERT_NE(a, nullptr);
  ASSERT_NE(c, nullptr);
  ASSERT_NE(d, nullptr);
  const auto& la = dynamic_cast<const IP6Lookup&>(*a);
  const auto& lc = dynamic_cast<const IP6Lookup&>(*c);
  EXPECT_NE(la.table().trie(), nullptr);
  EXPECT_EQ(la.table().bsearch(), nullptr);
  EXPECT_NE(&lc.table(), &la.table());
  EXPECT_EQ(&lc.table(), &dynamic_cast<const IP6Lookup&>(*d).table());
  EXPECT_NE(lc.table().bsearch(), nullptr);
  EXPECT_EQ(lc.table().trie(), nullptr);
  EXPECT_EQ(lc.table().size(), 5u);
}

TEST_F(IP6LookupTest, AlgorithmErrors) {
  std::string err;
  EXPECT_EQ(testing::make_element("IP6Lookup", {path_, "ALGORITHM dir24"}, &err), nullptr);
  EXPECT_EQ(err,
            "test.click:1:1: test :: IP6Lookup: ALGORITHM: expected trie or bsearch, got 'dir24'");
  EXPECT_EQ(testing::make_element("IP6Lookup", {path_, "STRIDE 8"}, &err), nullptr);
  EXPECT_EQ(err,
            "test.click:1:1: test :: IP6Lookup: unknown keyword 'STRIDE'; IP6Lookup takes "
            "ALGORITHM, PREFETCH");
}

// Random bytes after a valid Ethernet + IPv6 start: no element may crash or read past the frame
// (the ASan build checks the latter); every verdict is a declared output or drop reason.
TEST(ElementsIp6, RandomHeadersAreHandled) {
  auto check = make("CheckIP6Header");
  auto dec = make("DecIP6HLim");
  ASSERT_NE(check, nullptr);
  ASSERT_NE(dec, nullptr);
  std::mt19937 rng(6);
  std::vector<Frame> frames;
  for (int i = 0; i < 2000; ++i) {
    Frame f = to("2001:db8::1");
    f.resize(rng() % (kMaxRobustLen + 1));
    for (size_t b = RTE_ETHER_HDR_LEN; b < f.size(); ++b) f[b] = static_cast<uint8_t>(rng());
    frames.push_back(f);
  }
  for (Element* e : {check.get(), dec.get()})
    for (const std::string& r : results(*e, frames)) EXPECT_FALSE(r.empty());
}

}  // namespace
}  // namespace fulcrum
