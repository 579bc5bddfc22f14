// IPsec over IPv6: SA files with IPv6 tunnel endpoints and selectors, the four tunnel
// combinations (4in4, 4in6, 6in4, 6in6) through IPsecESPEncap -> IPsecAES -> IPsecAuthHMACSHA1
// -> IPsecESPDecap for each cipher, outer IPv6 extension headers, RFC 6040 over IPv6, lifetimes
// in bytes of IPv6 packets, IPsecESPEncap's MTU key and ICMPError(MTU anno), and the policy
// database's IPv6 selectors. scapy checks the same against its own ESP (tests/e2e/test_ipsec6.py).
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/batch.hh"
#include "elements/ip6/icmp6_error.hh"
#include "elements/ipsec/ipsec_esp_decap.hh"
#include "lib/esp.hh"
#include "lib/ip6_ext.hh"
#include "lib/ipsec_sa.hh"
#include "lib/ipsec_spd.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Bytes = std::vector<uint8_t>;
using namespace esp;

const char* const kCtrKey = "2b7e151628aed2a6abf7158809cf4f3cdeadbeef";
const char* const kCbcKey = "06a9214036b8a15b512e03d534120006";
const char* const kGcmKey = "feffe9928665731c6d6a8f9467308308cafebabe";
const char* const kAuthKey = "0102030405060708090a0b0c0d0e0f1011121314";
const char* const kTunnel4Src = "192.0.2.1";
const char* const kTunnel4Dst = "198.51.100.1";
const char* const kTunnel6Src = "2001:db8:ffff::1";
const char* const kTunnel6Dst = "2001:db8:eeee::2";
constexpr uint32_t kInner4Src = RTE_IPV4(10, 9, 9, 9);
constexpr uint32_t kUdpHdrLen = 8;
constexpr uint8_t kProtoUdp = 17;
constexpr uint8_t kHopLimit = 64;
constexpr uint8_t kDscpEf = 0xB8;
constexpr uint32_t kUdpPayloadByte = 0x5A;
constexpr uint32_t kFrameSizes[] = {64, 65, 66, 67, 100, 255, 511, 1000, 1400, 1514};

Bytes addr6(const char* text) {
  Bytes a(kIp6AddrLen);
  EXPECT_EQ(inet_pton(AF_INET6, text, a.data()), 1) << text;
  return a;
}

// Ethernet + IPv6 (traffic class `tc`) + UDP, `frame_len` bytes in all, payload from `seed`.
Bytes ipv6_udp_frame(const char* src, const char* dst, uint32_t frame_len, uint8_t tc = 0,
                     uint32_t seed = 1) {
  Bytes f(frame_len, 0);
  const uint8_t macs[12] = {0x02, 0xbb, 0, 0, 0, 1, 0x02, 0xaa, 0, 0, 0, 1};
  std::memcpy(f.data(), macs, sizeof macs);
  store_be16(f.data() + kEtherTypeOffset, kEtherTypeIpv6);
  uint8_t* ip = f.data() + kEtherHdrLen;
  store_be32(ip, uint32_t{kIpv6Version} << 28 | uint32_t{tc} << 20 | 0x12345);
  const uint32_t payload = frame_len - kEtherHdrLen - kIpv6HdrLen;
  store_be16(ip + kIpv6PayloadLenOffset, static_cast<uint16_t>(payload));
  ip[kIpv6NextHeaderOffset] = kProtoUdp;
  ip[kIpv6HopLimitOffset] = kHopLimit;
  std::memcpy(ip + kIpv6SrcOffset, addr6(src).data(), kIp6AddrLen);
  std::memcpy(ip + kIpv6DstOffset, addr6(dst).data(), kIp6AddrLen);
  uint8_t* udp = ip + kIpv6HdrLen;
  store_be16(udp, 4500);
  store_be16(udp + 2, 4501);
  store_be16(udp + 4, static_cast<uint16_t>(payload));
  std::mt19937 rng(seed);
  for (uint32_t i = kUdpHdrLen; i < payload; ++i) udp[i] = static_cast<uint8_t>(rng());
  return f;
}

Bytes ipv4_frame(uint32_t dst, uint32_t frame_len, uint8_t tos = 0, bool df = false) {
  Bytes f = testing::ipv4_udp_frame(kInner4Src, dst, kHopLimit, frame_len);
  uint8_t* ip = f.data() + kEtherHdrLen;
  ip[1] = tos;
  if (df) store_be16(ip + 6, 0x4000);
  for (uint32_t i = kIpv4HdrLen + kUdpHdrLen; i < frame_len - kEtherHdrLen; ++i)
    ip[i] = static_cast<uint8_t>(i * kUdpPayloadByte);
  store_be16(ip + 10, 0);
  const uint16_t ck = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(ip));
  std::memcpy(ip + 10, &ck, sizeof ck);
  return f;
}

// `f` (Ethernet + IPv6) with the 8 bytes `h` inserted after the fixed header as the first
// extension header of type `type`: next header and payload length updated.
Bytes insert_ext(const Bytes& f, uint8_t type, const uint8_t* h) {
  constexpr uint32_t kExtLen = 8, kFixed = kEtherHdrLen + kIpv6HdrLen;
  Bytes out(f.size() + kExtLen);
  std::memcpy(out.data(), f.data(), kFixed);
  std::memcpy(out.data() + kFixed, h, kExtLen);
  std::memcpy(out.data() + kFixed + kExtLen, f.data() + kFixed, f.size() - kFixed);
  uint8_t* ip = out.data() + kEtherHdrLen;
  out[kFixed] = ip[kIpv6NextHeaderOffset];
  ip[kIpv6NextHeaderOffset] = type;
  store_be16(ip + kIpv6PayloadLenOffset,
             static_cast<uint16_t>(load_be16(ip + kIpv6PayloadLenOffset) + kExtLen));
  return out;
}

std::string write_file(const std::string& text) {
  static int n = 0;
  const std::string path = testing::temp_path("ipsec6-" + std::to_string(n++) + ".txt");
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

struct Cipher {
  const char* name;
  std::string material, auth, option;
};

const Cipher kCiphers[] = {
    {"ctr", kCtrKey, kAuthKey, ""},
    {"cbc", kCbcKey, kAuthKey, ""},
    {"gcm", kGcmKey, "-", "CIPHER aes-gcm"},
};

// One SA both ways: tunnel of `outer6`'s family, selector of `inner6`'s.
std::string sa_lines(uint32_t spi, const Cipher& c, bool outer6, bool inner6,
                     const std::string& extra = "") {
  const std::string head = std::to_string(spi) + " " + (outer6 ? kTunnel6Src : kTunnel4Src) + " " +
                           (outer6 ? kTunnel6Dst : kTunnel4Dst) + " " + c.material + " " + c.auth +
                           " ";
  const std::string sel = inner6 ? "2001:db8:1::/48" : "10.0.0.0/8";
  return head + sel + " DIR out " + c.option + " " + extra + "\n" + head + "::/0 DIR in " +
         c.option + " " + extra + "\n";
}

struct Gateway {
  explicit Gateway(const std::string& file, const std::vector<std::string>& encap_args = {})
      : encap(testing::make_or_fail("IPsecESPEncap", with(file, encap_args))),
        aes(testing::make_or_fail("IPsecAES", {file})),
        hmac(testing::make_or_fail("IPsecAuthHMACSHA1", {file})),
        decap(testing::make_or_fail("IPsecESPDecap", {file})) {}
  static std::vector<std::string> with(const std::string& file, std::vector<std::string> args) {
    args.insert(args.begin(), file);
    return args;
  }
  std::unique_ptr<Element> encap, aes, hmac, decap;
};

// Runs `e` on the live packets; drops are freed and excluded as the graph does.
std::vector<Verdict> step(Element& e, PacketBatch& batch) {
  e.process_batch(batch);
  std::vector<Verdict> out;
  for (uint32_t i = 0; i < batch.count(); ++i) {
    out.push_back(batch.excluded(i) ? Verdict::out(0) : batch.result(i));
    if (!batch.excluded(i) && batch.result(i).is_drop()) {
      rte_pktmbuf_free(batch.at(i));
      batch.exclude(i);
    }
  }
  return out;
}

std::vector<Bytes> collect(PacketBatch& batch, size_t n) {
  std::vector<Bytes> out(n);
  batch.for_each([&](uint32_t i, Packet* p) { out[i] = testing::packet_bytes(p); });
  testing::free_batch(batch);
  return out;
}

std::vector<Bytes> encrypt(Gateway& g, const std::vector<Bytes>& frames,
                           std::vector<Verdict>* verdicts = nullptr) {
  PacketBatch batch;
  const std::vector<Verdict> v = testing::run_batch(*g.encap, batch, frames);
  if (verdicts != nullptr) *verdicts = v;
  step(*g.aes, batch);
  step(*g.hmac, batch);
  return collect(batch, frames.size());
}

std::vector<Bytes> decrypt(Gateway& g, const std::vector<Bytes>& frames,
                           std::vector<Verdict>* verdicts = nullptr) {
  PacketBatch batch;
  const std::vector<Verdict> v = testing::run_batch(*g.decap, batch, frames);
  if (verdicts != nullptr) *verdicts = v;
  return collect(batch, frames.size());
}

// --- SA file -------------------------------------------------------------------------------

TEST(IpsecSa6, ParsesIpv6TunnelsAndSelectors) {
  auto sas = parse_sa_file("4096 2001:db8::1 2001:db8::2 " + std::string(kCtrKey) + " " + kAuthKey +
                               " 2001:db8:1::/48 DIR out\n"
                               "4097 192.0.2.1 198.51.100.1 " +
                               kCtrKey + " " + kAuthKey +
                               " 2001:db8:2::/64 out\n"
                               "4098 2001:db8::1 2001:db8::2 " +
                               kCtrKey + " " + kAuthKey + " 10.0.0.0/8 out\n",
                           "sa.txt");
  ASSERT_TRUE(sas) << sas.error();
  ASSERT_EQ(sas->size(), 3u);
  const SaConfig& a = (*sas)[0];
  EXPECT_TRUE(a.tunnel6);
  EXPECT_EQ(Bytes(a.tunnel_src6, a.tunnel_src6 + kIp6AddrLen), addr6("2001:db8::1"));
  EXPECT_EQ(Bytes(a.tunnel_dst6, a.tunnel_dst6 + kIp6AddrLen), addr6("2001:db8::2"));
  EXPECT_TRUE(a.selector_is6);
  EXPECT_EQ(a.selector6, Addr6::from_bytes(addr6("2001:db8:1::").data()));
  EXPECT_EQ(a.selector_len, 48);
  EXPECT_EQ(a.outer_hdr_len(), kIpv6HdrLen);
  EXPECT_FALSE((*sas)[1].tunnel6);
  EXPECT_TRUE((*sas)[1].selector_is6);
  EXPECT_TRUE((*sas)[2].tunnel6);
  EXPECT_FALSE((*sas)[2].selector_is6);
  EXPECT_EQ((*sas)[2].selector, RTE_IPV4(10, 0, 0, 0));
}

TEST(IpsecSa6, ErrorsNameFileAndLine) {
  const std::string keys = std::string(kCtrKey) + " " + kAuthKey;
  const std::pair<std::string, std::string> cases[] = {
      {"4097 192.0.2.1 2001:db8::2 " + keys + " 10.0.0.0/8",
       "sa.txt:2: tunnel source '192.0.2.1' and destination '2001:db8::2' are not the same "
       "address family (expected two IPv4 or two IPv6 addresses)"},
      {"4097 2001:db8::1 198.51.100.1 " + keys + " 10.0.0.0/8",
       "sa.txt:2: tunnel source '2001:db8::1' and destination '198.51.100.1' are not the same"},
      {"4097 2001:db8:::1 2001:db8::2 " + keys + " 10.0.0.0/8",
       "sa.txt:2: tunnel source '2001:db8:::1' is not an IPv4 or IPv6 address"},
      {"4097 2001:db8::1 2001:zz8::2 " + keys + " 10.0.0.0/8",
       "sa.txt:2: tunnel destination '2001:zz8::2' is not an IPv4 or IPv6 address"},
      {"4097 2001:db8::1 2001:db8::2 " + keys + " 2001:db8::/129",
       "sa.txt:2: selector '2001:db8::/129': IPv6 prefix length above 128"},
      {"4097 2001:db8::1 2001:db8::2 " + keys + " 2001:db8::1/64",
       "sa.txt:2: host bits set in selector 2001:db8::1/64"},
      {"4097 2001:db8::1 2001:db8::2 " + keys + " 2001:db8::",
       "sa.txt:2: selector '2001:db8::' is not A.B.C.D/LEN or X:X::X/LEN"},
      {"4097 2001:db8::1 2001:db8::2 " + keys + " 2001:db8:1::/48",
       "sa.txt:2: duplicate selector 2001:db8:1::/48 (first on line 1)"},
  };
  for (const auto& [line, want] : cases) {
    const std::string text =
        "4096 2001:db8::1 2001:db8::2 " + keys + " 2001:db8:1::/48\n" + line + "\n";
    auto r = parse_sa_file(text, "sa.txt");
    ASSERT_FALSE(r) << line;
    EXPECT_EQ(r.error().rfind(want, 0), 0u) << r.error();
  }
  // The same bits in both families are two selectors; ::/0 and 0.0.0.0/0 together are fine.
  EXPECT_TRUE(parse_sa_file(
      "4096 1.2.3.4 5.6.7.8 " + keys + " 0.0.0.0/0\n4097 1.2.3.4 5.6.7.8 " + keys + " ::/0\n",
      "sa.txt"));
}

// The IPv6 selector lookup, by scan (few SAs) and by Ip6Table (many), against brute force.
TEST(IpsecSa6, SelectorLongestPrefixMatch) {
  const std::string keys = std::string(kCtrKey) + " " + kAuthKey;
  std::mt19937_64 rng(6);
  for (size_t count : {size_t{5}, size_t{40}}) {
    std::string text;
    std::vector<std::pair<Addr6, uint32_t>> prefixes;
    std::map<std::pair<Addr6, uint32_t>, bool> seen;
    const Addr6 base = Addr6::from_bytes(addr6("2001:db8::").data());
    while (prefixes.size() < count) {
      const uint32_t len = 32 + static_cast<uint32_t>(rng() % 97);
      const Addr6 p = Addr6{base.hi | (rng() & 0xFFFFFFFFull), rng()}.masked(len);
      if (!seen.emplace(std::pair{p, len}, true).second) continue;
      uint8_t b[kIp6AddrLen];
      p.to_bytes(b);
      char s[INET6_ADDRSTRLEN];
      inet_ntop(AF_INET6, b, s, sizeof s);
      text += std::to_string(4096 + prefixes.size()) + " 2001:db8::1 2001:db8::2 " + keys + " " +
              s + "/" + std::to_string(len) + "\n";
      prefixes.emplace_back(p, len);
    }
    auto t = SaTable::build(parse_sa_file(text, "sa.txt").value(), "sa.txt");
    ASSERT_TRUE(t) << t.error();
    for (int k = 0; k < 2000; ++k) {
      // Half the probes inside a prefix, with random low bits.
      const auto& [p, len] = prefixes[rng() % prefixes.size()];
      Addr6 a = k % 2 ? Addr6{p.hi | (rng() & ~Addr6::hi_mask(len)),
                              p.lo | (rng() & ~Addr6::lo_mask(len))}
                      : Addr6{base.hi | (rng() & 0xFFFFFFFFull), rng()};
      uint16_t want = SaTable::kNoSa;
      uint32_t best = 0;
      for (size_t i = 0; i < prefixes.size(); ++i)
        if (a.masked(prefixes[i].second) == prefixes[i].first &&
            (want == SaTable::kNoSa || prefixes[i].second > best)) {
          want = static_cast<uint16_t>(i);
          best = prefixes[i].second;
        }
      uint8_t b[kIp6AddrLen];
      a.to_bytes(b);
      ASSERT_EQ((*t)->lookup_out6(b), want) << count << " selectors, probe " << k;
    }
    uint8_t v4_mapped[kIp6AddrLen] = {};
    EXPECT_EQ((*t)->lookup_out(RTE_IPV4(10, 0, 0, 1)), SaTable::kNoSa);
    EXPECT_EQ((*t)->lookup_out6(v4_mapped), SaTable::kNoSa);
  }
}

// inner_mtu(): the longest inner packet that fits, per cipher and outer family.
TEST(IpsecSa6, InnerMtuIsTheLongestFittingPacket) {
  for (const Cipher& c : kCiphers) {
    for (bool outer6 : {false, true}) {
      const std::string text = sa_lines(4096, c, outer6, false);
      auto sas = parse_sa_file(text, "sa.txt");
      ASSERT_TRUE(sas) << sas.error();
      const SaConfig& sa = (*sas)[0];
      for (uint32_t mtu : {576u, 1280u, 1500u, 9000u}) {
        const uint32_t inner = sa.inner_mtu(mtu);
        auto outer = [&](uint32_t n) {
          return sa.prepend_len() + n + pad_len(n, sa.align()) + kTrailerLen + sa.icv_len();
        };
        EXPECT_LE(outer(inner), mtu) << c.name << " " << outer6 << " " << mtu;
        for (uint32_t more = 1; more <= sa.align(); ++more)
          EXPECT_GT(outer(inner + more), mtu) << c.name << " " << outer6 << " " << mtu;
      }
    }
  }
}

// --- encapsulation and decapsulation ---------------------------------------------------------

// Every cipher, every tunnel combination: the outer header, the ESP trailer's next header, and
// the round trip back to the same frames (EtherType included).
TEST(IPsecESP6, FourCombinationsEveryCipherRoundTrip) {
  for (const Cipher& c : kCiphers) {
    for (bool outer6 : {false, true}) {
      for (bool inner6 : {false, true}) {
        const std::string what =
            std::string(c.name) + (inner6 ? " 6in" : " 4in") + (outer6 ? "6" : "4");
        Gateway g(write_file(sa_lines(4096, c, outer6, inner6)));
        std::vector<Bytes> frames;
        for (uint32_t size : kFrameSizes) {
          const uint8_t tc = static_cast<uint8_t>(kDscpEf | (size % 4));
          frames.push_back(inner6
                               ? ipv6_udp_frame("2001:db8:9::9", "2001:db8:1:5::7", size, tc, size)
                               : ipv4_frame(RTE_IPV4(10, 1, 2, 3), size, tc));
        }
        std::vector<Verdict> v;
        const std::vector<Bytes> esp = encrypt(g, frames, &v);
        for (size_t i = 0; i < frames.size(); ++i) {
          ASSERT_FALSE(v[i].is_drop()) << what << " " << testing::drop_reason(*g.encap, v[i]);
          const Bytes& o = esp[i];
          const uint8_t* ip = o.data() + kEtherHdrLen;
          const uint8_t tc = frames[i][kEtherHdrLen + 1];
          const uint8_t inner_tc =
              inner6 ? ipv6_traffic_class(frames[i].data() + kEtherHdrLen) : tc;
          EXPECT_EQ(std::memcmp(o.data(), frames[i].data(), kEtherTypeOffset), 0) << what;
          if (outer6) {
            EXPECT_EQ(load_be16(o.data() + kEtherTypeOffset), kEtherTypeIpv6) << what;
            EXPECT_EQ(load_be32(ip), 0x60000000u | uint32_t{inner_tc} << 20) << what;
            EXPECT_EQ(load_be16(ip + kIpv6PayloadLenOffset), o.size() - kEtherHdrLen - kIpv6HdrLen);
            EXPECT_EQ(ip[kIpv6NextHeaderOffset], kIpProtoEsp);
            EXPECT_EQ(ip[kIpv6HopLimitOffset], kOuterTtl);
            EXPECT_EQ(Bytes(ip + kIpv6SrcOffset, ip + kIpv6SrcOffset + 16), addr6(kTunnel6Src));
            EXPECT_EQ(Bytes(ip + kIpv6DstOffset, ip + kIpv6DstOffset + 16), addr6(kTunnel6Dst));
          } else {
            EXPECT_EQ(load_be16(o.data() + kEtherTypeOffset), kEtherTypeIpv4) << what;
            EXPECT_EQ(ip[0], kIpv4VersionIhl);
            EXPECT_EQ(ip[1], inner_tc) << what;
            EXPECT_EQ(ip[9], kIpProtoEsp);
            EXPECT_EQ(load_be16(ip + 2), o.size() - kEtherHdrLen);
            EXPECT_EQ(rte_raw_cksum(ip, kIpv4HdrLen), 0xFFFF);
          }
          const uint32_t esp_off = kEtherHdrLen + (outer6 ? kIpv6HdrLen : kIpv4HdrLen);
          EXPECT_EQ(load_be32(o.data() + esp_off), 4096u);
          EXPECT_EQ(load_be32(o.data() + esp_off + 4), i + 1);
        }
        const std::vector<Bytes> back = decrypt(g, esp, &v);
        for (size_t i = 0; i < frames.size(); ++i) {
          ASSERT_FALSE(v[i].is_drop()) << what << " " << testing::drop_reason(*g.decap, v[i]);
          EXPECT_EQ(back[i], frames[i]) << what << " frame " << i;
        }
      }
    }
  }
}

// Outer IPv6 extension headers: options before ESP are walked, a fragment header is named, a
// routing header with segments left is not ours to decapsulate.
TEST(IPsecESPDecap6, OuterExtensionHeaders) {
  Gateway g(write_file(sa_lines(4096, kCiphers[0], true, true)));
  std::vector<Bytes> frames;
  for (int i = 0; i < 6; ++i)
    frames.push_back(ipv6_udp_frame("2001:db8:9::9", "2001:db8:1::7", 200, 0, i));
  const std::vector<Bytes> esp = encrypt(g, frames);
  // The ESP packet with one 8-byte extension header of type `type` before ESP.
  auto with_ext = [](const Bytes& f, uint8_t type, uint8_t b2, uint8_t b3) {
    const uint8_t ext[8] = {0, 0, b2, b3, 0, 0, 0, 0};
    return insert_ext(f, type, ext);
  };
  constexpr uint8_t kPadN = 1;  // a PadN option filling the destination options header
  Bytes not_esp = esp[5];
  not_esp[kEtherHdrLen + kIpv6NextHeaderOffset] = kProtoUdp;
  std::vector<Verdict> v;
  const std::vector<Bytes> back =
      decrypt(g,
              {with_ext(esp[0], kIp6DestOptions, kPadN, 4),
               with_ext(esp[1], kIp6HopByHop, kPadN, 4), with_ext(esp[2], kIp6Routing, 0, 0),
               with_ext(esp[3], kIp6Fragment, 0, 1), with_ext(esp[4], kIp6Routing, 0, 1), not_esp},
              &v);
  for (int i = 0; i < 3; ++i) {
    ASSERT_FALSE(v[i].is_drop()) << i << " " << testing::drop_reason(*g.decap, v[i]);
    EXPECT_EQ(back[i], frames[i]) << i;
  }
  EXPECT_EQ(testing::drop_reason(*g.decap, v[3]), "fragment");
  EXPECT_EQ(testing::drop_reason(*g.decap, v[4]), "not-esp");
  EXPECT_EQ(testing::drop_reason(*g.decap, v[5]), "not-esp");
  // Truncated outer headers never crash: every prefix of a 6in6 frame.
  std::vector<Verdict> pv;
  decrypt(g, testing::prefixes(with_ext(esp[0], kIp6DestOptions, kPadN, 4), 120), &pv);
  for (const Verdict& x : pv) EXPECT_TRUE(x.is_drop());
}

// RFC 6040 §4.2 over an inner IPv6 header: the ECN bits of the traffic class, DSCP kept.
TEST(IPsecESPDecap6, EcnDecapsulationOfIpv6Inner) {
  constexpr int kDrop = -1;
  const int want[4][4] = {{0, 0, 0, kDrop}, {1, 1, 1, 3}, {2, 1, 2, 3}, {3, 3, 3, 3}};
  for (int inner = 0; inner < 4; ++inner) {
    for (int outer = 0; outer < 4; ++outer) {
      Bytes f =
          ipv6_udp_frame("2001:db8::1", "2001:db8::2", 100, static_cast<uint8_t>(kDscpEf | inner));
      uint8_t* ip = f.data() + kEtherHdrLen;
      const bool kept = decapsulate_ecn(static_cast<uint8_t>(0x20 | outer), ip);
      ASSERT_EQ(kept, want[inner][outer] != kDrop) << inner << " " << outer;
      if (!kept) continue;
      EXPECT_EQ(ipv6_traffic_class(ip), kDscpEf | want[inner][outer]) << inner << " " << outer;
      EXPECT_EQ(load_be32(ip) & 0xFFFFF, 0x12345u) << "flow label kept";
    }
  }
}

// LIFE_BYTES counts an IPv6 inner packet as payload length + 40, both directions.
TEST(IpsecLifetime6, BytesCountIpv6InnerPackets) {
  constexpr uint32_t kFrame = 114;  // 100 bytes of IPv6 packet
  Gateway g(write_file(sa_lines(4096, kCiphers[2], true, true, "LIFE_BYTES 150,250")));
  std::vector<Bytes> frames;
  for (int i = 0; i < 3; ++i)
    frames.push_back(ipv6_udp_frame("2001:db8:9::9", "2001:db8:1::7", kFrame, 0, i));
  std::vector<Verdict> v;
  const std::vector<Bytes> esp = encrypt(g, frames, &v);
  EXPECT_FALSE(v[0].is_drop());
  EXPECT_FALSE(v[1].is_drop());                                   // 200: soft
  EXPECT_EQ(testing::drop_reason(*g.encap, v[2]), "sa-expired");  // 300 > 250
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 1u);
  EXPECT_EQ(testing::counter(*g.encap, "hard-expired"), 1u);
  decrypt(g, {esp[0], esp[1]}, &v);
  EXPECT_FALSE(v[0].is_drop());
  EXPECT_FALSE(v[1].is_drop());
  EXPECT_EQ(testing::counter(*g.decap, "soft-expired"), 1u);
}

// The MTU key: at the inner MTU a packet passes; one byte more leaves by output 1 (IPv6, IPv4
// with DF) with the inner MTU in user[3], or is dropped (IPv4 without DF; output 1 open).
TEST(IPsecESPEncap6, MtuKey) {
  constexpr uint32_t kMtu = 1280;
  for (const Cipher& c : kCiphers) {
    for (bool outer6 : {false, true}) {
      const std::string text = sa_lines(4096, c, outer6, false) + sa_lines(8192, c, outer6, true);
      const std::string file = write_file(text);
      const uint32_t inner = parse_sa_file(text, "sa.txt").value()[0].inner_mtu(kMtu);
      const std::string what = std::string(c.name) + (outer6 ? " over IPv6" : " over IPv4");
      auto encap = testing::make_or_fail("IPsecESPEncap", {file, "MTU " + std::to_string(kMtu)});
      const std::vector<Bytes> frames = {
          ipv4_frame(RTE_IPV4(10, 1, 1, 1), kEtherHdrLen + inner, 0, true),
          ipv4_frame(RTE_IPV4(10, 1, 1, 1), kEtherHdrLen + inner + 1, 0, true),
          ipv4_frame(RTE_IPV4(10, 1, 1, 1), kEtherHdrLen + inner + 1, 0, false),
          ipv6_udp_frame("2001:db8::9", "2001:db8:1::1", kEtherHdrLen + inner),
          ipv6_udp_frame("2001:db8::9", "2001:db8:1::1", kEtherHdrLen + inner + 1),
      };
      PacketBatch batch;
      const std::vector<Verdict> v = testing::run_batch(*encap, batch, frames);
      constexpr uint32_t kMaxAlign = 16;  // the encapsulation at the inner MTU nearly fills it
      EXPECT_EQ(v[0].port(), 0) << what;
      EXPECT_LE(length(batch.at(0)) - kEtherHdrLen, kMtu) << what;
      EXPECT_GT(length(batch.at(0)) - kEtherHdrLen, kMtu - kMaxAlign) << what;
      EXPECT_EQ(v[1].port(), 1) << what;
      EXPECT_EQ(anno(batch.at(1)).user[kMtuAnnoSlot], inner) << what;
      EXPECT_EQ(testing::packet_bytes(batch.at(1)), frames[1]) << what << ": left unchanged";
      EXPECT_EQ(testing::drop_reason(*encap, v[2]), "needs-fragmentation") << what;
      EXPECT_EQ(v[3].port(), 0) << what;
      EXPECT_LE(length(batch.at(3)) - kEtherHdrLen, kMtu) << what;
      EXPECT_EQ(v[4].port(), 1) << what;
      EXPECT_EQ(anno(batch.at(4)).user[kMtuAnnoSlot], inner) << what;
      testing::free_batch(batch);
      // Output 1 left open: those packets are dropped by the element with their reason.
      auto open = testing::make_element_connected("IPsecESPEncap",
                                                  {file, "MTU " + std::to_string(kMtu)}, 0b01);
      ASSERT_NE(open, nullptr);
      PacketBatch b2;
      const std::vector<Verdict> w = testing::run_batch(*open, b2, {frames[1], frames[4]});
      EXPECT_EQ(testing::drop_reason(*open, w[0]), "mtu-exceeded") << what;
      EXPECT_EQ(testing::drop_reason(*open, w[1]), "mtu-exceeded") << what;
      testing::free_batch(b2);
    }
  }
  EXPECT_NE(testing::config_error("IPsecESPEncap",
                                  {write_file(sa_lines(4096, kCiphers[0], false, false)), "MTU 40"})
                .find("MTU must be 0 (no check) or 68..65575"),
            std::string::npos);
}

// ICMPError(MTU anno): the next-hop MTU of "fragmentation needed" from user[3].
TEST(ICMPError, MtuFromAnnotation) {
  auto e = testing::make_or_fail("ICMPError", {"192.0.2.1", "3", "4", "MTU anno"});
  PacketBatch batch;
  Packet* p = testing::make_packet(ipv4_frame(RTE_IPV4(10, 1, 1, 1), 1000, 0, true));
  anno(p).user[kMtuAnnoSlot] = 1230;
  batch.push(p);
  e->process_batch(batch);
  ASSERT_FALSE(batch.result(0).is_drop());
  const Bytes out = testing::packet_bytes(batch.at(0));
  constexpr uint32_t kIcmpMtuOffset = kEtherHdrLen + kIpv4HdrLen + 6;
  EXPECT_EQ(load_be16(out.data() + kIcmpMtuOffset), 1230);
  testing::free_batch(batch);
  EXPECT_NE(testing::config_error("ICMPError", {"192.0.2.1", "3", "4", "MTU annotation"})
                .find("MTU must be 0..65535 or 'anno', got 'annotation'"),
            std::string::npos);
}

// The ones' complement sum of the ICMPv6 message after the IPv6 header at `ip` and its
// pseudo-header (RFC 8200 §8.1): 0xFFFF when the checksum is right.
uint32_t icmp6_sum(const uint8_t* ip) {
  const uint32_t len = load_be16(ip + kIpv6PayloadLenOffset);
  uint32_t sum = len + kIpProtoIcmp6;
  for (uint32_t k = kIpv6SrcOffset; k < kIpv6HdrLen; k += 2) sum += load_be16(ip + k);
  const uint8_t* m = ip + kIpv6HdrLen;
  for (uint32_t k = 0; k + 1 < len; k += 2) sum += load_be16(m + k);
  if (len % 2) sum += uint32_t{m[len - 1]} << 8;
  while (sum > 0xFFFF) sum = (sum & 0xFFFF) + (sum >> 16);
  return sum;
}

// ICMP6Error: Packet Too Big with the MTU from user[3], the original packet quoted up to the
// 1280-byte minimum MTU, a valid checksum; no error about an error or from a multicast source.
TEST(ICMP6Error, PacketTooBigFromAnnotation) {
  auto e = testing::make_or_fail("ICMP6Error", {"2001:db8::fe", "2", "0", "MTU anno"});
  const Bytes big = ipv6_udp_frame("2001:db8:9::9", "2001:db8:1::1", 1514);
  Bytes small = ipv6_udp_frame("2001:db8:9::9", "2001:db8:1::1", 200);
  Bytes error = small;  // an ICMPv6 error (destination unreachable) is never answered
  error[kEtherHdrLen + kIpv6NextHeaderOffset] = kIpProtoIcmp6;
  error[kEtherHdrLen + kIpv6HdrLen] = 1;
  Bytes echo = error;  // an echo request is answered
  echo[kEtherHdrLen + kIpv6HdrLen] = 128;
  Bytes multicast_src = small;
  multicast_src[kEtherHdrLen + kIpv6SrcOffset] = 0xFF;
  PacketBatch batch;
  for (const Bytes& f : {big, small, error, echo, multicast_src}) {
    Packet* p = testing::make_packet(f);
    anno(p).user[kMtuAnnoSlot] = 1210;
    batch.push(p);
  }
  e->process_batch(batch);
  EXPECT_EQ(testing::drop_reason(*e, batch.result(2)), "no-error-allowed");
  EXPECT_EQ(testing::drop_reason(*e, batch.result(4)), "no-error-allowed");
  for (uint32_t i : {0u, 1u, 3u}) {
    ASSERT_FALSE(batch.result(i).is_drop()) << i;
    const Bytes out = testing::packet_bytes(batch.at(i));
    const Bytes& in = i == 0 ? big : i == 1 ? small : echo;
    const uint8_t* ip = out.data() + kEtherHdrLen;
    const uint32_t quoted = std::min<uint32_t>(static_cast<uint32_t>(in.size()) - kEtherHdrLen,
                                               ICMP6Error::kMinMtu - kIpv6HdrLen - 8);
    EXPECT_EQ(out.size(), kEtherHdrLen + kIpv6HdrLen + 8 + quoted) << i;
    EXPECT_EQ(std::memcmp(out.data(), in.data() + 6, 6), 0) << "addresses swapped";
    EXPECT_EQ(load_be16(ip + kIpv6PayloadLenOffset), 8 + quoted);
    EXPECT_EQ(ip[kIpv6NextHeaderOffset], kIpProtoIcmp6);
    EXPECT_EQ(Bytes(ip + kIpv6SrcOffset, ip + kIpv6SrcOffset + 16), addr6("2001:db8::fe"));
    EXPECT_EQ(Bytes(ip + kIpv6DstOffset, ip + kIpv6DstOffset + 16), addr6("2001:db8:9::9"));
    EXPECT_EQ(ip[kIpv6HdrLen], 2);
    EXPECT_EQ(load_be32(ip + kIpv6HdrLen + 4), 1210u);
    EXPECT_EQ(std::memcmp(ip + kIpv6HdrLen + 8, in.data() + kEtherHdrLen, quoted), 0);
    EXPECT_EQ(icmp6_sum(ip), 0xFFFFu) << "checksum " << i;
  }
  testing::free_batch(batch);
  EXPECT_NE(testing::config_error("ICMP6Error", {"192.0.2.1", "2", "0"})
                .find("SRC: expected an IPv6 address, got '192.0.2.1'"),
            std::string::npos);
}

// --- security policy -------------------------------------------------------------------------

TEST(IpsecSpd6, ParsesIpv6PrefixesAndFamilies) {
  auto cfg = parse_spd_file(
      "PROTECT SRC 2001:db8:1::/48 DST 2001:db8:2::/48 PROTO udp DPORT 4500\n"
      "BYPASS PROTO icmp6 TYPE 135-136\n"
      "DISCARD DST 10.0.0.0/8\n",
      "spd.txt");
  ASSERT_TRUE(cfg) << cfg.error();
  EXPECT_EQ(cfg->rules[0].family, kSpdIpv6);
  EXPECT_EQ(cfg->prefixes6[0].src, Addr6::from_bytes(addr6("2001:db8:1::").data()));
  EXPECT_EQ(cfg->prefixes6[0].dst_len, 48);
  EXPECT_EQ(cfg->rules[1].family, kSpdAnyFamily);
  EXPECT_EQ(cfg->rules[1].proto, kIpProtoIcmp6);
  EXPECT_EQ(cfg->rules[2].family, kSpdIpv4);
  const std::pair<std::string, std::string> errors[] = {
      {"PROTECT SRC 10.0.0.0/8 DST 2001:db8::/32",
       "spd.txt:2: SRC and DST are not the same address family (both IPv4 or both IPv6)"},
      {"PROTECT SRC 2001:db8::/129",
       "spd.txt:2: SRC '2001:db8::/129' is not A.B.C.D/LEN or "
       "X:X::X/LEN"},
      {"PROTECT DST 2001:db8::1/64", "spd.txt:2: host bits set in DST 2001:db8::1/64"},
      {"PROTECT PROTO udp TYPE 1", "spd.txt:2: TYPE and CODE need PROTO icmp or icmp6"},
  };
  for (const auto& [line, want] : errors) {
    auto r = parse_spd_file("DEFAULT BYPASS\n" + line + "\n", "spd.txt");
    ASSERT_FALSE(r) << line;
    EXPECT_EQ(r.error(), want);
  }
}

// IPsecPolicy over IPv6 frames: extension headers walked to the protocol and ports, families
// kept apart, rules without addresses for both.
TEST(IpsecSpd6, PolicyClassifiesIpv6Packets) {
  const std::string spd = write_file(
      "BYPASS PROTO icmp6 TYPE 135\n"
      "PROTECT SRC 2001:db8:1::/48 DST 2001:db8:2::/48 PROTO udp DPORT 4501\n"
      "DISCARD DST 2001:db8:2::/48\n"
      "PROTECT DST 10.0.0.0/8\n"
      "DISCARD DST ::/0 PROTO udp DPORT 9\n"
      "BYPASS PROTO udp DPORT 53\n"
      "DEFAULT DISCARD\n");
  auto e = testing::make_or_fail("IPsecPolicy", {spd});
  auto v6 = [](const char* src, const char* dst, uint8_t proto, uint16_t dport) {
    Bytes f = ipv6_udp_frame(src, dst, 100);
    f[kEtherHdrLen + kIpv6NextHeaderOffset] = proto;
    if (proto == kIpProtoIcmp6) {
      f[kEtherHdrLen + kIpv6HdrLen] = static_cast<uint8_t>(dport);
    } else {
      store_be16(f.data() + kEtherHdrLen + kIpv6HdrLen + 2, dport);
    }
    return f;
  };
  // An 8-byte extension header of `type` in front of the upper-layer header.
  auto ext = [](const Bytes& f, uint8_t type, uint16_t frag_field = 0) {
    const uint8_t h[8] = {
        0, 0, static_cast<uint8_t>(frag_field >> 8), static_cast<uint8_t>(frag_field), 0, 0, 0, 0};
    return insert_ext(f, type, h);
  };
  const Bytes prot = v6("2001:db8:1::5", "2001:db8:2::9", kProtoUdp, 4501);
  Bytes truncated_ext = ext(prot, kIp6DestOptions);
  truncated_ext[kEtherHdrLen + kIpv6HdrLen + 1] = 200;  // runs past the payload
  const std::vector<Bytes> frames = {
      prot,
      ext(prot, kIp6HopByHop),
      ext(ext(prot, kIp6DestOptions), kIp6HopByHop),
      ext(prot, kIp6Fragment, 0x0001),                      // first fragment: has its ports
      ext(prot, kIp6Fragment, 0x0100),                      // later: no ports, DISCARD DST
      v6("2001:db8:1::5", "2001:db8:2::9", kProtoUdp, 80),  // DISCARD DST
      v6("2001:db8:7::5", "2001:db8:8::9", kProtoUdp, 53),  // BYPASS (no addresses)
      v6("2001:db8:7::5", "2001:db8:8::9", kIpProtoIcmp6, 135),
      v6("2001:db8:7::5", "::ffff:10.0.0.1", kProtoUdp, 80),  // not the IPv4 rule: default
      v6("2001:db8:7::5", "2001:db8:8::9", kProtoUdp, 9),     // DISCARD ::/0
      ipv4_frame(RTE_IPV4(10, 1, 1, 1), 100),                 // PROTECT 10/8
      ipv4_frame(RTE_IPV4(8, 8, 8, 8), 100),                  // ::/0 is not IPv4: default
      truncated_ext,
      testing::ether_frame(0x0806),
  };
  PacketBatch batch;
  const std::vector<Verdict> v = testing::run_batch(*e, batch, frames);
  std::vector<std::string> got;
  for (const Verdict& x : v)
    got.push_back(x.is_drop() ? std::string(testing::drop_reason(*e, x))
                              : "out" + std::to_string(x.port()));
  testing::free_batch(batch);
  EXPECT_EQ(got, (std::vector<std::string>{"out0", "out0", "out0", "out0", "discard", "discard",
                                           "out1", "out1", "discard", "discard", "out0", "discard",
                                           "truncated", "not-ip"}));
  std::vector<Verdict> pv;
  PacketBatch b2;
  pv = testing::run_batch(*e, b2, testing::prefixes(ext(prot, kIp6HopByHop), 110));
  testing::free_batch(b2);  // every prefix: no crash
}

}  // namespace
}  // namespace fulcrum
