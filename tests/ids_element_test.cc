// Golden tests for IDSMatch: alerted packets leave on output 1 (or pass, or are dropped in IPS
// mode), malformed frames are dropped with their reason, the alert log holds one JSON line per
// (packet, rule) with the packet's flow, both engines agree, and configuration errors are named.
#include <gtest/gtest.h>

#include <fstream>
#include <string>
#include <vector>

#include "elements/ids/ids_match.hh"
#include "ids_test_frames.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;

constexpr uint32_t kClient = 0x0A000001;  // 10.0.0.1
constexpr uint32_t kServer = 0xC0A80002;  // 192.168.0.2
constexpr uint64_t kOutput0Only = 0b01;
constexpr uint64_t kBothOutputs = 0b11;

const char* const kRules =
    "# test rules\n"
    "alert tcp any any -> any 80 (msg:\"get passwd\"; content:\"GET \"; depth:4; "
    "content:\"/etc/passwd\"; sid:1;)\n"
    "alert udp any any -> any any (msg:\"evil \\\"udp\\\"\"; content:\"EVIL\"; nocase; sid:2;)\n"
    "alert ip any any -> any any (msg:\"re\"; pcre:\"/x[0-9]{3}y/\"; sid:3;)\n";

std::string write_file(const std::string& stem, const std::string& text) {
  const std::string path = testing::temp_path(stem);
  std::ofstream(path) << text;
  return path;
}

std::vector<Frame> traffic() {
  return {
      testing::l4_frame(testing::kProtoTcp, kClient, kServer, 1234, 80, "GET /etc/passwd HTTP"),
      testing::l4_frame(testing::kProtoTcp, kClient, kServer, 1234, 81, "GET /etc/passwd HTTP"),
      testing::l4_frame(testing::kProtoTcp, kClient, kServer, 1234, 80, " GET /etc/passwd"),
      testing::l4_frame(testing::kProtoUdp, kClient, kServer, 53, 53, "an eViL x123y one"),
      testing::l4_frame(testing::kProtoUdp, kClient, kServer, 53, 53, "clean payload"),
  };
}

TEST(IdsElement, AlertedPacketsLeaveOnOutput1) {
  for (const char* engine : {"ENGINE hyperscan", "ENGINE ac"}) {
    auto e = testing::make_element_connected("IDSMatch", {write_file("out1.rules", kRules), engine},
                                             kBothOutputs);
    ASSERT_NE(e, nullptr);
    PacketBatch b;
    const std::vector<Verdict> v = testing::run_batch(*e, b, traffic());
    const std::vector<int> want = {1, 0, 0, 1, 0};
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(v[i].port(), want[i]) << engine << " " << i;
    testing::free_batch(b);
    std::vector<Counter> c;
    e->counters(c);
    EXPECT_EQ(c[0].name, "alerts");
    EXPECT_EQ(c[0].value, 3u) << engine;  // packet 3 matches sid 2 and sid 3
    EXPECT_EQ(c[1].value, 2u) << engine;
  }
}

TEST(IdsElement, IdsModePassesAndIpsModeDrops) {
  const std::string rules = write_file("mode.rules", kRules);
  auto pass = testing::make_element_connected("IDSMatch", {rules}, kOutput0Only);
  ASSERT_NE(pass, nullptr);
  PacketBatch b;
  for (const Verdict& v : testing::run_batch(*pass, b, traffic())) EXPECT_EQ(v.port(), 0);
  testing::free_batch(b);
  auto drop = testing::make_element_connected("IDSMatch", {rules, "DROP true"}, kOutput0Only);
  ASSERT_NE(drop, nullptr);
  const std::vector<Verdict> v = testing::run_batch(*drop, b, traffic());
  EXPECT_EQ(testing::drop_reason(*drop, v[0]), "alert");
  EXPECT_EQ(v[1].port(), 0);
  EXPECT_EQ(testing::drop_reason(*drop, v[3]), "alert");
  testing::free_batch(b);
}

TEST(IdsElement, MalformedFramesAreDroppedWithReasons) {
  auto e = testing::make_or_fail("IDSMatch", {write_file("bad.rules", kRules)});
  ASSERT_NE(e, nullptr);
  const Frame tcp = testing::l4_frame(testing::kProtoTcp, kClient, kServer, 1, 80, "GET x");
  PacketBatch b;
  const std::vector<Verdict> v = testing::run_batch(*e, b, testing::prefixes(tcp, tcp.size()));
  for (uint32_t n = 0; n <= tcp.size(); ++n) {
    // Every proper prefix ends before the IP total length.
    if (n < tcp.size()) {
      EXPECT_EQ(testing::drop_reason(*e, v[n]), "truncated") << n;
    }
  }
  EXPECT_EQ(v[tcp.size()].port(), 0);
  testing::free_batch(b);

  Frame arp = testing::ether_frame(0x0806);
  Frame ipv6 = testing::ether_frame(0x86DD);  // IPv6's EtherType, IP version 0
  Frame version6 = tcp;
  version6[14] = 0x65;
  Frame bad_offset = tcp;
  bad_offset[14 + 20 + 12] = 0x40;  // TCP data offset 4 words
  Frame long_offset = tcp;
  long_offset[14 + 20 + 12] = 0xF0;  // 60-byte TCP header, past the IP payload
  Frame short_udp = testing::l4_frame(testing::kProtoUdp, kClient, kServer, 1, 2, "");
  short_udp[17] = 20 + 4;  // IP total length leaves 4 bytes for the UDP header
  Frame bad_ihl = tcp;
  bad_ihl[14] = 0x44;
  Frame fragment = tcp;  // a non-first fragment: no L4 header, only ip rules look at it
  fragment[14 + 6] = 0x00, fragment[14 + 7] = 0x10;
  const std::vector<Verdict> w = testing::run_batch(
      *e, b, {arp, ipv6, version6, bad_offset, long_offset, short_udp, bad_ihl, fragment});
  EXPECT_EQ(testing::drop_reason(*e, w[0]), "not-ip");
  EXPECT_EQ(testing::drop_reason(*e, w[1]), "not-ip");
  EXPECT_EQ(testing::drop_reason(*e, w[2]), "not-ip");
  EXPECT_EQ(testing::drop_reason(*e, w[3]), "bad-l4-header");
  EXPECT_EQ(testing::drop_reason(*e, w[4]), "bad-l4-header");
  EXPECT_EQ(testing::drop_reason(*e, w[5]), "bad-l4-header");
  EXPECT_EQ(testing::drop_reason(*e, w[6]), "truncated");
  EXPECT_EQ(w[7].port(), 0);
  testing::free_batch(b);
}

// The same traffic behind 802.1Q and QinQ tags, and as IPv6 with extension headers (the rules'
// addresses are `any`), raises the same alerts on the same outputs.
TEST(IdsElement, VlanQinQAndIpv6TrafficAlertsAsUntaggedIpv4) {
  const testing::Ip6 src = testing::ip6("2001:db8::1"), dst = testing::ip6("2001:db8::2");
  std::vector<Frame> frames;
  std::vector<int> want;
  const std::vector<int> want4 = {1, 0, 0, 1, 0};
  for (const std::vector<uint16_t>& tags : std::vector<std::vector<uint16_t>>{
           {testing::kTpidVlan}, {testing::kTpidQinQ, testing::kTpidVlan}})
    for (size_t i = 0; i < traffic().size(); ++i) {
      frames.push_back(testing::vlan_tagged(traffic()[i], tags));
      want.push_back(want4[i]);
    }
  const std::vector<std::vector<testing::Ext6>> chains = {
      {},
      {{testing::kExtHopByHop}, {testing::kExtRouting}},
      {{testing::kExtDestOptions}, {testing::kExtAh}, {testing::kExtFragment, 0}}};
  for (const auto& chain : chains)
    for (size_t i = 0; i < traffic().size(); ++i) {
      const Frame v6 = testing::as_ipv6(traffic()[i], src, dst, chain);
      frames.push_back(chain.empty() ? testing::vlan_tagged(v6, {testing::kTpidQinQ}) : v6);
      want.push_back(want4[i]);
    }
  for (const char* engine : {"ENGINE hyperscan", "ENGINE ac"}) {
    auto e = testing::make_element_connected(
        "IDSMatch", {write_file("tagged.rules", kRules), engine}, kBothOutputs);
    ASSERT_NE(e, nullptr);
    PacketBatch b;
    const std::vector<Verdict> v = testing::run_batch(*e, b, frames);
    for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(v[i].port(), want[i]) << engine << " " << i;
    testing::free_batch(b);
  }
}

TEST(IdsElement, MalformedTagsAndIpv6AreDroppedWithReasons) {
  auto e = testing::make_or_fail("IDSMatch", {write_file("bad6.rules", kRules)});
  ASSERT_NE(e, nullptr);
  const testing::Ip6 a = testing::ip6("2001:db8::1");
  auto v6 = [&](const std::vector<testing::Ext6>& exts) {
    return testing::ipv6_frame(a, a, exts, testing::kProtoUdp,
                               testing::l4_segment(testing::kProtoUdp, 1, 2, "x"));
  };
  const Frame udp = testing::l4_frame(testing::kProtoUdp, kClient, kServer, 1, 2, "x");
  Frame cut_tag = testing::vlan_tagged(udp, {testing::kTpidQinQ, testing::kTpidVlan});
  cut_tag.resize(14 + 4 + 2);
  Frame long_ext = v6({{testing::kExtDestOptions}});
  long_ext[14 + 40 + 1] = 2;  // 24 bytes, past the payload
  Frame bad_udp = v6({});
  bad_udp[14 + 40 + 5] = 0;  // UDP length 0
  Frame cut6 = v6({});
  cut6.pop_back();
  Frame short_tcp6 = testing::ipv6_frame(a, a, {}, testing::kProtoTcp, {1, 2, 3, 4});
  const std::vector<uint16_t> four(4, testing::kTpidVlan);
  PacketBatch b;
  const std::vector<Verdict> w =
      testing::run_batch(*e, b,
                         {testing::vlan_tagged(testing::ether_frame(0x0806), {testing::kTpidVlan}),
                          cut_tag, testing::vlan_tagged(udp, four), long_ext,
                          v6({{testing::kExtDestOptions}, {testing::kExtHopByHop}}),
                          v6(std::vector<testing::Ext6>(9, {testing::kExtRouting})), bad_udp, cut6,
                          short_tcp6, v6(std::vector<testing::Ext6>(8, {testing::kExtRouting}))});
  const std::vector<std::string> want = {"not-ip",         "truncated",    "too-many-vlan-tags",
                                         "bad-ipv6-ext",   "bad-ipv6-ext", "too-many-ipv6-ext",
                                         "bad-udp-length", "truncated",    "bad-l4-header"};
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(testing::drop_reason(*e, w[i]), want[i]) << i;
  EXPECT_EQ(w[want.size()].port(), 0);
  testing::free_batch(b);
}

// IPv6 addresses in the alert log as inet_ntop writes them, in both formats; ICMPv6 is named as
// Suricata names it.
TEST(IdsElement, AlertLogWritesIpv6Addresses) {
  const std::string rules =
      write_file("log6.rules",
                 "alert tcp 2001:db8::/32 any -> any 80 (msg:\"v6\"; content:\"GET\"; sid:1;)\n"
                 "alert icmpv6 any any -> [10.0.0.0/8,fe80::/10] any (msg:\"ping\"; sid:2;)\n");
  const testing::Ip6 src = testing::ip6("2001:db8:0:0:1::1"), dst = testing::ip6("2001:db8::80");
  const Frame tcp = testing::vlan_tagged(
      testing::ipv6_frame(src, dst, {{testing::kExtHopByHop}}, testing::kProtoTcp,
                          testing::l4_segment(testing::kProtoTcp, 40000, 80, "GET /")),
      {testing::kTpidVlan});
  const Frame ping =
      testing::ipv6_frame(src, testing::ip6("fe80::1"), {}, testing::kProtoIcmpv6, {128, 0, 0, 0});
  for (const char* format : {"fulcrum", "eve"}) {
    const std::string log = testing::temp_path(std::string("ids-alerts6-") + format + ".jsonl");
    {
      auto e = testing::make_or_fail(
          "IDSMatch", {rules, "ALERTS " + log, std::string("ALERT_FORMAT ") + format});
      ASSERT_NE(e, nullptr);
      PacketBatch b;
      testing::run_batch(*e, b, {tcp, ping});
      testing::free_batch(b);
    }
    std::ifstream in(log);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_EQ(lines.size(), 2u) << format;
    if (std::string(format) == "fulcrum") {
      EXPECT_EQ(lines[0],
                "{\"sid\":1,\"msg\":\"v6\",\"packet\":0,\"flow\":{\"src\":\"2001:db8::1:0:0:1\","
                "\"dst\":\"2001:db8::80\",\"sport\":40000,\"dport\":80,\"proto\":6}}");
      EXPECT_EQ(lines[1],
                "{\"sid\":2,\"msg\":\"ping\",\"packet\":1,\"flow\":{\"src\":\"2001:db8::1:0:0:1\","
                "\"dst\":\"fe80::1\",\"sport\":0,\"dport\":0,\"proto\":58}}");
    } else {
      EXPECT_NE(lines[0].find("\"src_ip\":\"2001:db8::1:0:0:1\",\"src_port\":40000,"
                              "\"dest_ip\":\"2001:db8::80\",\"dest_port\":80,\"proto\":\"TCP\""),
                std::string::npos)
          << lines[0];
      EXPECT_NE(lines[1].find("\"src_ip\":\"2001:db8::1:0:0:1\",\"dest_ip\":\"fe80::1\","
                              "\"proto\":\"IPv6-ICMP\""),
                std::string::npos)
          << lines[1];
    }
  }
}

TEST(IdsElement, AlertLogHasOneJsonLinePerMatch) {
  const std::string log = testing::temp_path("ids-alerts.jsonl");
  {
    auto e = testing::make_or_fail("IDSMatch",
                                   {write_file("log.rules", kRules), "ALERTS " + log, "ENGINE ac"});
    ASSERT_NE(e, nullptr);
    PacketBatch b;
    testing::run_batch(*e, b, traffic());
    testing::free_batch(b);
    testing::run_batch(*e, b, {traffic()[0]});  // the packet index goes on across batches
    testing::free_batch(b);
  }
  std::ifstream in(log);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  const std::string flow_tcp =
      "\"flow\":{\"src\":\"10.0.0.1\",\"dst\":\"192.168.0.2\",\"sport\":1234,\"dport\":80,"
      "\"proto\":6}}";
  const std::string flow_udp =
      "\"flow\":{\"src\":\"10.0.0.1\",\"dst\":\"192.168.0.2\",\"sport\":53,\"dport\":53,"
      "\"proto\":17}}";
  const std::vector<std::string> want = {
      "{\"sid\":1,\"msg\":\"get passwd\",\"packet\":0," + flow_tcp,
      "{\"sid\":2,\"msg\":\"evil \\\"udp\\\"\",\"packet\":3," + flow_udp,
      "{\"sid\":3,\"msg\":\"re\",\"packet\":3," + flow_udp,
      "{\"sid\":1,\"msg\":\"get passwd\",\"packet\":5," + flow_tcp,
  };
  EXPECT_EQ(lines, want);
}

// The element times threshold windows with its clock (the TSC; a test clock here): the same
// traffic alerts once per window.
TEST(IdsElement, ThresholdWindowsFollowTheElementsClock) {
  const std::string rules = write_file(
      "limit.rules",
      "alert udp any any -> any any (content:\"EVIL\"; nocase; threshold: type limit, track "
      "by_src, count 1, seconds 60; sid:2;)\n");
  auto e = testing::make_element_connected("IDSMatch", {rules}, kBothOutputs);
  ASSERT_NE(e, nullptr);
  uint64_t now = 0;
  dynamic_cast<IDSMatch&>(*e).set_clock([&now] { return now; });
  const Frame evil = testing::l4_frame(testing::kProtoUdp, kClient, kServer, 53, 53, "evil");
  PacketBatch b;
  auto ports = [&] {
    std::vector<int> out;
    for (const Verdict& v : testing::run_batch(*e, b, {evil, evil})) out.push_back(v.port());
    testing::free_batch(b);
    return out;
  };
  EXPECT_EQ(ports(), (std::vector<int>{1, 0}));
  now = 60'000'000'000;  // the window's last nanosecond
  EXPECT_EQ(ports(), (std::vector<int>{0, 0}));
  now += 1;
  EXPECT_EQ(ports(), (std::vector<int>{1, 0}));
}

// flowbits across batches, both directions, and the FLOW_TIMEOUT key on the element's clock
// (per packet: the segments repeat their sequence numbers).
TEST(IdsElement, FlowbitsAcrossBatchesAndTheFlowTimeout) {
  const std::string rules = write_file(
      "flowbits.rules",
      "alert tcp any any -> any any (content:\"PASS\"; flowbits:isset,login; sid:2;)\n"
      "alert tcp any any -> any any (content:\"USER\"; flowbits:set,login; flowbits:noalert; "
      "sid:1;)\n");
  auto e = testing::make_element_connected(
      "IDSMatch", {rules, "FLOW_TIMEOUT 5", "FLOWS 64", "STREAM false"}, kBothOutputs);
  ASSERT_NE(e, nullptr);
  uint64_t now = 0;
  dynamic_cast<IDSMatch&>(*e).set_clock([&now] { return now; });
  const Frame user = testing::l4_frame(testing::kProtoTcp, kClient, kServer, 1234, 21, "USER a");
  const Frame pass = testing::l4_frame(testing::kProtoTcp, kServer, kClient, 21, 1234, "PASS b");
  PacketBatch b;
  auto ports = [&](const std::vector<Frame>& frames) {
    std::vector<int> out;
    for (const Verdict& v : testing::run_batch(*e, b, frames)) out.push_back(v.port());
    testing::free_batch(b);
    return out;
  };
  EXPECT_EQ(ports({pass, user}), (std::vector<int>{0, 0}));
  EXPECT_EQ(ports({pass}), (std::vector<int>{1}));  // the reply direction, a later batch
  now = 5'000'000'000;
  EXPECT_EQ(ports({pass}), (std::vector<int>{1}));  // 5 s after the last look: kept
  now = 10'000'000'001;
  EXPECT_EQ(ports({pass}), (std::vector<int>{0}));  // idle longer than FLOW_TIMEOUT
}

TEST(IdsElement, ConfigurationErrors) {
  EXPECT_NE(testing::config_error("IDSMatch", {}), "(no error)");
  EXPECT_NE(testing::config_error("IDSMatch", {"/nonexistent/x.rules"}).find("cannot open rule"),
            std::string::npos);
  const std::string rules = write_file("cfg.rules", kRules);
  EXPECT_NE(testing::config_error("IDSMatch", {rules, "ENGINE gpu"})
                .find("ENGINE: expected hyperscan or ac, got 'gpu'"),
            std::string::npos);
  // A rule that does not load is skipped (--strict-rules makes it an error: tests/e2e); a file
  // of which no rule loads is an error.
  const std::string bad = write_file("cfg-bad.rules", std::string(kRules) + "alert tcp\n");
  EXPECT_EQ(testing::config_error("IDSMatch", {bad}), "(no error)");
  const std::string backref =
      write_file("cfg-re.rules", "alert tcp any any -> any any (pcre:\"/(a)\\1/\"; sid:42;)\n");
  EXPECT_NE(testing::config_error("IDSMatch", {backref})
                .find("none of its 1 rules can be loaded (pcre: Hyperscan 1)"),
            std::string::npos)
      << testing::config_error("IDSMatch", {backref});
  EXPECT_NE(testing::config_error("IDSMatch", {rules, "FLOWS 0"})
                .find("FLOWS: expected 1 to 16777216 entries, got 0"),
            std::string::npos)
      << testing::config_error("IDSMatch", {rules, "FLOWS 0"});
  EXPECT_NE(testing::config_error("IDSMatch", {rules, "STREAMS 0"})
                .find("STREAMS: expected 1 to 16777216 entries, got 0"),
            std::string::npos);
  EXPECT_NE(testing::config_error("IDSMatch", {rules, "STREAM_OOO 1048577"})
                .find("STREAM_OOO: expected 0 to 1048576 bytes, got 1048577"),
            std::string::npos);
  EXPECT_NE(testing::config_error("IDSMatch", {rules, "STREAM maybe"}), "")
      << "STREAM takes a boolean";
  EXPECT_NE(testing::config_error("IDSMatch", {rules, "THRESHOLDS 16777217"})
                .find("THRESHOLDS: expected 1 to 16777216 entries, got 16777217"),
            std::string::npos);
  EXPECT_NE(testing::config_error("IDSMatch", {rules, "ALERTS /nonexistent/dir/a.jsonl"})
                .find("cannot open alert log"),
            std::string::npos);
}

}  // namespace
}  // namespace fulcrum
