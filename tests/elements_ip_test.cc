// Golden tests for the IPv4 elements: CheckIPHeader, DecIPTTL.
#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "elements/ip/dec_ip_ttl.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;

constexpr uint16_t kEtherTypeArp = 0x0806;
constexpr uint16_t kEtherTypeIpv6 = 0x86dd;
constexpr uint8_t kVersionIhl6 = 0x65;  // version 6, IHL 5
constexpr uint8_t kVersion4 = 0x40;
constexpr uint8_t kMaxIhl = 15;
constexpr uint32_t kMaxRobustLen = 40;
constexpr uint32_t kMinIpFrame = RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr);
constexpr uint8_t kTtl = 64;
constexpr uint32_t kIpv4Words = 2;  // 16-bit words per 32-bit IHL unit

rte_ipv4_hdr* ip(Frame& f) {
  return reinterpret_cast<rte_ipv4_hdr*>(f.data() + RTE_ETHER_HDR_LEN);
}

// RFC 1071, written out independently of DPDK: the complement of the one's complement sum of the
// header's 16-bit words, the checksum field counted as zero.
uint16_t reference_checksum(const Frame& f) {
  const uint8_t* h = f.data() + RTE_ETHER_HDR_LEN;
  const uint32_t words = (h[0] & RTE_IPV4_HDR_IHL_MASK) * kIpv4Words;
  const uint32_t checksum_word = offsetof(rte_ipv4_hdr, hdr_checksum) / 2;
  uint32_t sum = 0;
  for (uint32_t w = 0; w < words; ++w)
    if (w != checksum_word) sum += static_cast<uint32_t>(h[2 * w] << 8 | h[2 * w + 1]);
  while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
  return static_cast<uint16_t>(~sum);
}

uint16_t checksum_field(Frame& f) {
  return rte_be_to_cpu_16(ip(f)->hdr_checksum);
}
void set_checksum(Frame& f, uint16_t c) {
  ip(f)->hdr_checksum = rte_cpu_to_be_16(c);
}
void fix_checksum(Frame& f) {
  set_checksum(f, reference_checksum(f));
}

Frame udp_frame(uint32_t src = RTE_IPV4(10, 0, 0, 1), uint32_t frame_len = 64) {
  return testing::ipv4_udp_frame(src, RTE_IPV4(10, 0, 0, 2), kTtl, frame_len);
}

std::vector<Frame> prefixes(const Frame& f) {
  return testing::prefixes(f, kMaxRobustLen);
}

std::unique_ptr<Element> make(const std::string& cls, const std::vector<std::string>& args = {}) {
  return testing::make_or_fail(cls, args);
}

struct Outcome {
  Verdict verdict;
  Frame bytes;  // the frame as it left; empty when dropped
};

// Runs any number of frames through `e`, kMaxBatch at a time.
std::vector<Outcome> run(Element& e, const std::vector<Frame>& frames) {
  std::vector<Outcome> out;
  PacketBatch b;
  for (size_t begin = 0; begin < frames.size(); begin += kMaxBatch) {
    const size_t end = std::min(frames.size(), begin + kMaxBatch);
    auto v = testing::run_batch(e, b, {frames.begin() + begin, frames.begin() + end});
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

TEST(ElementsIp, CheckIPHeaderPassesValidFramesUnchanged) {
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  Frame padded = udp_frame();  // IP total length 46 in a 64-byte frame: Ethernet padding
  ip(padded)->total_length = rte_cpu_to_be_16(46);
  fix_checksum(padded);
  Frame options = udp_frame(RTE_IPV4(10, 0, 0, 1), 68);  // IHL 6, one word of NOP options
  ip(options)->version_ihl = kVersion4 | 6;
  std::fill_n(options.begin() + kMinIpFrame, 4, RTE_IPV4_HDR_OPT_NOP);
  fix_checksum(options);
  Frame max_ihl = udp_frame(RTE_IPV4(10, 0, 0, 1), RTE_ETHER_HDR_LEN + 60);
  ip(max_ihl)->version_ihl = kVersion4 | kMaxIhl;
  fix_checksum(max_ihl);
  Frame min_length = udp_frame();
  ip(min_length)->total_length = rte_cpu_to_be_16(sizeof(rte_ipv4_hdr));
  fix_checksum(min_length);
  const std::vector<Frame> frames = {udp_frame(),
                                     udp_frame(RTE_IPV4(10, 0, 0, 1), 1514),
                                     udp_frame(RTE_IPV4(223, 255, 255, 255)),
                                     udp_frame(RTE_IPV4(240, 0, 0, 1)),
                                     padded,
                                     options,
                                     max_ihl,
                                     min_length};
  auto out = run(*e, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(out[i].verdict.port(), 0) << i << " " << testing::drop_reason(*e, out[i].verdict);
    EXPECT_EQ(out[i].bytes, frames[i]) << i;
  }
}

TEST(ElementsIp, CheckIPHeaderTruncatedFrames) {
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  auto r = results(*e, prefixes(udp_frame()));
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n)
    EXPECT_EQ(r[n], n < kMinIpFrame ? "truncated" : "bad-length") << n;
}

TEST(ElementsIp, CheckIPHeaderNotIpv4) {
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  Frame v6_version = udp_frame();
  ip(v6_version)->version_ihl = kVersionIhl6;
  Frame v4_as_ipv6 = udp_frame();  // a valid IPv4 header behind the IPv6 ethertype
  reinterpret_cast<rte_ether_hdr*>(v4_as_ipv6.data())->ether_type =
      rte_cpu_to_be_16(kEtherTypeIpv6);
  auto r = results(*e, {testing::ether_frame(kEtherTypeArp), testing::ether_frame(kEtherTypeIpv6),
                        v6_version, v4_as_ipv6});
  for (const std::string& s : r) EXPECT_EQ(s, "not-ipv4");
}

TEST(ElementsIp, CheckIPHeaderBadIhl) {
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  std::vector<Frame> frames;
  for (uint8_t ihl = 0; ihl < RTE_IPV4_MIN_IHL; ++ihl) {
    Frame f = udp_frame();
    ip(f)->version_ihl = kVersion4 | ihl;
    fix_checksum(f);
    frames.push_back(f);
  }
  Frame past_frame = udp_frame();  // 60-byte header, 50 bytes after the Ethernet header
  ip(past_frame)->version_ihl = kVersion4 | kMaxIhl;
  frames.push_back(past_frame);
  for (const std::string& s : results(*e, frames)) EXPECT_EQ(s, "bad-ihl");
}

TEST(ElementsIp, CheckIPHeaderBadLength) {
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  std::vector<Frame> frames;
  for (uint16_t len : {0, 19, 51, 0xffff}) {  // the 64-byte frame has room for 50
    Frame f = udp_frame();
    ip(f)->total_length = rte_cpu_to_be_16(len);
    fix_checksum(f);
    frames.push_back(f);
  }
  Frame short_of_options = udp_frame(RTE_IPV4(10, 0, 0, 1), 68);  // IHL 6, total length 20
  ip(short_of_options)->version_ihl = kVersion4 | 6;
  ip(short_of_options)->total_length = rte_cpu_to_be_16(sizeof(rte_ipv4_hdr));
  fix_checksum(short_of_options);
  frames.push_back(short_of_options);
  for (const std::string& s : results(*e, frames)) EXPECT_EQ(s, "bad-length");
}

TEST(ElementsIp, CheckIPHeaderChecksum) {
  auto e = make("CheckIPHeader");
  auto unchecked = make("CheckIPHeader", {"CHECKSUM false"});
  ASSERT_NE(e, nullptr);
  ASSERT_NE(unchecked, nullptr);
  Frame flipped = udp_frame();
  set_checksum(flipped, checksum_field(flipped) ^ 1);
  Frame stale = udp_frame();
  ip(stale)->time_to_live--;
  // Zero has two one's complement forms: a header whose checksum is 0x0000 also verifies with
  // 0xFFFF. Setting the ident word to the checksum of the header with ident 0 makes it 0x0000.
  Frame zero = udp_frame();
  ip(zero)->packet_id = rte_cpu_to_be_16(checksum_field(zero));
  fix_checksum(zero);
  ASSERT_EQ(checksum_field(zero), 0x0000);
  Frame negative_zero = zero;
  set_checksum(negative_zero, 0xFFFF);
  EXPECT_EQ(results(*e, {flipped, stale, zero, negative_zero}),
            (std::vector<std::string>{"bad-checksum", "bad-checksum", "out 0", "out 0"}));
  EXPECT_EQ(results(*unchecked, {flipped, stale}), (std::vector<std::string>{"out 0", "out 0"}));
}

// Differential: the element's 20-byte checksum fast path against an RFC 1071 sum written out
// here, on headers with random fields and checksums that are right, off by one bit, or random.
TEST(ElementsIp, CheckIPHeaderChecksumAgreesWithRfc1071OnRandomHeaders) {
  constexpr int kFrames = 3000;
  constexpr uint32_t kRandomWords[] = {2, 3, 4, 8, 9};  // ident, fragment, ttl/protocol, dst
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  std::mt19937 rng(16);
  std::vector<Frame> frames;
  std::vector<std::string> want;
  for (int i = 0; i < kFrames; ++i) {
    Frame f = udp_frame();
    auto* h = reinterpret_cast<uint8_t*>(ip(f));
    h[offsetof(rte_ipv4_hdr, type_of_service)] = static_cast<uint8_t>(rng());
    for (uint32_t w : kRandomWords) {
      h[2 * w] = static_cast<uint8_t>(rng());
      h[2 * w + 1] = static_cast<uint8_t>(rng());
    }
    fix_checksum(f);
    const int kind = i % 3;
    if (kind == 1) set_checksum(f, checksum_field(f) ^ static_cast<uint16_t>(1u << (rng() % 16)));
    if (kind == 2) set_checksum(f, static_cast<uint16_t>(rng()));
    uint32_t sum = 0;
    for (uint32_t w = 0; w < sizeof(rte_ipv4_hdr) / 2; ++w)
      sum += static_cast<uint32_t>(h[2 * w] << 8 | h[2 * w + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    want.push_back(sum == 0xFFFF ? "out 0" : "bad-checksum");
    frames.push_back(std::move(f));
  }
  EXPECT_EQ(results(*e, frames), want);
}

// Every value of the checksum field on two headers (one whose right checksum is 0x0000, so its
// other form 0xFFFF verifies too): the element passes exactly the values an RFC 1071 sum does.
TEST(ElementsIp, CheckIPHeaderEveryChecksumValue) {
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  auto rfc1071 = [](Frame& f) {
    const auto* h = reinterpret_cast<const uint8_t*>(ip(f));
    uint32_t sum = 0;
    for (uint32_t w = 0; w < sizeof(rte_ipv4_hdr) / 2; ++w)
      sum += static_cast<uint32_t>(h[2 * w] << 8 | h[2 * w + 1]);
    while (sum >> 16) sum = (sum & 0xFFFF) + (sum >> 16);
    return sum;
  };
  Frame zero_sum = udp_frame();
  for (uint32_t id = 0; id <= UINT16_MAX; ++id) {
    ip(zero_sum)->packet_id = rte_cpu_to_be_16(static_cast<uint16_t>(id));
    fix_checksum(zero_sum);
    if (checksum_field(zero_sum) == 0x0000) break;
  }
  ASSERT_EQ(checksum_field(zero_sum), 0x0000);
  int passed = 0;
  for (const Frame& base : {udp_frame(), zero_sum}) {
    std::vector<Frame> frames;
    std::vector<std::string> want;
    for (uint32_t c = 0; c <= UINT16_MAX; ++c) {
      Frame f = base;
      set_checksum(f, static_cast<uint16_t>(c));
      const bool ok = rfc1071(f) == 0xFFFF;
      passed += ok;
      want.push_back(ok ? "out 0" : "bad-checksum");
      frames.push_back(std::move(f));
    }
    EXPECT_EQ(results(*e, frames), want);
  }
  EXPECT_EQ(passed, 3);  // one value for the first header, 0x0000 and 0xFFFF for the second
}

TEST(ElementsIp, CheckIPHeaderBadSource) {
  auto e = make("CheckIPHeader");
  auto extra = make("CheckIPHeader", {"BADSRC 10.0.0.255 192.168.1.255"});
  ASSERT_NE(e, nullptr);
  ASSERT_NE(extra, nullptr);
  std::vector<Frame> frames;
  for (uint32_t a : {RTE_IPV4(0, 0, 0, 0), RTE_IPV4(255, 255, 255, 255), RTE_IPV4(224, 0, 0, 0),
                     RTE_IPV4(224, 0, 0, 1), RTE_IPV4(239, 255, 255, 255)})
    frames.push_back(udp_frame(a));
  for (const std::string& s : results(*e, frames)) EXPECT_EQ(s, "bad-source");
  frames = {udp_frame(RTE_IPV4(10, 0, 0, 255)), udp_frame(RTE_IPV4(192, 168, 1, 255)),
            udp_frame(RTE_IPV4(10, 0, 0, 1)), udp_frame(RTE_IPV4(0, 0, 0, 0))};
  EXPECT_EQ(results(*e, frames),
            (std::vector<std::string>{"out 0", "out 0", "out 0", "bad-source"}));
  EXPECT_EQ(results(*extra, frames),
            (std::vector<std::string>{"bad-source", "bad-source", "out 0", "bad-source"}));
}

TEST(ElementsIp, CheckIPHeaderChecksInOrder) {
  auto e = make("CheckIPHeader");
  ASSERT_NE(e, nullptr);
  Frame checksum_and_source = udp_frame(RTE_IPV4(0, 0, 0, 0));
  set_checksum(checksum_and_source, checksum_field(checksum_and_source) ^ 1);
  Frame length_and_checksum = udp_frame();
  ip(length_and_checksum)->total_length = 0;
  Frame ihl_and_length = udp_frame();
  ip(ihl_and_length)->version_ihl = kVersion4;
  ip(ihl_and_length)->total_length = 0;
  Frame arp_short = testing::ether_frame(kEtherTypeArp, kMinIpFrame - 1);
  EXPECT_EQ(results(*e, {checksum_and_source, length_and_checksum, ihl_and_length, arp_short}),
            (std::vector<std::string>{"bad-checksum", "bad-length", "bad-ihl", "truncated"}));
}

TEST(ElementsIp, CheckIPHeaderConfigErrors) {
  const std::string prefix = "test.click:1:1: test :: CheckIPHeader: ";
  EXPECT_EQ(testing::config_error("CheckIPHeader", {"CHECKSUM maybe"}),
            prefix + "CHECKSUM: expected boolean (true/false), got 'maybe'");
  EXPECT_EQ(testing::config_error("CheckIPHeader", {"BADSRC 10.0.0.1 1.2.3"}),
            prefix + "BADSRC: expected IPv4 address, got '1.2.3'");
  EXPECT_EQ(testing::config_error("CheckIPHeader", {"INTERFACES 10.0.0.1"}),
            prefix + "unknown keyword 'INTERFACES'; CheckIPHeader takes CHECKSUM, BADSRC");
  EXPECT_EQ(testing::config_error("CheckIPHeader", {"CHEKSUM true"}),
            prefix +
                "unknown keyword 'CHEKSUM' (did you mean 'CHECKSUM'?); CheckIPHeader takes "
                "CHECKSUM, BADSRC");
}

static_assert(DecIPTTL::checksum_adjust(0xDD2F, 0x5555, 0x3285) == 0x0000,
              "RFC 1624 section 4 example");

// The reduced TTL update equals eqn. 3 for every stored checksum, every TTL that is decremented
// and a spread of protocols (the element's path; the frame tests compare with a recomputation).
TEST(ElementsIp, DecIPTTLReducedUpdateEqualsEqn3) {
  constexpr uint32_t kFirstTtl = 2;
  constexpr std::array<uint8_t, 6> kProtocols = {0, 1, 6, 17, 50, UINT8_MAX};
  uint64_t differ = 0;
  for (uint32_t hc = 0; hc <= UINT16_MAX; ++hc) {
    const auto stored = rte_cpu_to_be_16(static_cast<uint16_t>(hc));
    const uint16_t reduced = rte_be_to_cpu_16(DecIPTTL::ttl_decrement_checksum(stored));
    for (uint32_t ttl = kFirstTtl; ttl <= UINT8_MAX; ++ttl)
      for (uint8_t proto : kProtocols) {
        const auto m = static_cast<uint16_t>(ttl << 8 | proto);
        const auto m_new = static_cast<uint16_t>((ttl - 1) << 8 | proto);
        differ += DecIPTTL::checksum_adjust(static_cast<uint16_t>(hc), m, m_new) != reduced;
      }
  }
  EXPECT_EQ(differ, 0u);
  EXPECT_EQ(rte_be_to_cpu_16(DecIPTTL::ttl_decrement_checksum(rte_cpu_to_be_16(0xFEFF))), 0x0000);
  EXPECT_EQ(rte_be_to_cpu_16(DecIPTTL::ttl_decrement_checksum(rte_cpu_to_be_16(0xFFFF))), 0x0100);
}

// The frame DecIPTTL should emit for `f`: TTL - 1 and a recomputed checksum.
Frame decremented(Frame f) {
  ip(f)->time_to_live--;
  fix_checksum(f);
  return f;
}

TEST(ElementsIp, DecIPTTLDecrementsAndUpdatesChecksum) {
  auto e = make("DecIPTTL");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->noutputs(), 2);
  const std::vector<Frame> frames = {udp_frame(), testing::ipv4_udp_frame(1, 2, 2),
                                     testing::ipv4_udp_frame(1, 2, UINT8_MAX)};
  auto out = run(*e, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(out[i].verdict.port(), 0);
    EXPECT_EQ(out[i].bytes, decremented(frames[i])) << i;
  }
  EXPECT_EQ(ip(out[1].bytes)->time_to_live, 1);
}

TEST(ElementsIp, DecIPTTLExpired) {
  auto to_icmp = make("DecIPTTL");
  std::string error;
  auto dropping = testing::make_element_connected("DecIPTTL", {}, 0b1, &error);
  ASSERT_NE(to_icmp, nullptr);
  ASSERT_NE(dropping, nullptr) << error;
  const std::vector<Frame> frames = {testing::ipv4_udp_frame(1, 2, 1),
                                     testing::ipv4_udp_frame(1, 2, 0)};
  auto out = run(*to_icmp, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(out[i].verdict.port(), DecIPTTL::kExpiredOutput);
    EXPECT_EQ(out[i].bytes, frames[i]);
  }
  EXPECT_EQ(results(*dropping, frames), (std::vector<std::string>{"ttl-expired", "ttl-expired"}));
}

// Random headers of every IHL, random contents and TTLs 2..255; the incremental update must equal
// a full recomputation.
TEST(ElementsIp, DecIPTTLIncrementalChecksumMatchesRandomHeaders) {
  auto e = make("DecIPTTL");
  ASSERT_NE(e, nullptr);
  constexpr int kHeaders = 20000;
  constexpr uint32_t kSeed = 1624;
  std::mt19937 rng(kSeed);
  std::uniform_int_distribution<int> byte(0, UINT8_MAX), ihl(RTE_IPV4_MIN_IHL, kMaxIhl),
      ttl(2, UINT8_MAX);
  std::vector<Frame> frames;
  for (int i = 0; i < kHeaders; ++i) {
    const uint32_t hlen = ihl(rng) * RTE_IPV4_IHL_MULTIPLIER;
    Frame f = testing::ether_frame(RTE_ETHER_TYPE_IPV4, RTE_ETHER_HDR_LEN + hlen);
    for (uint32_t k = RTE_ETHER_HDR_LEN; k < f.size(); ++k) f[k] = static_cast<uint8_t>(byte(rng));
    ip(f)->version_ihl = static_cast<uint8_t>(kVersion4 | hlen / RTE_IPV4_IHL_MULTIPLIER);
    ip(f)->time_to_live = static_cast<uint8_t>(ttl(rng));
    fix_checksum(f);
    frames.push_back(f);
  }
  auto out = run(*e, frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_EQ(out[i].verdict.port(), 0);
    ASSERT_EQ(out[i].bytes, decremented(frames[i])) << i;
  }
}

// Every value of the ident word of one header, so the checksum takes every value: inputs of
// 0x0000 (and its other form 0xFFFF) and outputs of 0x0000 all occur.
TEST(ElementsIp, DecIPTTLIncrementalChecksumEdgeCases) {
  auto e = make("DecIPTTL");
  ASSERT_NE(e, nullptr);
  std::vector<Frame> frames;
  for (uint32_t id = 0; id <= UINT16_MAX; ++id) {
    Frame f = udp_frame();
    ip(f)->packet_id = rte_cpu_to_be_16(static_cast<uint16_t>(id));
    fix_checksum(f);
    frames.push_back(f);
    if (checksum_field(f) == 0x0000) {
      set_checksum(f, 0xFFFF);
      frames.push_back(f);
    }
  }
  auto out = run(*e, frames);
  int in_zero = 0, in_ones = 0, out_zero = 0, out_ones = 0;
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_EQ(out[i].verdict.port(), 0);
    Frame expected = decremented(frames[i]);
    ASSERT_EQ(out[i].bytes, expected) << i;
    in_zero += checksum_field(frames[i]) == 0x0000;
    in_ones += checksum_field(frames[i]) == 0xFFFF;
    out_zero += checksum_field(expected) == 0x0000;
    out_ones += checksum_field(expected) == 0xFFFF;
  }
  EXPECT_GE(in_zero, 1);
  EXPECT_GE(in_ones, 1);
  EXPECT_GE(out_zero, 1);
  EXPECT_EQ(out_ones, 0);
}

TEST(ElementsIp, DecIPTTLTruncatedFrames) {
  auto e = make("DecIPTTL");
  ASSERT_NE(e, nullptr);
  const Frame f = udp_frame();
  const std::vector<Frame> frames = prefixes(f);
  auto out = run(*e, frames);
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n) {
    if (n < kMinIpFrame) {
      EXPECT_EQ(testing::drop_reason(*e, out[n].verdict), "truncated") << n;
    } else {
      EXPECT_EQ(out[n].verdict.port(), 0) << n;
      const Frame whole = decremented(f);
      EXPECT_EQ(out[n].bytes, Frame(whole.begin(), whole.begin() + n)) << n;
    }
  }
  EXPECT_EQ(testing::config_error("DecIPTTL", {"x"}),
            "test.click:1:1: test :: DecIPTTL: unexpected argument 'x'");
}

// ICMPError's output is checked against scapy in tests/e2e/test_ipv4_forward.py; here: what it
// refuses to answer, robustness, and configuration errors.
TEST(ElementsIp, ICMPErrorRefusesWhatRfc1812Forbids) {
  auto e = make("ICMPError", {"10.0.0.1", "11", "0"});
  ASSERT_NE(e, nullptr);
  const uint32_t host = RTE_IPV4(192, 168, 1, 1), dst = RTE_IPV4(172, 16, 0, 1);
  auto frame_from = [](uint32_t src, uint32_t to) { return testing::ipv4_udp_frame(src, to, 1); };
  const std::vector<Frame> frames = {
      frame_from(host, dst),                     // answered
      frame_from(host, RTE_IPV4(224, 0, 0, 5)),  // multicast destination
      frame_from(host, RTE_IPV4(255, 255, 255, 255)),
      frame_from(RTE_IPV4(127, 0, 0, 1), dst),  // loopback source
      frame_from(0, dst),
      frame_from(RTE_IPV4(240, 0, 0, 1), dst),  // class E source
  };
  auto out = run(*e, frames);
  EXPECT_EQ(out[0].verdict.port(), 0);
  for (size_t i = 1; i < frames.size(); ++i)
    EXPECT_EQ(testing::drop_reason(*e, out[i].verdict), "no-error-allowed") << i;
}

TEST(ElementsIp, ICMPErrorTruncatedFramesNeverCrash) {
  auto e = make("ICMPError", {"10.0.0.1", "3", "1"});
  ASSERT_NE(e, nullptr);
  const std::vector<Frame> frames = prefixes(udp_frame());
  auto out = run(*e, frames);
  for (uint32_t n = 0; n <= kMaxRobustLen; ++n) {
    if (n < kMinIpFrame)
      EXPECT_EQ(testing::drop_reason(*e, out[n].verdict), "truncated") << n;
    else
      EXPECT_EQ(out[n].verdict.port(), 0) << n;
  }
}

TEST(ElementsIp, ICMPErrorConfigErrors) {
  const std::string prefix = "test.click:1:1: test :: ICMPError: ";
  EXPECT_EQ(testing::config_error("ICMPError", {"10.0.0.1", "11"}),
            prefix + "CODE: missing required argument");
  EXPECT_EQ(testing::config_error("ICMPError", {"10.0.0", "11", "0"}),
            prefix + "SRC: expected an IPv4 address, got '10.0.0'");
  EXPECT_EQ(testing::config_error("ICMPError", {"10.0.0.1", "256", "0"}),
            prefix + "TYPE and CODE must be 0..255");
}

}  // namespace
}  // namespace fulcrum
