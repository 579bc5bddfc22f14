// The IDS frame parser (src/lib/ids/packet_view.hh): VLAN tags (802.1Q, QinQ) are skipped and the
// IP packet behind them is seen as untagged; IPv6 extension headers of every kind are walked to
// the upper-layer header; fragments; and every malformed tag stack, IPv6 header and extension
// chain is refused with its reason.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ids_test_frames.hh"
#include "lib/ids/packet_view.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"
#include "testing.hh"

namespace fulcrum::ids {
namespace {

using Frame = std::vector<uint8_t>;
using testing::Ext6;

constexpr uint32_t kEth = 14, kVlan = 4, kIp4 = 20, kIp6 = 40, kTcp = 20, kUdp = 8;
const testing::Ip6 kSrc6 = testing::ip6("2001:db8::1");
const testing::Ip6 kDst6 = testing::ip6("2001:db8:ffff::2");
constexpr uint32_t kSrc4 = 0x0A000001, kDst4 = 0x0A000002;
const std::string kPayload = "GET /etc/passwd";

ParseResult parse(const Frame& f, PacketView& v) {
  return parse_packet(f.data(), static_cast<uint32_t>(f.size()), v);
}

ParseResult parse(const Frame& f) {
  PacketView v;
  return parse(f, v);
}

std::string domain(const PacketView& v) {
  return std::string(reinterpret_cast<const char*>(v.ip_payload) + v.l4_hdr_len,
                     v.ip_payload_len - v.l4_hdr_len);
}

Frame tcp6(const std::vector<Ext6>& exts, const std::string& payload = kPayload) {
  return testing::ipv6_frame(kSrc6, kDst6, exts, testing::kProtoTcp,
                             testing::l4_segment(testing::kProtoTcp, 1234, 80, payload));
}

Frame udp6(const std::vector<Ext6>& exts, const std::string& payload = kPayload) {
  return testing::ipv6_frame(kSrc6, kDst6, exts, testing::kProtoUdp,
                             testing::l4_segment(testing::kProtoUdp, 53, 5353, payload));
}

TEST(IdsPacketView, VlanAndQinQTagsAreSkipped) {
  const std::vector<std::vector<uint16_t>> stacks = {
      {testing::kTpidVlan},
      {testing::kTpidQinQ, testing::kTpidVlan},
      {testing::kTpidVlan, testing::kTpidVlan},
      {0x9100, testing::kTpidVlan},
      {testing::kTpidQinQ, testing::kTpidVlan, testing::kTpidVlan},
  };
  const Frame v4 = testing::l4_frame(testing::kProtoTcp, kSrc4, kDst4, 1234, 80, kPayload);
  const Frame v6 = udp6({});
  for (const auto& tpids : stacks) {
    PacketView a, b;
    const Frame tagged = testing::vlan_tagged(v4, tpids);
    ASSERT_EQ(parse(tagged, a), ParseResult::kOk);
    EXPECT_EQ(a.ip_payload - tagged.data(), kEth + kVlan * tpids.size() + kIp4);
    EXPECT_FALSE(a.ipv6());
    EXPECT_EQ(a.src, kSrc4);
    EXPECT_EQ(a.dst, kDst4);
    EXPECT_EQ(a.sport, 1234);
    EXPECT_EQ(a.dport, 80);
    EXPECT_EQ(a.l4_hdr_len, kTcp);
    EXPECT_EQ(domain(a), kPayload);
    const Frame tagged6 = testing::vlan_tagged(v6, tpids);
    ASSERT_EQ(parse(tagged6, b), ParseResult::kOk);
    EXPECT_EQ(b.ip_payload - tagged6.data(), kEth + kVlan * tpids.size() + kIp6);
    EXPECT_TRUE(b.ipv6());
    EXPECT_EQ(b.proto, testing::kProtoUdp);
    EXPECT_EQ(b.dport, 5353);
    EXPECT_EQ(domain(b), kPayload);
    // Every proper prefix ends inside a tag, the IP header or before the IP length.
    for (const Frame& f : testing::prefixes(tagged, tagged.size() - 1))
      EXPECT_EQ(parse(f), ParseResult::kTruncated) << f.size();
  }
}

TEST(IdsPacketView, VlanTagsAreBounded) {
  const Frame v4 = testing::l4_frame(testing::kProtoUdp, kSrc4, kDst4, 1, 2, kPayload);
  const std::vector<uint16_t> three(kMaxVlanTags, testing::kTpidVlan);
  EXPECT_EQ(parse(testing::vlan_tagged(v4, three)), ParseResult::kOk);
  std::vector<uint16_t> four = three;
  four.push_back(testing::kTpidQinQ);
  EXPECT_EQ(parse(testing::vlan_tagged(v4, four)), ParseResult::kTooManyVlanTags);
  // A tag in front of something that is not IP, or a version that is not the EtherType's.
  Frame arp = testing::vlan_tagged(testing::ether_frame(0x0806), {testing::kTpidVlan});
  EXPECT_EQ(parse(arp), ParseResult::kNotIp);
  Frame v6_as_v4 = testing::vlan_tagged(udp6({}), {testing::kTpidVlan});
  v6_as_v4[kEth + 2] = 0x08, v6_as_v4[kEth + 3] = 0x00;  // EtherType IPv4, version 6
  EXPECT_EQ(parse(v6_as_v4), ParseResult::kNotIp);
  Frame v4_as_v6 = testing::vlan_tagged(v4, {testing::kTpidVlan});
  v4_as_v6[kEth + 2] = 0x86, v4_as_v6[kEth + 3] = 0xDD;
  EXPECT_EQ(parse(v4_as_v6), ParseResult::kNotIp);
}

TEST(IdsPacketView, Ipv6AddressesAndUpperLayer) {
  PacketView v;
  const Frame f = tcp6({});
  ASSERT_EQ(parse(f, v), ParseResult::kOk);
  EXPECT_TRUE(v.ipv6());
  EXPECT_EQ(v.src6().hi, 0x20010db800000000u);
  EXPECT_EQ(v.src6().lo, 1u);
  EXPECT_EQ(v.dst6().hi, 0x20010db8ffff0000u);
  EXPECT_EQ(v.dst6().lo, 2u);
  EXPECT_EQ(v.proto, testing::kProtoTcp);
  EXPECT_EQ(v.l4_hdr_len, kTcp);
  EXPECT_EQ(v.ip_payload_len, kTcp + kPayload.size());
  EXPECT_EQ(domain(v), kPayload);
  // Ethernet padding past the payload length is not part of the payload.
  Frame padded = f;
  padded.resize(f.size() + 10, 0xEE);
  ASSERT_EQ(parse(padded, v), ParseResult::kOk);
  EXPECT_EQ(domain(v), kPayload);
}

TEST(IdsPacketView, EveryExtensionHeaderKindIsWalked) {
  const std::vector<std::vector<Ext6>> chains = {
      {{testing::kExtHopByHop}},
      {{testing::kExtRouting}},
      {{testing::kExtDestOptions}},
      {{testing::kExtAh}},
      {{testing::kExtFragment, 0}},  // an atomic fragment: offset 0, no more fragments
      {{testing::kExtHopByHop},
       {testing::kExtDestOptions},
       {testing::kExtRouting},
       {testing::kExtFragment, 0},
       {testing::kExtAh},
       {testing::kExtDestOptions}},
  };
  for (const auto& chain : chains) {
    uint32_t ext_bytes = 0;
    for (const Ext6& e : chain) ext_bytes += e.type == testing::kExtAh ? 12 : 8;
    for (const Frame& f : {tcp6(chain), udp6(chain)}) {
      PacketView v;
      ASSERT_EQ(parse(f, v), ParseResult::kOk) << chain.size() << " " << int(chain[0].type);
      EXPECT_EQ(v.ip_payload - f.data(), kEth + kIp6 + ext_bytes);
      EXPECT_FALSE(v.fragment);
      EXPECT_EQ(domain(v), kPayload);
      EXPECT_EQ(v.sport, v.proto == testing::kProtoTcp ? 1234 : 53);
    }
  }
  PacketView v;
  const std::vector<Ext6> eight(kMaxIpv6ExtHeaders, Ext6{testing::kExtDestOptions});
  const Frame deepest = tcp6(eight);  // v points into it
  ASSERT_EQ(parse(deepest, v), ParseResult::kOk);
  EXPECT_EQ(domain(v), kPayload);
  // ICMPv6 and No Next Header: ip-domain protocols, no ports.
  const Frame icmp = testing::ipv6_frame(kSrc6, kDst6, {{testing::kExtHopByHop}},
                                         testing::kProtoIcmpv6, {128, 0, 0, 0, 'p', 'i', 'n', 'g'});
  ASSERT_EQ(parse(icmp, v), ParseResult::kOk);
  EXPECT_EQ(v.proto, testing::kProtoIcmpv6);
  EXPECT_EQ(v.ip_payload_len, 8u);
  EXPECT_EQ(v.l4_hdr_len, 0u);
  const Frame none = testing::ipv6_frame(kSrc6, kDst6, {{testing::kExtDestOptions}},
                                         testing::kNoNextHeader, {'i', 'g', 'n', 'o', 'r', 'e'});
  ASSERT_EQ(parse(none, v), ParseResult::kOk);
  EXPECT_EQ(v.proto, testing::kNoNextHeader);
  EXPECT_EQ(v.ip_payload_len, 0u);
}

TEST(IdsPacketView, Ipv6Fragments) {
  constexpr uint16_t kMore = 1, kOffset8 = 8 << 3;  // offset 8 units (64 bytes)
  PacketView v;
  // A first fragment: the UDP length may promise more than this fragment carries.
  Frame first = udp6({{testing::kExtFragment, kMore}});
  const size_t udp_len = kEth + kIp6 + 8 + 4;
  first[udp_len + 1] = static_cast<uint8_t>(first[udp_len + 1] + 100);
  ASSERT_EQ(parse(first, v), ParseResult::kOk);
  EXPECT_FALSE(v.fragment);
  EXPECT_EQ(v.dport, 5353);
  EXPECT_EQ(v.l4_hdr_len, kUdp);
  // Not when it is the whole datagram (no more fragments).
  Frame whole = udp6({{testing::kExtFragment, 0}});
  whole[udp_len + 1] = static_cast<uint8_t>(whole[udp_len + 1] + 100);
  EXPECT_EQ(parse(whole), ParseResult::kBadUdpLength);
  // A non-first fragment: the walk ends at the fragment header; its data has no L4 header.
  for (uint16_t more : {uint16_t{0}, kMore}) {
    const Frame later = testing::ipv6_frame(
        kSrc6, kDst6, {{testing::kExtHopByHop}, {testing::kExtFragment, uint16_t(kOffset8 | more)}},
        testing::kProtoTcp, {'x', 'y', 'z'});
    ASSERT_EQ(parse(later, v), ParseResult::kOk);
    EXPECT_TRUE(v.fragment);
    EXPECT_EQ(v.proto, testing::kProtoTcp);
    EXPECT_EQ(v.l4_hdr_len, 0u);
    EXPECT_EQ(v.sport, 0);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(v.ip_payload), v.ip_payload_len), "xyz");
  }
}

TEST(IdsPacketView, MalformedIpv6IsRefusedWithItsReason) {
  const Frame f = tcp6({{testing::kExtHopByHop}, {testing::kExtAh}, {testing::kExtRouting}});
  // Every proper prefix ends before the payload length (or inside the fixed header).
  for (const Frame& p : testing::prefixes(f, f.size() - 1))
    EXPECT_EQ(parse(p), ParseResult::kTruncated) << p.size();
  constexpr size_t kPayloadLen = kEth + 4, kFirstExt = kEth + kIp6;
  // An extension header longer than the payload.
  Frame long_ext = f;
  long_ext[kFirstExt + 1] = 30;
  EXPECT_EQ(parse(long_ext), ParseResult::kBadIpv6Ext);
  Frame long_ah = f;
  long_ah[kFirstExt + 8 + 1] = 40;
  EXPECT_EQ(parse(long_ah), ParseResult::kBadIpv6Ext);
  // A payload length that ends the payload inside the chain: cut at every byte of it.
  for (uint32_t cut = 0; cut < 8 + 12 + 8; ++cut) {
    Frame short_payload = f;
    short_payload[kPayloadLen] = 0, short_payload[kPayloadLen + 1] = static_cast<uint8_t>(cut);
    EXPECT_EQ(parse(short_payload), ParseResult::kBadIpv6Ext) << cut;
  }
  // Hop-by-hop anywhere but first.
  EXPECT_EQ(parse(tcp6({{testing::kExtDestOptions}, {testing::kExtHopByHop}})),
            ParseResult::kBadIpv6Ext);
  // A bounded chain.
  EXPECT_EQ(parse(tcp6(std::vector<Ext6>(kMaxIpv6ExtHeaders + 1, {testing::kExtDestOptions}))),
            ParseResult::kTooManyIpv6Ext);
  // L4 headers as for IPv4.
  Frame bad_offset = tcp6({{testing::kExtRouting}});
  bad_offset[kFirstExt + 8 + 12] = 0x40;
  EXPECT_EQ(parse(bad_offset), ParseResult::kBadL4Header);
  const Frame short_tcp = testing::ipv6_frame(kSrc6, kDst6, {}, testing::kProtoTcp, {1, 2, 3});
  EXPECT_EQ(parse(short_tcp), ParseResult::kBadL4Header);
  Frame bad_udp = udp6({{testing::kExtDestOptions}});
  bad_udp[kFirstExt + 8 + 5] ^= 1;
  EXPECT_EQ(parse(bad_udp), ParseResult::kBadUdpLength);
  Frame version4 = f;
  version4[kEth] = 0x40;
  EXPECT_EQ(parse(version4), ParseResult::kNotIp);
}

// Rules on IPv6 packets: addresses per family, icmp (both ICMPs) against icmpv4 and icmpv6, a
// non-first fragment seen by ip rules only.
TEST(IdsPacketView, RuleHeadersMatchIpv6Packets) {
  auto matches = [](const std::string& header, const Frame& f) {
    Result<Rule> r = parse_rule("alert " + header + " (sid:1;)");
    EXPECT_TRUE(r.ok()) << header;
    PacketView v;
    EXPECT_EQ(parse(f, v), ParseResult::kOk);
    return r.ok() && RuleSet::header_matches(r.value(), v);
  };
  const Frame tcp = testing::vlan_tagged(tcp6({{testing::kExtHopByHop}}), {testing::kTpidVlan});
  EXPECT_TRUE(matches("tcp any any -> any 80", tcp));
  EXPECT_TRUE(matches("tcp 2001:db8::/32 1234 -> 2001:db8:ffff::2 80", tcp));
  EXPECT_TRUE(matches("ip [10.0.0.0/8,2001:db8::1] any -> any any", tcp));
  EXPECT_FALSE(matches("ip 10.0.0.0/8 any -> any any", tcp));
  EXPECT_FALSE(matches("ip !10.0.0.0/8 any -> any any", tcp));  // no IPv6 item: never
  EXPECT_TRUE(matches("ip ![2001:db8:1::/48,10.0.0.0/8] any -> any any", tcp));
  EXPECT_FALSE(matches("ip [2001:db8::/32,!2001:db8::1] any -> any any", tcp));
  EXPECT_TRUE(matches("tcp 2001:db8:ffff::2 80 <> 2001:db8::1 1234", tcp));
  EXPECT_FALSE(matches("tcp 2001:db8:ffff::2 80 -> 2001:db8::1 1234", tcp));
  EXPECT_FALSE(matches("udp any any -> any any", tcp));
  const Frame v4 = testing::l4_frame(testing::kProtoTcp, kSrc4, kDst4, 1234, 80, kPayload);
  EXPECT_FALSE(matches("tcp 2001:db8::/32 any -> any any", v4));
  EXPECT_FALSE(matches("tcp !2001:db8::/32 any -> any any", v4));
  EXPECT_TRUE(matches("tcp [2001:db8::/32,10.0.0.1] any -> any any", v4));
  EXPECT_TRUE(matches("tcp [!10.0.0.2,2001:db8::/32] any -> any any", v4));

  const Frame icmp6 = testing::ipv6_frame(kSrc6, kDst6, {}, testing::kProtoIcmpv6, {128, 0, 0, 0});
  EXPECT_TRUE(matches("icmp any any -> any any", icmp6));
  EXPECT_TRUE(matches("icmpv6 any any -> any any", icmp6));
  EXPECT_FALSE(matches("icmpv4 any any -> any any", icmp6));
  Frame icmp4 = testing::l4_frame(testing::kProtoUdp, kSrc4, kDst4, 1, 2, "ping");
  icmp4[kEth + 9] = testing::kProtoIcmp;
  EXPECT_TRUE(matches("icmp any any -> any any", icmp4));
  EXPECT_TRUE(matches("icmpv4 any any -> any any", icmp4));
  EXPECT_FALSE(matches("icmpv6 any any -> any any", icmp4));
  const Frame later = testing::ipv6_frame(kSrc6, kDst6, {{testing::kExtFragment, 8 << 3}},
                                          testing::kProtoIcmpv6, {128, 0, 0, 0});
  EXPECT_TRUE(matches("ip 2001:db8::1 any -> any any", later));
  EXPECT_FALSE(matches("icmp any any -> any any", later));
  EXPECT_FALSE(matches("icmpv6 any any -> any any", later));
  Frame later4 = icmp4;
  later4[kEth + 7] = 1;  // fragment offset 8 bytes
  EXPECT_TRUE(matches("ip any any -> any any", later4));
  EXPECT_FALSE(matches("icmp any any -> any any", later4));
}

}  // namespace
}  // namespace fulcrum::ids
