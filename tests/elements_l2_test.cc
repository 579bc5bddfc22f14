// Golden tests for the Ethernet elements: EtherMirror, L2Forward, EtherRewrite.
#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include <algorithm>
#include <array>
#include <memory>
#include <string>
#include <vector>

#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;
using Mac = std::array<uint8_t, RTE_ETHER_ADDR_LEN>;

constexpr uint32_t kMaxRobustLen = 40;
constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr int kPorts = 4;

constexpr Mac kSrc0 = {0x02, 0, 0, 0, 0, 0x01}, kDst0 = {0x02, 0, 0, 0, 0x01, 0x01};
constexpr Mac kSrc1 = {0x02, 0, 0, 0, 0, 0x02}, kDst1 = {0x02, 0, 0, 0, 0x01, 0x02};
constexpr Mac kSrcDefault = {0x02, 0, 0, 0, 0, 0x09}, kDstDefault = {0x02, 0, 0, 0, 0x01, 0x09};
const std::string kEntry0 = "0 02:00:00:00:00:01 02:00:00:00:01:01";
const std::string kEntry1 = "1 02:00:00:00:00:02 02:00:00:00:01:02";
const std::string kDefault = "DEFAULT 02:00:00:00:00:09 02:00:00:00:01:09";

Frame udp_frame() {
  return testing::ipv4_udp_frame(RTE_IPV4(10, 0, 0, 1), RTE_IPV4(10, 0, 0, 2));
}

// A frame with recognisable, distinct addresses: dst 0a:0b:0c:0d:0e:0f, src 1a:..:1f.
Frame marked_frame(uint32_t len = 64) {
  constexpr uint8_t kDstMark = 0x0a, kSrcMark = 0x1a;
  Frame f = testing::ether_frame(kEtherTypeArp, len);
  for (int i = 0; i < RTE_ETHER_ADDR_LEN; ++i) {
    f[i] = static_cast<uint8_t>(kDstMark + i);
    f[RTE_ETHER_ADDR_LEN + i] = static_cast<uint8_t>(kSrcMark + i);
  }
  return f;
}

Frame swapped(Frame f) {
  std::swap_ranges(f.begin(), f.begin() + RTE_ETHER_ADDR_LEN, f.begin() + RTE_ETHER_ADDR_LEN);
  return f;
}

Frame with_macs(Frame f, const Mac& dst, const Mac& src) {
  std::copy(dst.begin(), dst.end(), f.begin());
  std::copy(src.begin(), src.end(), f.begin() + RTE_ETHER_ADDR_LEN);
  return f;
}

Frame prefix(const Frame& f, uint32_t n) {
  return Frame(f.begin(), f.begin() + n);
}

std::vector<Frame> prefixes(const Frame& f) {
  return testing::prefixes(f, kMaxRobustLen);
}

std::unique_ptr<Element> make(const std::string& cls, const std::vector<std::string>& args = {},
                              int ports = kPorts) {
  return testing::make_or_fail(cls, args, ports);
}

// Every prefix 0..kMaxRobustLen of `f`: "truncated" below 14 bytes, else out 0 with the bytes of
// the same prefix of `expected`.
void expect_truncated_below_header(Element& e, const Frame& f, const Frame& expected) {
  PacketBatch b;
  auto v = testing::run_batch(e, b, prefixes(f));
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n) {
    if (n < RTE_ETHER_HDR_LEN) {
      EXPECT_EQ(testing::drop_reason(e, v[n]), "truncated") << n;
    } else {
      EXPECT_EQ(v[n].port(), 0) << n;
      EXPECT_EQ(testing::packet_bytes(b.at(n)), prefix(expected, n)) << n;
    }
  }
  testing::free_batch(b);
}

TEST(ElementsL2, EtherMirrorSwapsAddresses) {
  auto e = make("EtherMirror");
  ASSERT_NE(e, nullptr);
  PacketBatch b;
  const std::vector<Frame> frames = {marked_frame(), udp_frame()};
  auto v = testing::run_batch(*e, b, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(v[i].port(), 0);
    EXPECT_EQ(testing::packet_bytes(b.at(i)), swapped(frames[i]));
  }
  testing::free_batch(b);
  expect_truncated_below_header(*e, marked_frame(), swapped(marked_frame()));
  EXPECT_EQ(testing::config_error("EtherMirror", {"x"}),
            "test.click:1:1: test :: EtherMirror: unexpected argument 'x'");
}

TEST(ElementsL2, L2ForwardEcho) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{}, std::vector<std::string>{"METHOD echo"}}) {
    auto e = make("L2Forward", args);
    ASSERT_NE(e, nullptr);
    PacketBatch b;
    constexpr uint16_t kInPort = 2;
    auto v = testing::run_batch(*e, b, {marked_frame()}, kInPort);
    EXPECT_EQ(v[0].port(), 0);
    EXPECT_EQ(testing::packet_bytes(b.at(0)), swapped(marked_frame()));
    EXPECT_EQ(out_port(b.at(0)), kNoPort);
    EXPECT_EQ(effective_out_port(b.at(0)), kInPort);
    testing::free_batch(b);
    expect_truncated_below_header(*e, marked_frame(), swapped(marked_frame()));
  }
}

std::vector<uint16_t> out_ports(Element& e, size_t n) {
  PacketBatch b;
  auto v = testing::run_batch(e, b, std::vector<Frame>(n, marked_frame()));
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(v[i].port(), 0);
    EXPECT_EQ(testing::packet_bytes(b.at(i)), swapped(marked_frame()));
    ports.push_back(out_port(b.at(i)));
  }
  testing::free_batch(b);
  return ports;
}

TEST(ElementsL2, L2ForwardRoundRobinAndFixedPort) {
  constexpr int kThreePorts = 3;
  auto rr = make("L2Forward", {"METHOD roundrobin"}, kThreePorts);
  auto other = make("L2Forward", {"METHOD roundrobin"}, kThreePorts);
  auto fixed = make("L2Forward", {"PORT 2"});
  ASSERT_NE(rr, nullptr);
  ASSERT_NE(other, nullptr);
  ASSERT_NE(fixed, nullptr);
  EXPECT_EQ(out_ports(*rr, 7), (std::vector<uint16_t>{0, 1, 2, 0, 1, 2, 0}));
  EXPECT_EQ(out_ports(*rr, 2), (std::vector<uint16_t>{1, 2}));     // carries on across batches
  EXPECT_EQ(out_ports(*other, 2), (std::vector<uint16_t>{0, 1}));  // per instance
  EXPECT_EQ(out_ports(*fixed, 3), (std::vector<uint16_t>{2, 2, 2}));
  expect_truncated_below_header(*rr, marked_frame(), swapped(marked_frame()));
}

TEST(ElementsL2, L2ForwardConfigErrors) {
  const std::string prefix = "test.click:1:1: test :: L2Forward: ";
  EXPECT_EQ(testing::config_error("L2Forward", {"PORT 4"}, kPorts),
            prefix + "PORT 4 is not a port (4 ports)");
  EXPECT_EQ(testing::config_error("L2Forward", {"PORT 3"}, kPorts), "(no error)");
  EXPECT_EQ(testing::config_error("L2Forward", {"PORT x"}),
            prefix + "PORT: expected port number, got 'x'");
  EXPECT_EQ(testing::config_error("L2Forward", {"METHOD flood"}),
            prefix + "METHOD: expected echo or roundrobin, got 'flood'");
  EXPECT_EQ(testing::config_error("L2Forward", {"METHOD roundrobin", "PORT 1"}),
            prefix + "METHOD and PORT exclude each other");
  // Without a port count (a pipeline checked on its own), ports are not checked.
  EXPECT_EQ(testing::config_error("L2Forward", {"METHOD roundrobin"}, 0), "(no error)");
  EXPECT_EQ(testing::config_error("L2Forward", {"PORT 9"}, 0), "(no error)");
}

TEST(ElementsL2, EtherRewriteSetsAddressesPerPort) {
  auto e = make("EtherRewrite", {kEntry0, kEntry1});
  ASSERT_NE(e, nullptr);
  const Frame f = udp_frame();
  PacketBatch b;
  auto v = testing::run_batch(*e, b, {f}, 0);
  EXPECT_EQ(v[0].port(), 0);
  EXPECT_EQ(testing::packet_bytes(b.at(0)), with_macs(f, kDst0, kSrc0));
  testing::free_batch(b);
  v = testing::run_batch(*e, b, {f}, 1);
  EXPECT_EQ(testing::packet_bytes(b.at(0)), with_macs(f, kDst1, kSrc1));
  testing::free_batch(b);
  for (uint16_t port : {uint16_t{3}, kNoPort}) {
    v = testing::run_batch(*e, b, {f}, port);
    EXPECT_EQ(testing::drop_reason(*e, v[0]), "no-mac-for-port") << port;
  }

  // out_port, when a routing element set it, decides over in_port.
  b.clear();
  for (uint16_t out : {uint16_t{1}, uint16_t{0}, uint16_t{3}}) {
    Packet* p = testing::make_packet(f, 0);
    set_out_port(p, out);
    b.push(p);
  }
  e->process_batch(b);
  EXPECT_EQ(testing::packet_bytes(b.at(0)), with_macs(f, kDst1, kSrc1));
  EXPECT_EQ(testing::packet_bytes(b.at(1)), with_macs(f, kDst0, kSrc0));
  EXPECT_EQ(testing::drop_reason(*e, b.result(2)), "no-mac-for-port");
  testing::free_batch(b);

  expect_truncated_below_header(*e, f, with_macs(f, kDst0, kSrc0));
}

TEST(ElementsL2, EtherRewriteDefault) {
  auto with_default = make("EtherRewrite", {kEntry0, kDefault});
  auto only_default = make("EtherRewrite", {kDefault});
  ASSERT_NE(with_default, nullptr);
  ASSERT_NE(only_default, nullptr);
  const Frame f = udp_frame();
  PacketBatch b;
  for (uint16_t port : {uint16_t{0}, uint16_t{1}, uint16_t{RTE_MAX_ETHPORTS}, kNoPort}) {
    auto v = testing::run_batch(*with_default, b, {f}, port);
    EXPECT_EQ(v[0].port(), 0);
    EXPECT_EQ(testing::packet_bytes(b.at(0)),
              port == 0 ? with_macs(f, kDst0, kSrc0) : with_macs(f, kDstDefault, kSrcDefault));
    testing::free_batch(b);
    v = testing::run_batch(*only_default, b, {f}, port);
    EXPECT_EQ(testing::packet_bytes(b.at(0)), with_macs(f, kDstDefault, kSrcDefault));
    testing::free_batch(b);
  }
}

TEST(ElementsL2, EtherRewriteConfigErrors) {
  const std::string prefix = "test.click:1:1: test :: EtherRewrite: ";
  EXPECT_EQ(testing::config_error("EtherRewrite", {"0 02:00:00:00:00:01"}),
            prefix + "argument 1: expected 'PORT SRC DST', got '0 02:00:00:00:00:01'");
  EXPECT_EQ(
      testing::config_error("EtherRewrite", {kEntry0, "1 02:00:00:00:00:02 02:00:00:01"}),
      prefix + "argument 2: expected Ethernet address (xx:xx:xx:xx:xx:xx), got '02:00:00:01'");
  EXPECT_EQ(testing::config_error("EtherRewrite", {"x 02:00:00:00:00:01 02:00:00:00:01:01"}),
            prefix + "argument 1: expected port number, got 'x'");
  EXPECT_EQ(testing::config_error("EtherRewrite", {"32 02:00:00:00:00:01 02:00:00:00:01:01"}),
            prefix + "argument 1: port 32 out of range (at most 31)");
  EXPECT_EQ(testing::config_error("EtherRewrite", {kEntry0, kEntry0}),
            prefix + "argument 2: port 0 listed twice");
  EXPECT_EQ(testing::config_error("EtherRewrite", {"DEFAULT 02:00:00:00:00:09"}),
            prefix + "DEFAULT: expected 'SRC DST', got '02:00:00:00:00:09'");
  EXPECT_EQ(testing::config_error("EtherRewrite", {}),
            prefix + "expected at least one 'PORT SRC DST' argument or DEFAULT");
}

TEST(ElementsL2, CrossConnectSendsEachPortToItsPeer) {
  auto e = make("CrossConnect", {"0 1", "2 2"});
  ASSERT_NE(e, nullptr);
  const std::vector<std::pair<uint16_t, uint16_t>> cases = {{0, 1}, {1, 0}, {2, 2}};
  for (auto [in, out] : cases) {
    PacketBatch b;
    auto v = testing::run_batch(*e, b, {marked_frame()}, in);
    EXPECT_EQ(v[0].port(), 0);
    EXPECT_EQ(out_port(b.at(0)), out) << in;
    EXPECT_EQ(testing::packet_bytes(b.at(0)), marked_frame());
    testing::free_batch(b);
  }
  PacketBatch b;
  auto v = testing::run_batch(*e, b, {marked_frame(), Frame{}}, 3);
  EXPECT_EQ(testing::drop_reason(*e, v[0]), "unpaired-port");
  EXPECT_EQ(testing::drop_reason(*e, v[1]), "unpaired-port");
}

TEST(ElementsL2, CrossConnectConfigErrors) {
  const std::string prefix = "test.click:1:1: test :: CrossConnect: ";
  EXPECT_EQ(testing::config_error("CrossConnect", {}),
            prefix + "expected at least one port pair \"A B\"");
  EXPECT_EQ(testing::config_error("CrossConnect", {"0"}),
            prefix + "expected a port pair \"A B\", got '0'");
  EXPECT_EQ(testing::config_error("CrossConnect", {"0 1 2"}),
            prefix + "expected a port pair \"A B\", got '0 1 2'");
  EXPECT_EQ(testing::config_error("CrossConnect", {"0 x"}),
            prefix + "expected a port pair \"A B\", got '0 x'");
  EXPECT_EQ(testing::config_error("CrossConnect", {"0 1", "1 2"}),
            prefix + "port pair '1 2': a port may be in one pair only");
  EXPECT_EQ(testing::config_error("CrossConnect", {"0 40"}),
            prefix + "port pair '0 40': ports must be below 32");
  EXPECT_EQ(testing::config_error("CrossConnect", {"0 4"}, kPorts),
            prefix + "port 4 is not a port (4 ports)");
  EXPECT_EQ(testing::config_error("CrossConnect", {"0 3"}, kPorts), "(no error)");
}

}  // namespace
}  // namespace fulcrum
