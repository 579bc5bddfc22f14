// Golden tests for the standard elements: Discard, Counter, Classifier, DropBroadcasts.
#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;

constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
constexpr uint16_t kEtherTypeLldp = 0x88cc;
constexpr uint32_t kMaxRobustLen = 40;
constexpr uint8_t kProtoTcp = 6;
constexpr uint8_t kProtoIcmp = 1;
constexpr size_t kProtoOffset = RTE_ETHER_HDR_LEN + 9;
constexpr size_t kDstIpOffset = RTE_ETHER_HDR_LEN + 16;
constexpr uint8_t kOutsideTenSlash8 = 11;
constexpr size_t kMaskedOutByte = 10;  // the source MAC byte the last pattern's mask ignores
constexpr uint8_t kFlip = 0x77;

Frame udp_frame(uint32_t frame_len = 64) {
  return testing::ipv4_udp_frame(RTE_IPV4(10, 0, 0, 1), RTE_IPV4(10, 0, 0, 2), 64, frame_len);
}

Frame with_dst_mac(Frame f, uint8_t fill) {
  std::fill_n(f.begin(), RTE_ETHER_ADDR_LEN, fill);
  return f;
}

// Every prefix of `f` of length 0..kMaxRobustLen.
std::vector<Frame> prefixes(const Frame& f) {
  return testing::prefixes(f, kMaxRobustLen);
}

std::unique_ptr<Element> make(const std::string& cls, const std::vector<std::string>& args = {}) {
  return testing::make_or_fail(cls, args);
}

TEST(ElementsStandard, DiscardDropsEverything) {
  auto e = make("Discard");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->noutputs(), 0);
  PacketBatch b;
  std::vector<Frame> frames = prefixes(udp_frame());
  frames.push_back(udp_frame());
  frames.push_back(testing::ether_frame(kEtherTypeArp));
  auto v = testing::run_batch(*e, b, frames);
  ASSERT_EQ(v.size(), frames.size());
  for (Verdict x : v) EXPECT_EQ(testing::drop_reason(*e, x), "discarded");
  EXPECT_EQ(b.live(), 0u);
  EXPECT_EQ(testing::config_error("Discard", {"x"}),
            "test.click:1:1: test :: Discard: unexpected argument 'x'");
}

TEST(ElementsStandard, CounterCountsPacketsAndBytes) {
  auto e = make("Counter");
  ASSERT_NE(e, nullptr);
  PacketBatch b;
  const std::vector<Frame> frames = {udp_frame(64), udp_frame(60), udp_frame(1514), Frame{}};
  auto v = testing::run_batch(*e, b, frames);
  for (uint32_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].port(), 0);
    EXPECT_EQ(testing::packet_bytes(b.at(i)), frames[i]);
  }
  testing::free_batch(b);
  v = testing::run_batch(*e, b, prefixes(udp_frame()));
  for (Verdict x : v) EXPECT_EQ(x.port(), 0);
  testing::free_batch(b);

  std::vector<Counter> c;
  e->counters(c);
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].name, "count");
  EXPECT_EQ(c[0].value, 4u + kMaxRobustLen + 1);
  EXPECT_EQ(c[1].name, "bytes");
  EXPECT_EQ(c[1].value, 64u + 60 + 1514 + kMaxRobustLen * (kMaxRobustLen + 1) / 2);
  EXPECT_EQ(testing::config_error("Counter", {"FOO 1"}),
            "test.click:1:1: test :: Counter: unknown keyword 'FOO'; Counter takes no keywords");
}

TEST(ElementsStandard, ClassifierDispatchesOnEthertype) {
  auto e = make("Classifier", {"12/0800", "12/0806", "12/86dd", "-"});
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->noutputs(), 4);
  PacketBatch b;
  const std::vector<Frame> frames = {udp_frame(), testing::ether_frame(kEtherTypeArp),
                                     testing::ether_frame(kEtherTypeIpv6),
                                     testing::ether_frame(kEtherTypeLldp)};
  auto v = testing::run_batch(*e, b, frames);
  ASSERT_EQ(v.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(v[i].port(), i);
    EXPECT_EQ(testing::packet_bytes(b.at(i)), frames[i]);
  }
  testing::free_batch(b);
}

TEST(ElementsStandard, ClassifierClausesMasksAndFirstMatch) {
  auto e = make("Classifier",
                {"12/0800 23/11", "12/0800 23/06", "12/0800 30/0a000000%ff000000", "0/ffffffffffff",
                 "12/0806 0/020000000002020000000001%ffffffffffffffffffff00ff"});
  ASSERT_NE(e, nullptr);
  Frame tcp = udp_frame(), icmp_local = udp_frame(), icmp_remote = udp_frame();
  tcp[kProtoOffset] = kProtoTcp;
  icmp_local[kProtoOffset] = kProtoIcmp;
  icmp_remote[kProtoOffset] = kProtoIcmp;
  icmp_remote[kDstIpOffset] = kOutsideTenSlash8;
  Frame arp_bcast = with_dst_mac(testing::ether_frame(kEtherTypeArp), 0xff);
  Frame arp_unicast = testing::ether_frame(kEtherTypeArp);
  Frame arp_other = testing::ether_frame(kEtherTypeArp);
  arp_other[kMaskedOutByte] ^= kFlip;
  Frame arp_stranger = testing::ether_frame(kEtherTypeArp);
  arp_stranger[kMaskedOutByte + 1] ^= kFlip;
  PacketBatch b;
  auto v = testing::run_batch(
      *e, b,
      {udp_frame(), tcp, icmp_local, icmp_remote, arp_bcast, arp_unicast, arp_other, arp_stranger});
  ASSERT_EQ(v.size(), 8u);
  EXPECT_EQ(v[0].port(), 0);
  EXPECT_EQ(v[1].port(), 1);
  EXPECT_EQ(v[2].port(), 2);
  EXPECT_EQ(testing::drop_reason(*e, v[3]), "no-match");
  EXPECT_EQ(v[4].port(), 3);
  EXPECT_EQ(v[5].port(), 4);
  EXPECT_EQ(v[6].port(), 4);
  EXPECT_EQ(testing::drop_reason(*e, v[7]), "no-match");
  testing::free_batch(b);

  auto first = make("Classifier", {"-", "12/0800"});
  ASSERT_NE(first, nullptr);
  v = testing::run_batch(*first, b, {udp_frame(), Frame{}});
  EXPECT_EQ(v[0].port(), 0);
  EXPECT_EQ(v[1].port(), 0);
  testing::free_batch(b);
}

TEST(ElementsStandard, ClassifierShortFramesDoNotMatch) {
  auto e = make("Classifier", {"12/0800", "62/0000"});
  ASSERT_NE(e, nullptr);
  PacketBatch b;
  auto v = testing::run_batch(*e, b, prefixes(udp_frame()));
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n) {
    if (n < RTE_ETHER_HDR_LEN)
      EXPECT_EQ(testing::drop_reason(*e, v[n]), "no-match") << n;
    else
      EXPECT_EQ(v[n].port(), 0) << n;
  }
  testing::free_batch(b);
  // A clause ending exactly at the end of the frame matches; one byte short does not.
  Frame arp = testing::ether_frame(kEtherTypeArp, 64);
  v = testing::run_batch(*e, b, {arp, Frame(arp.begin(), arp.end() - 1)});
  EXPECT_EQ(v[0].port(), 1);
  EXPECT_EQ(testing::drop_reason(*e, v[1]), "no-match");
  testing::free_batch(b);
}

TEST(ElementsStandard, ClassifierConfigErrors) {
  const std::string prefix = "test.click:1:1: test :: Classifier: ";
  EXPECT_EQ(testing::config_error("Classifier", {"12/0800", "12-0800"}),
            prefix + "pattern 2: expected OFFSET/HEX, got '12-0800'");
  EXPECT_EQ(testing::config_error("Classifier", {"12/080"}),
            prefix + "pattern 1: odd number of hex digits in '080'");
  EXPECT_EQ(testing::config_error("Classifier", {"12/08zz"}),
            prefix + "pattern 1: bad hex digit in '08zz'");
  EXPECT_EQ(testing::config_error("Classifier", {"x/0800"}),
            prefix + "pattern 1: expected OFFSET/HEX, got 'x/0800'");
  EXPECT_EQ(testing::config_error("Classifier", {"12/"}),
            prefix + "pattern 1: expected OFFSET/HEX, got '12/'");
  EXPECT_EQ(testing::config_error("Classifier", {"12/0800%ff"}),
            prefix + "pattern 1: mask 'ff' and value '0800' differ in length");
  EXPECT_EQ(testing::config_error("Classifier", {"70000/00"}),
            prefix + "pattern 1: offset 70000 too large in '70000/00'");
  EXPECT_EQ(testing::config_error("Classifier", {}), prefix + "expected at least one pattern");
  EXPECT_EQ(testing::config_error("Classifier", std::vector<std::string>(kMaxOutputs + 1, "-")),
            prefix + "too many patterns (65, at most 64)");
  EXPECT_EQ(testing::config_error("Classifier", std::vector<std::string>(kMaxOutputs, "-")),
            "(no error)");
}

TEST(ElementsStandard, DropBroadcastsDropsBroadcastAndTruncated) {
  auto e = make("DropBroadcasts");
  ASSERT_NE(e, nullptr);
  const Frame unicast = udp_frame();
  const Frame bcast = with_dst_mac(udp_frame(), 0xff);
  Frame multicast = udp_frame();
  const uint8_t mcast_mac[RTE_ETHER_ADDR_LEN] = {0x01, 0x00, 0x5e, 0x00, 0x00, 0x01};
  std::copy_n(mcast_mac, RTE_ETHER_ADDR_LEN, multicast.begin());
  Frame almost = bcast;
  almost[RTE_ETHER_ADDR_LEN - 1] = 0xfe;
  PacketBatch b;
  auto v = testing::run_batch(*e, b, {unicast, bcast, multicast, almost});
  EXPECT_EQ(v[0].port(), 0);
  EXPECT_EQ(testing::drop_reason(*e, v[1]), "broadcast");
  EXPECT_EQ(v[2].port(), 0);
  EXPECT_EQ(v[3].port(), 0);
  EXPECT_EQ(testing::packet_bytes(b.at(0)), unicast);
  EXPECT_EQ(testing::packet_bytes(b.at(2)), multicast);
  testing::free_batch(b);

  for (const Frame& f : {unicast, bcast}) {
    v = testing::run_batch(*e, b, prefixes(f));
    for (uint32_t n = 0; n <= kMaxRobustLen; ++n) {
      if (n < RTE_ETHER_HDR_LEN)
        EXPECT_EQ(testing::drop_reason(*e, v[n]), "truncated") << n;
      else if (f == bcast)
        EXPECT_EQ(testing::drop_reason(*e, v[n]), "broadcast") << n;
      else
        EXPECT_EQ(v[n].port(), 0) << n;
    }
    testing::free_batch(b);
  }
  EXPECT_EQ(testing::config_error("DropBroadcasts", {"x"}),
            "test.click:1:1: test :: DropBroadcasts: unexpected argument 'x'");
}

}  // namespace
}  // namespace fulcrum
