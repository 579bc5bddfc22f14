// core/flow_hash.hh: one flow, one hash, across the headers a flow's packets differ in; flows told
// apart by addresses and ports, behind a VLAN tag and over IPv6 too; the annotation wins.
#include "core/flow_hash.hh"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "tests/ids_test_frames.hh"
#include "tests/testing.hh"

namespace fulcrum {
namespace {

Packet* packet(const std::vector<uint8_t>& frame) {
  Packet* p = testing::make_packet(frame);
  set_anno_flow_hash(p, 0);
  return p;
}

std::vector<uint8_t> udp4(uint32_t src, uint16_t sport, uint16_t id) {
  std::vector<uint8_t> f = testing::ipv4_udp_frame(src, 0x0A000002);
  f[18] = static_cast<uint8_t>(id >> 8), f[19] = static_cast<uint8_t>(id);  // IP id: per packet
  f[34] = static_cast<uint8_t>(sport >> 8), f[35] = static_cast<uint8_t>(sport);
  return f;
}

TEST(FlowHash, AnnotationWinsOverTheHeaders) {
  Packet* p = packet(udp4(0x0A000001, 1000, 1));
  const uint32_t computed = flow_hash(p);
  EXPECT_EQ(computed, header_flow_hash(p));
  set_anno_flow_hash(p, 0xABCD1234);
  EXPECT_EQ(flow_hash(p), 0xABCD1234u);
  EXPECT_EQ(header_flow_hash(p), computed);
}

TEST(FlowHash, Ipv4FlowsByAddressesAndPortsAlsoBehindAVlanTag) {
  const uint32_t a = flow_hash(packet(udp4(0x0A000001, 1000, 1)));
  EXPECT_EQ(flow_hash(packet(udp4(0x0A000001, 1000, 2))), a) << "same flow, another IP id";
  EXPECT_NE(flow_hash(packet(udp4(0x0A000001, 1001, 1))), a) << "another source port";
  EXPECT_NE(flow_hash(packet(udp4(0x0A000003, 1000, 1))), a) << "another source address";
  EXPECT_EQ(flow_hash(packet(testing::vlan_tagged(udp4(0x0A000001, 1000, 3), {0x8100}))), a)
      << "the same flow behind a VLAN tag";
}

TEST(FlowHash, Ipv6FlowsByAddressesAndPorts) {
  testing::Ip6 s{}, d{};
  s[0] = 0x20, s[15] = 1, d[0] = 0x20, d[15] = 2;
  auto frame = [&](const testing::Ip6& src, uint16_t sport) {
    std::vector<uint8_t> udp = {
        static_cast<uint8_t>(sport >> 8), static_cast<uint8_t>(sport), 0, 53, 0, 8, 0, 0};
    return testing::ipv6_frame(src, d, {}, 17, udp);
  };
  const uint32_t a = flow_hash(packet(frame(s, 1000)));
  EXPECT_EQ(flow_hash(packet(frame(s, 1000))), a);
  EXPECT_NE(flow_hash(packet(frame(s, 1001))), a) << "another source port";
  testing::Ip6 other = s;
  other[14] = 9;  // differs only past the bytes an IPv4-offset read would see
  EXPECT_NE(flow_hash(packet(frame(other, 1000))), a) << "another source address";
}

TEST(FlowHash, ShortFramesHashWithoutReadingPastTheEnd) {
  for (const std::vector<uint8_t>& f : testing::prefixes(udp4(0x0A000001, 1000, 1), 64))
    flow_hash(packet(f));  // ASan would catch an overread
  SUCCEED();
}

}  // namespace
}  // namespace fulcrum
