// IPsec security policy database (RFC 4301 4.4.1): the SPD file, first-match order, each
// selector, ports only for TCP/UDP, the default action, malformed packets through IPsecPolicy,
// file errors with FILE:LINE, and a reload.
#include "lib/ipsec_spd.hh"

#include <gtest/gtest.h>
#include <rte_ip.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "core/table_slot.hh"
#include "elements/ipsec/ipsec_esp_encap.hh"
#include "elements/ipsec/ipsec_policy.hh"
#include "lib/esp.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Bytes = std::vector<uint8_t>;
using namespace esp;

constexpr uint32_t kSrc = RTE_IPV4(10, 1, 2, 3);
constexpr uint32_t kDst = RTE_IPV4(10, 2, 0, 9);
constexpr uint32_t kFrameLen = 64;
constexpr uint32_t kIpOff = kEtherHdrLen;
constexpr uint32_t kL4Off = kEtherHdrLen + kIpv4HdrLen;

// Ethernet + IPv4 (protocol `proto`) + the first four L4 bytes: ports, or ICMP type and code.
Bytes frame(uint32_t src, uint32_t dst, uint8_t proto, uint16_t a = 0, uint16_t b = 0,
            uint32_t frame_len = kFrameLen) {
  Bytes f = testing::ipv4_udp_frame(src, dst, 64, frame_len);
  f[kIpOff + 9] = proto;
  if (proto == kIpProtoIcmp) {
    f[kL4Off] = static_cast<uint8_t>(a);
    f[kL4Off + 1] = static_cast<uint8_t>(b);
  } else {
    store_be16(f.data() + kL4Off, a);
    store_be16(f.data() + kL4Off + 2, b);
  }
  return f;
}

SpdPacket key(uint32_t src, uint32_t dst, uint8_t proto, uint16_t sport = 0, uint16_t dport = 0) {
  SpdPacket k;
  k.src = src;
  k.dst = dst;
  k.proto = proto;
  k.has_ports = proto == kIpProtoTcp || proto == kIpProtoUdp || proto == kIpProtoIcmp;
  k.sport = sport;
  k.dport = dport;
  return k;
}

std::shared_ptr<SpdTable> table(const std::string& text) {
  auto cfg = parse_spd_file(text, "spd.txt");
  EXPECT_TRUE(cfg) << cfg.error();
  return cfg ? SpdTable::build(std::move(cfg.value())) : nullptr;
}

std::string write_spd(const std::string& text) {
  static int n = 0;
  const std::string path = testing::temp_path("spd-" + std::to_string(n++) + ".txt");
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

TEST(IpsecSpd, ParsesRulesInOrder) {
  auto cfg = parse_spd_file(
      "# gateway policy\n"
      "BYPASS PROTO udp DPORT 500   # IKE\n"
      "\n"
      "PROTECT SRC 10.1.0.0/16 DST 10.2.0.0/16 PROTO tcp SPORT 1024-65535 DPORT any\n"
      "DISCARD PROTO icmp TYPE 8 CODE 0\n"
      "DEFAULT BYPASS\n"
      "PROTECT PROTO 47\n"
      "PROTECT SPI 0x2000\n"
      "PROTECT DST 10.3.0.0/16 SPI 4096\n",
      "spd.txt");
  ASSERT_TRUE(cfg) << cfg.error();
  ASSERT_EQ(cfg->rules.size(), 6u);
  ASSERT_EQ(cfg->lines.size(), 6u);
  EXPECT_EQ(cfg->default_action, SpdAction::kBypass);
  const SpdRule& ike = cfg->rules[0];
  EXPECT_EQ(ike.action, SpdAction::kBypass);
  EXPECT_EQ(cfg->lines[0], 2u);
  EXPECT_EQ(ike.proto, kIpProtoUdp);
  EXPECT_EQ(ike.src_mask, 0u);
  EXPECT_EQ(ike.dport_lo, 500);
  EXPECT_EQ(ike.dport_hi, 500);
  EXPECT_EQ(ike.sport_lo, 0);
  EXPECT_EQ(ike.sport_hi, 65535);
  EXPECT_TRUE(ike.ports);
  const SpdRule& tcp = cfg->rules[1];
  EXPECT_EQ(tcp.action, SpdAction::kProtect);
  EXPECT_EQ(cfg->lines[1], 4u);
  EXPECT_EQ(tcp.spi, 0u);
  EXPECT_EQ(tcp.src, RTE_IPV4(10, 1, 0, 0));
  EXPECT_EQ(tcp.src_mask, 0xFFFF0000u);
  EXPECT_EQ(tcp.dst, RTE_IPV4(10, 2, 0, 0));
  EXPECT_EQ(tcp.sport_lo, 1024);
  EXPECT_EQ(tcp.dport_hi, 65535);
  EXPECT_EQ(cfg->rules[2].action, SpdAction::kDiscard);
  EXPECT_EQ(cfg->rules[2].sport_lo, 8);
  EXPECT_EQ(cfg->rules[2].dport_hi, 0);
  EXPECT_EQ(cfg->rules[3].proto, 47);
  EXPECT_FALSE(cfg->rules[3].ports);
  EXPECT_EQ(cfg->lines[3], 7u);
  EXPECT_EQ(cfg->rules[4].spi, 0x2000u);
  EXPECT_EQ(cfg->rules[4].proto, kSpdAnyProto);
  EXPECT_EQ(cfg->rules[5].spi, 4096u);
  EXPECT_EQ(cfg->lines[5], 9u);
  auto empty = parse_spd_file("# nothing\n", "spd.txt");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->default_action, SpdAction::kDiscard);  // RFC 4301: unmatched is discarded
}

TEST(IpsecSpd, ErrorsNameFileAndLine) {
  const std::pair<std::string, std::string> cases[] = {
      {"ALLOW", "spd.txt:2: unknown action 'ALLOW'; expected 'PROTECT|BYPASS|DISCARD"},
      {"PROTECT SRC", "spd.txt:2: selector 'SRC' has no value"},
      {"PROTECT SRC 10.0.0.0", "spd.txt:2: SRC '10.0.0.0' is not A.B.C.D/LEN"},
      {"PROTECT DST 10.0.0.0/33", "spd.txt:2: DST '10.0.0.0/33' is not A.B.C.D/LEN"},
      {"PROTECT DST 10.0.0.1/8", "spd.txt:2: host bits set in DST 10.0.0.1/8"},
      {"PROTECT PROTO sctp", "spd.txt:2: PROTO 'sctp' is not any, tcp, udp, icmp, icmp6 or 0..255"},
      {"PROTECT PROTO 256", "spd.txt:2: PROTO '256' is not any"},
      {"PROTECT PROTO tcp DPORT 70000", "spd.txt:2: DPORT '70000' is not N, LO-HI or any"},
      {"PROTECT PROTO tcp SPORT 9-3", "spd.txt:2: SPORT '9-3': LO is above HI"},
      {"PROTECT PROTO tcp SPORT 1-", "spd.txt:2: SPORT '1-' is not N, LO-HI or any"},
      {"PROTECT DPORT 80", "spd.txt:2: SPORT and DPORT need PROTO tcp or udp"},
      {"PROTECT PROTO icmp DPORT 80", "spd.txt:2: SPORT and DPORT need PROTO tcp or udp"},
      {"PROTECT PROTO udp TYPE 3", "spd.txt:2: TYPE and CODE need PROTO icmp"},
      {"PROTECT PROTO icmp CODE 256", "spd.txt:2: CODE '256' is not N, LO-HI or any (0..255)"},
      {"PROTECT SRC 1.0.0.0/8 SRC 2.0.0.0/8", "spd.txt:2: selector SRC given twice"},
      {"PROTECT PORT 80", "spd.txt:2: unknown selector 'PORT' (SRC, DST, PROTO"},
      {"DEFAULT", "spd.txt:2: expected 'PROTECT|BYPASS|DISCARD"},
      {"BYPASS SPI 4096", "spd.txt:2: SPI names the SA of a PROTECT rule only"},
      {"PROTECT SPI 255", "spd.txt:2: SPI 255 is reserved (use 256..4294967295, RFC 4303 2.1)"},
      {"PROTECT SPI 0x", "spd.txt:2: SPI '0x' is not a number"},
      {"PROTECT SPI 4294967296", "spd.txt:2: SPI '4294967296' is not a number"},
      {"PROTECT SPI 4096 SPI 4097", "spd.txt:2: selector SPI given twice"},
      {"DEFAULT ALLOW", "spd.txt:2: DEFAULT 'ALLOW' is not PROTECT, BYPASS or DISCARD"},
      {"DEFAULT DISCARD\nDEFAULT BYPASS", "spd.txt:3: DEFAULT given twice (first on line 2)"},
  };
  for (const auto& [line, want] : cases) {
    auto r = parse_spd_file("BYPASS PROTO udp DPORT 500\n" + line + "\n", "spd.txt");
    ASSERT_FALSE(r) << line;
    EXPECT_EQ(r.error().rfind(want, 0), 0u) << r.error();
  }
  std::string many;
  for (size_t i = 0; i <= SpdTable::kMaxRules; ++i) many += "BYPASS\n";
  auto r = parse_spd_file(many, "spd.txt");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "spd.txt:" + std::to_string(SpdTable::kMaxRules + 1) + ": more than " +
                           std::to_string(SpdTable::kMaxRules) + " rules");
  auto missing = SpdTable::load("/nonexistent/spd.txt");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("/nonexistent/spd.txt"), std::string::npos) << missing.error();
}

TEST(IpsecSpd, FirstMatchWins) {
  auto t = table(
      "DISCARD SRC 10.1.2.0/24\n"
      "PROTECT SRC 10.1.0.0/16\n"
      "BYPASS  SRC 10.0.0.0/8\n");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->match(key(kSrc, kDst, kIpProtoUdp)), 0u);
  EXPECT_EQ(t->match(key(RTE_IPV4(10, 1, 9, 9), kDst, kIpProtoUdp)), 1u);
  EXPECT_EQ(t->match(key(RTE_IPV4(10, 9, 9, 9), kDst, kIpProtoUdp)), 2u);
  EXPECT_EQ(t->match(key(RTE_IPV4(11, 0, 0, 1), kDst, kIpProtoUdp)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->lookup(key(kSrc, kDst, kIpProtoUdp)), SpdAction::kDiscard);
  EXPECT_EQ(t->lookup(key(RTE_IPV4(10, 1, 9, 9), kDst, kIpProtoUdp)), SpdAction::kProtect);
  EXPECT_EQ(t->lookup(key(RTE_IPV4(11, 0, 0, 1), kDst, kIpProtoUdp)), SpdAction::kDiscard);
  // The same rules in the other order: the broad rule shadows the others.
  auto r = table("BYPASS SRC 10.0.0.0/8\nDISCARD SRC 10.1.2.0/24\n");
  EXPECT_EQ(r->lookup(key(kSrc, kDst, kIpProtoUdp)), SpdAction::kBypass);
}

TEST(IpsecSpd, EachSelectorField) {
  auto t = table(
      "PROTECT DST 10.2.0.0/16\n"                       // 0
      "PROTECT PROTO tcp SPORT 1000-1999\n"             // 1
      "PROTECT PROTO udp DPORT 53\n"                    // 2
      "PROTECT PROTO icmp TYPE 8 CODE 0\n"              // 3
      "PROTECT PROTO icmp TYPE 3-5\n"                   // 4
      "PROTECT PROTO 47\n"                              // 5
      "PROTECT SRC 192.168.0.0/16 DST 172.16.0.0/12\n"  // 6
      "DEFAULT BYPASS\n");
  ASSERT_NE(t, nullptr);
  const uint32_t other = RTE_IPV4(8, 8, 8, 8);
  EXPECT_EQ(t->match(key(other, RTE_IPV4(10, 2, 255, 255), kIpProtoUdp)), 0u);
  EXPECT_EQ(t->match(key(other, RTE_IPV4(10, 3, 0, 0), kIpProtoUdp)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->match(key(other, other, kIpProtoTcp, 1000, 1)), 1u);
  EXPECT_EQ(t->match(key(other, other, kIpProtoTcp, 1999, 1)), 1u);
  EXPECT_EQ(t->match(key(other, other, kIpProtoTcp, 999, 1)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->match(key(other, other, kIpProtoTcp, 2000, 1)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->match(key(other, other, kIpProtoUdp, 1000, 1)), SpdTable::kDefaultRule);  // proto
  EXPECT_EQ(t->match(key(other, other, kIpProtoUdp, 7, 53)), 2u);
  EXPECT_EQ(t->match(key(other, other, kIpProtoUdp, 53, 7)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->match(key(other, other, kIpProtoTcp, 7, 53)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->match(key(other, other, kIpProtoIcmp, 8, 0)), 3u);
  EXPECT_EQ(t->match(key(other, other, kIpProtoIcmp, 8, 1)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->match(key(other, other, kIpProtoIcmp, 0, 0)), SpdTable::kDefaultRule);
  EXPECT_EQ(t->match(key(other, other, kIpProtoIcmp, 4, 13)), 4u);
  EXPECT_EQ(t->match(key(other, other, 47)), 5u);
  EXPECT_EQ(t->match(key(RTE_IPV4(192, 168, 1, 1), RTE_IPV4(172, 31, 0, 1), 50)), 6u);
  EXPECT_EQ(t->match(key(RTE_IPV4(192, 168, 1, 1), RTE_IPV4(172, 32, 0, 1), 50)),
            SpdTable::kDefaultRule);
  // Without ports (a non-initial fragment), port and type rules do not match; the others do.
  SpdPacket frag = key(other, other, kIpProtoUdp, 7, 53);
  frag.has_ports = false;
  EXPECT_EQ(t->match(frag), SpdTable::kDefaultRule);
  frag.dst = RTE_IPV4(10, 2, 0, 1);
  EXPECT_EQ(t->match(frag), 0u);
}

// --- the element ---------------------------------------------------------------------------

std::vector<std::string> outcomes(const Element& e, const std::vector<Verdict>& v) {
  std::vector<std::string> out;
  for (const Verdict& x : v)
    out.push_back(x.is_drop() ? std::string(testing::drop_reason(e, x))
                              : "out" + std::to_string(x.port()));
  return out;
}

std::vector<std::string> run(Element& e, const std::vector<Bytes>& frames) {
  PacketBatch batch;
  auto v = testing::run_batch(e, batch, frames);
  testing::free_batch(batch);
  return outcomes(e, v);
}

const char* const kGatewaySpd =
    "BYPASS  PROTO udp DPORT 500\n"
    "DISCARD PROTO tcp DPORT 23\n"
    "PROTECT SRC 10.1.0.0/16 DST 10.2.0.0/16\n"
    "BYPASS  PROTO icmp TYPE 8\n";

TEST(IPsecPolicy, OutputsPerAction) {
  auto e = testing::make_or_fail("IPsecPolicy", {write_spd(kGatewaySpd)});
  ASSERT_NE(e, nullptr);
  const uint32_t outside = RTE_IPV4(203, 0, 113, 5);
  EXPECT_EQ(
      run(*e, {frame(kSrc, kDst, kIpProtoUdp, 500, 500),   // IKE in the clear
               frame(kSrc, kDst, kIpProtoTcp, 4000, 23),   // telnet
               frame(kSrc, kDst, kIpProtoTcp, 4000, 80),   // protected
               frame(kSrc, kDst, kIpProtoUdp, 4000, 501),  // protected
               frame(outside, kDst, kIpProtoIcmp, 8, 0),   // echo request
               frame(outside, kDst, kIpProtoIcmp, 0, 0),   // default
               frame(outside, kDst, kIpProtoUdp, 1, 2)}),  // default
      (std::vector<std::string>{"out1", "discard", "out0", "out0", "out1", "discard", "discard"}));
  auto bypass = testing::make_or_fail("IPsecPolicy",
                                      {write_spd(std::string(kGatewaySpd) + "DEFAULT BYPASS\n")});
  EXPECT_EQ(run(*bypass, {frame(outside, kDst, kIpProtoUdp, 1, 2)}),
            (std::vector<std::string>{"out1"}));
}

TEST(IPsecPolicy, MalformedPacketsAndFragments) {
  auto e = testing::make_or_fail("IPsecPolicy", {write_spd(kGatewaySpd)});
  ASSERT_NE(e, nullptr);
  Bytes bad_version = frame(kSrc, kDst, kIpProtoUdp);
  bad_version[kIpOff] = 0x65;
  Bytes bad_ihl = frame(kSrc, kDst, kIpProtoUdp);
  bad_ihl[kIpOff] = 0x44;
  Bytes too_long = frame(kSrc, kDst, kIpProtoUdp);
  store_be16(too_long.data() + kIpOff + 2, kFrameLen);  // 14 bytes beyond the frame
  Bytes under_ihl = frame(kSrc, kDst, kIpProtoUdp);
  store_be16(under_ihl.data() + kIpOff + 2, kIpv4HdrLen - 1);
  const Bytes full = frame(kSrc, kDst, kIpProtoUdp);
  const Bytes short_frame(full.begin(), full.begin() + kEtherHdrLen + kIpv4HdrLen - 1);
  Bytes no_ports = frame(kSrc, kDst, kIpProtoTcp, 4000, 23);
  store_be16(no_ports.data() + kIpOff + 2, kIpv4HdrLen + 3);
  Bytes no_type = frame(kSrc, kDst, kIpProtoIcmp, 8, 0);
  store_be16(no_type.data() + kIpOff + 2, kIpv4HdrLen + 1);
  // A later fragment of telnet: no ports, so the port rules pass it by; the prefix rule takes it.
  Bytes later = frame(kSrc, kDst, kIpProtoTcp, 4000, 23);
  store_be16(later.data() + kIpOff + 6, 0x0010);
  Bytes later_outside = frame(RTE_IPV4(203, 0, 113, 5), kDst, kIpProtoUdp, 500, 500);
  store_be16(later_outside.data() + kIpOff + 6, 0x0010);
  // A first fragment has its ports.
  Bytes first = frame(kSrc, kDst, kIpProtoTcp, 4000, 23);
  store_be16(first.data() + kIpOff + 6, 0x2000);
  EXPECT_EQ(
      run(*e, {testing::ether_frame(0x0806), testing::ether_frame(0x86DD), bad_version, bad_ihl,
               too_long, under_ihl, short_frame, no_ports, no_type, later, later_outside, first}),
      (std::vector<std::string>{"not-ip", "not-ip", "not-ip", "not-ip", "not-ip", "not-ip",
                                "not-ip", "truncated", "truncated", "out0", "discard", "discard"}));
  EXPECT_EQ(run(*e, testing::prefixes(frame(kSrc, kDst, kIpProtoTcp, 1, 80), kFrameLen)).back(),
            "out0");  // every prefix of a frame: no crash, the whole frame protected
}

TEST(IPsecPolicy, ConfigErrorsAndReload) {
  EXPECT_NE(testing::config_error("IPsecPolicy", {}), "(no error)");
  const std::string bad = write_spd("PROTECT\nBYPASS PROTO tcp TYPE 3\n");
  EXPECT_NE(
      testing::config_error("IPsecPolicy", {bad}).find(bad + ":2: TYPE and CODE need PROTO icmp"),
      std::string::npos)
      << testing::config_error("IPsecPolicy", {bad});
  auto e = testing::make_or_fail("IPsecPolicy", {write_spd("PROTECT DST 10.2.0.0/16\n")});
  ASSERT_NE(e, nullptr);
  const Bytes f = frame(kSrc, kDst, kIpProtoUdp, 1, 2);
  EXPECT_EQ(run(*e, {f}), (std::vector<std::string>{"out0"}));
  auto old = e->table_slot()->replace(write_spd("BYPASS DST 10.2.0.0/16\n"));
  ASSERT_TRUE(old) << old.error();
  EXPECT_EQ(run(*e, {f}), (std::vector<std::string>{"out1"}));
  auto failed = e->table_slot()->replace(bad);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.error().rfind(bad + ":2: ", 0), 0u) << failed.error();
  EXPECT_EQ(run(*e, {f}), (std::vector<std::string>{"out1"}));  // the table in service stays
}

// A PROTECT rule naming its SA: IPsecPolicy puts the SPI in user[4], IPsecESPEncap(POLICY_SPI
// true) uses that SA instead of the destination's; 0 (a rule without SPI) keeps the selector.
TEST(IPsecPolicy, ProtectNamesTheSaBySpi) {
  const std::string keys =
      "2b7e151628aed2a6abf7158809cf4f3cdeadbeef 0102030405060708090a0b0c0d0e0f1011121314";
  const std::string sa =
      write_spd("4096 192.0.2.1 198.51.100.1 " + keys + " 10.0.0.0/8 DIR out\n" +
                "8192 192.0.2.1 198.51.100.2 " + keys + " 10.2.0.0/16 DIR out\n");
  auto policy =
      testing::make_or_fail("IPsecPolicy", {write_spd("PROTECT SPI 8192 PROTO tcp DPORT 22\n"
                                                      "PROTECT SPI 9999 PROTO tcp DPORT 23\n"
                                                      "PROTECT\n")});
  auto by_spi = testing::make_or_fail("IPsecESPEncap", {sa, "POLICY_SPI true"});
  auto by_dst = testing::make_or_fail("IPsecESPEncap", {sa});
  ASSERT_TRUE(policy && by_spi && by_dst);
  const uint32_t dst8 = RTE_IPV4(10, 8, 0, 1);
  const std::vector<Bytes> frames = {
      frame(kSrc, dst8, kIpProtoTcp, 1, 22),  // SA 8192 by SPI, though 10.8/16 selects 4096
      frame(kSrc, dst8, kIpProtoUdp, 1, 22),  // no SPI: the selector's SA 4096
      frame(kSrc, kDst, kIpProtoUdp, 1, 22),  // no SPI: the selector's SA 8192
      frame(kSrc, dst8, kIpProtoTcp, 1, 23),  // SPI 9999: no such SA
  };
  for (const auto& [encap, want_spis] :
       {std::pair{by_spi.get(), std::vector<uint32_t>{8192, 4096, 8192, 0}},
        std::pair{by_dst.get(), std::vector<uint32_t>{4096, 4096, 8192, 4096}}}) {
    PacketBatch batch;
    auto v = testing::run_batch(*policy, batch, frames);
    EXPECT_EQ(anno(batch.at(0)).user[kPolicySpiSlot], 8192u);
    EXPECT_EQ(anno(batch.at(1)).user[kPolicySpiSlot], 0u);
    for (const Verdict& x : v) EXPECT_EQ(x.port(), IPsecPolicy::kProtectOutput);
    encap->process_batch(batch);
    for (uint32_t i = 0; i < frames.size(); ++i) {
      if (want_spis[i] == 0) {
        EXPECT_EQ(testing::drop_reason(*encap, batch.result(i)), "no-sa") << i;
        continue;
      }
      ASSERT_FALSE(batch.result(i).is_drop()) << i;
      EXPECT_EQ(load_be32(data(batch.at(i)) + kEtherHdrLen + kIpv4HdrLen), want_spis[i]) << i;
    }
    testing::free_batch(batch);
  }
}

}  // namespace
}  // namespace fulcrum
