// IPsec ESP tunnel gateway: RFC 3686 / RFC 2202 vectors through the elements' crypto path
// (intel-ipsec-mb), the SA file and replay window, golden tests of each element, an
// independent check of the output with OpenSSL, encap -> decap round trips, tampering and
// replay; AES-256, AES-GCM, ESN, windows up to 4096 and ECN against OpenSSL and the RFCs.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "elements/ipsec/ipsec_esp_decap.hh"
#include "elements/ipsec/ipsec_esp_encap.hh"
#include "lib/esp.hh"
#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"
#include "lib/iv_source.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Bytes = std::vector<uint8_t>;
using namespace esp;

constexpr uint32_t kSpiOut = 0x1000;
constexpr uint32_t kSpiOther = 0x2000;
constexpr uint32_t kTunnelSrc = RTE_IPV4(192, 0, 2, 1);
constexpr uint32_t kTunnelDst = RTE_IPV4(198, 51, 100, 1);
constexpr uint32_t kInnerSrc = RTE_IPV4(10, 9, 9, 9);
constexpr uint32_t kInnerDst = RTE_IPV4(10, 1, 2, 3);
constexpr uint32_t kOtherDst = RTE_IPV4(172, 16, 0, 1);
constexpr uint32_t kUnmatchedDst = RTE_IPV4(8, 8, 8, 8);
constexpr uint8_t kTtl = 64;
constexpr uint32_t kMinFrame = 64;
constexpr uint32_t kMaxFrame = 1514;
constexpr uint32_t kSizeStep = 7;
constexpr uint32_t kOuterIpOffset = kEtherHdrLen;
constexpr uint32_t kEspOff = kEtherHdrLen + kIpv4HdrLen;
constexpr uint32_t kTamperBit = 0x80;
constexpr uint32_t kSeqsPerTest = 5;
constexpr uint32_t kGarbageFrames = 200;
constexpr uint32_t kGarbageMaxLen = 120;
constexpr uint32_t kMaxRobustLen = 100;
constexpr uint32_t kOnePadFrame = 63;  // 49-byte inner packet: one byte of ESP padding

const char* const kEncKey = "2b7e151628aed2a6abf7158809cf4f3cdeadbeef";
const char* const kAuthKey = "0102030405060708090a0b0c0d0e0f1011121314";

Bytes unhex(const std::string& s) {
  Bytes out;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoul(s.substr(i, 2), nullptr, 16)));
  return out;
}

std::string sa_text() {
  const std::string keys = std::string(kEncKey) + " " + kAuthKey;
  return "# test SAs\n"
         "4096 192.0.2.1 198.51.100.1 " +
         keys +
         " 10.0.0.0/8 DIR out\n"
         "8192 192.0.2.1 198.51.100.2 000102030405060708090a0b0c0d0e0f10111213 "
         "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3 172.16.0.0/12 out\n"
         "4096 192.0.2.1 198.51.100.1 " +
         keys + " 0.0.0.0/0 DIR in\n";
}

const char* const kCbcKey = "06a9214036b8a15b512e03d534120006";
constexpr uint32_t kSpiCbc = 0x3000;

// One AES-128-CBC SA (a 16-byte key) for 10.0.0.0/8, both directions.
std::string cbc_sa_text() {
  const std::string keys = std::string(kCbcKey) + " " + kAuthKey;
  return "12288 192.0.2.1 198.51.100.3 " + keys + " 10.0.0.0/8 DIR out\n" +
         "12288 192.0.2.1 198.51.100.3 " + keys + " 0.0.0.0/0 DIR in\n";
}

// A fresh SA file per call: the test helpers share one SharedStorage, and sequence numbers and
// replay windows live in the shared table.
std::string write_sa_file(const std::string& text = sa_text()) {
  static int n = 0;
  const std::string path = testing::temp_path("ipsec-" + std::to_string(n++) + ".txt");
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  std::fputs(text.c_str(), f);
  std::fclose(f);
  return path;
}

Bytes inner_frame(uint32_t frame_len, uint32_t dst = kInnerDst, uint32_t seed = 1) {
  Bytes f = testing::ipv4_udp_frame(kInnerSrc, dst, kTtl, frame_len);
  std::mt19937 rng(seed);
  const uint32_t udp_payload = kEtherHdrLen + kIpv4HdrLen + 8;
  for (uint32_t i = udp_payload; i < f.size(); ++i) f[i] = static_cast<uint8_t>(rng());
  return f;
}

// --- crypto vectors ------------------------------------------------------------------------

struct CtrVector {
  const char* key;
  const char* nonce;
  const char* iv;
  const char* plain;
  const char* cipher;
};

// RFC 3686 section 6, test vectors #1..#3 (AES-128).
const CtrVector kCtrVectors[] = {
    {"ae6852f8121067cc4bf7a5765577f39e", "00000030", "0000000000000000",
     "53696e676c6520626c6f636b206d7367", "e4095d4fb7a7b3792d6175a3261311b8"},
    {"7e24067817fae0d743d6ce1f32539163", "006cb6db", "c0543b59da48d90b",
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
     "5104a106168a72d9790d41ee8edad388eb2e1efc46da57c8fce630df9141be28"},
    {"7691be035e5020a8ac6e618529f9a0dc", "00e0017b", "27777f3f4a1786f0",
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f20212223",
     "c1cf48a89f2ffdd9cf4652e9efdb72d74540a42bde6d7836d59a5ceaaef3105325b2072f"},
};

TEST(IpsecCrypto, Rfc3686AesCtrVectors) {
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto) << crypto.error();
  for (const CtrVector& v : kCtrVectors) {
    AesKey key;
    const Bytes k = unhex(v.key), nonce = unhex(v.nonce), iv = unhex(v.iv);
    (*crypto)->expand_aes(k.data(), kAesKeyLen, nonce.data(), key);
    alignas(16) uint8_t nonce_iv[kCtrNonceIvLen];
    std::copy(nonce.begin(), nonce.end(), nonce_iv);
    std::copy(iv.begin(), iv.end(), nonce_iv + kCtrNonceLen);
    Bytes buf = unhex(v.plain);
    (*crypto)->ctr(key, nonce_iv, buf.data(), buf.size(), 0);
    EXPECT_TRUE((*crypto)->finish().empty());
    EXPECT_EQ(buf, unhex(v.cipher)) << v.key;
    (*crypto)->ctr(key, nonce_iv, buf.data(), buf.size(), 0);
    EXPECT_TRUE((*crypto)->finish().empty());
    EXPECT_EQ(buf, unhex(v.plain)) << "decryption of " << v.key;
  }
}

struct CbcVector {
  const char* key;
  const char* iv;
  const char* plain;
  const char* cipher;
};

// RFC 3602 section 4, cases #1..#4 (AES-128-CBC).
const CbcVector kCbcVectors[] = {
    {"06a9214036b8a15b512e03d534120006", "3dafba429d9eb430b422da802c9fac41",
     "53696e676c6520626c6f636b206d7367", "e353779c1079aeb82708942dbe77181a"},
    {"c286696d887c9aa0611bbb3e2025a45a", "562e17996d093d28ddb3ba695a2e6f58",
     "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
     "d296cd94c2cccf8a3a863028b5e1dc0a7586602d253cfff91b8266bea6d61ab1"},
};

TEST(IpsecCrypto, Rfc3602AesCbcVectors) {
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto) << crypto.error();
  for (const CbcVector& v : kCbcVectors) {
    AesKey key;
    const Bytes k = unhex(v.key), iv = unhex(v.iv);
    const uint8_t no_nonce[kCtrNonceLen] = {};
    (*crypto)->expand_aes(k.data(), kAesKeyLen, no_nonce, key);
    Bytes buf = unhex(v.plain);
    (*crypto)->cbc_encrypt(key, iv.data(), buf.data(), buf.size(), 0);
    EXPECT_TRUE((*crypto)->finish().empty());
    EXPECT_EQ(buf, unhex(v.cipher)) << v.key;
    // Decryption through the inbound chained job (the ICV output is ignored here).
    uint8_t icv[kIcvLen];
    HmacSha1Key hkey;
    (*crypto)->prepare_hmac_sha1(k.data(), k.size(), hkey);
    (*crypto)->hmac_then_cbc_decrypt(hkey, buf.data(), buf.size(), icv, key, iv.data(), buf.data(),
                                     buf.size(), 0);
    EXPECT_TRUE((*crypto)->finish().empty());
    EXPECT_EQ(buf, unhex(v.plain)) << "decryption of " << v.key;
  }
}

struct HmacVector {
  Bytes key;
  Bytes data;
  const char* digest;
};

Bytes repeat(uint8_t b, size_t n) {
  return Bytes(n, b);
}
Bytes text(const std::string& s) {
  return Bytes(s.begin(), s.end());
}

constexpr size_t kRfc2202KeyLen = 20;
constexpr size_t kRfc2202DataLen = 50;
constexpr size_t kRfc2202LongKeyLen = 80;
constexpr size_t kRfc2202Case4KeyLen = 25;

std::vector<HmacVector> hmac_vectors() {
  Bytes key4;
  for (size_t i = 1; i <= kRfc2202Case4KeyLen; ++i) key4.push_back(static_cast<uint8_t>(i));
  return {
      {repeat(0x0b, kRfc2202KeyLen), text("Hi There"), "b617318655057264e28bc0b6fb378c8ef146be00"},
      {text("Jefe"), text("what do ya want for nothing?"),
       "effcdf6ae5eb2fa2d27416d5f184df9c259a7c79"},
      {repeat(0xaa, kRfc2202KeyLen), repeat(0xdd, kRfc2202DataLen),
       "125d7342b9ac11cd91a39af48aa17b4f63f175d3"},
      {key4, repeat(0xcd, kRfc2202DataLen), "4c9007f4026250c6bc8414f9bf50c86c2d7235da"},
      {repeat(0x0c, kRfc2202KeyLen), text("Test With Truncation"),
       "4c1a03424b55e07fe7f27be1d58bb9324a9a5a04"},
      {repeat(0xaa, kRfc2202LongKeyLen),
       text("Test Using Larger Than Block-Size Key - Hash Key First"),
       "aa4ae5e15272d00e95705637ce8a3b55ed402112"},
      {repeat(0xaa, kRfc2202LongKeyLen),
       text("Test Using Larger Than Block-Size Key and Larger Than One Block-Size Data"),
       "e8e99d0f45237d786d6bbaa7965c7808bbff1a91"},
  };
}

TEST(IpsecCrypto, Rfc2202HmacSha1Vectors) {
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto) << crypto.error();
  for (const HmacVector& v : hmac_vectors()) {
    HmacSha1Key key;
    (*crypto)->prepare_hmac_sha1(v.key.data(), v.key.size(), key);
    uint8_t full[kSha1DigestLen] = {};
    uint8_t icv[kIcvLen] = {};
    (*crypto)->hmac_sha1(key, v.data.data(), v.data.size(), full, kSha1DigestLen, 0);
    (*crypto)->hmac_sha1(key, v.data.data(), v.data.size(), icv, kIcvLen, 1);
    EXPECT_TRUE((*crypto)->finish().empty());
    const Bytes want = unhex(v.digest);
    EXPECT_EQ(Bytes(full, full + kSha1DigestLen), want) << v.digest;
    EXPECT_EQ(Bytes(icv, icv + kIcvLen), Bytes(want.begin(), want.begin() + kIcvLen))
        << "HMAC-SHA1-96 of " << v.digest;
  }
}

TEST(IpsecCrypto, ManyJobsInOneBatchMatchOneByOne) {
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto) << crypto.error();
  HmacSha1Key key;
  const Bytes k = unhex(kAuthKey);
  (*crypto)->prepare_hmac_sha1(k.data(), k.size(), key);
  std::vector<Bytes> msgs;
  std::mt19937 rng(3);
  for (uint32_t i = 0; i < kMaxBatch; ++i) {
    Bytes m(rng() % kMaxFrame);
    for (auto& b : m) b = static_cast<uint8_t>(rng());
    msgs.push_back(m);
  }
  std::vector<std::array<uint8_t, kIcvLen>> tags(msgs.size());
  for (uint32_t i = 0; i < msgs.size(); ++i)
    (*crypto)->hmac_sha1(key, msgs[i].data(), msgs[i].size(), tags[i].data(), kIcvLen, i);
  EXPECT_TRUE((*crypto)->finish().empty());
  for (uint32_t i = 0; i < msgs.size(); ++i) {
    uint8_t want[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha1(), k.data(), static_cast<int>(k.size()), msgs[i].data(), msgs[i].size(), want,
         &n);
    EXPECT_TRUE(std::equal(tags[i].begin(), tags[i].end(), want)) << "message " << i;
  }
}

// --- SA file and replay window ------------------------------------------------------------

TEST(IpsecSa, ParsesFile) {
  auto sas = parse_sa_file(sa_text(), "sa.txt");
  ASSERT_TRUE(sas) << sas.error();
  ASSERT_EQ(sas->size(), 3u);
  const SaConfig& a = (*sas)[0];
  EXPECT_EQ(a.spi, kSpiOut);
  EXPECT_EQ(a.tunnel_src, kTunnelSrc);
  EXPECT_EQ(a.tunnel_dst, kTunnelDst);
  EXPECT_EQ(a.enc_key[0], 0x2b);
  EXPECT_EQ(a.nonce[0], 0xde);
  EXPECT_EQ(a.auth_key[0], 0x01);
  EXPECT_EQ(a.selector, RTE_IPV4(10, 0, 0, 0));
  EXPECT_EQ(a.selector_len, 8);
  EXPECT_EQ(a.dir, SaDir::kOut);
  EXPECT_EQ((*sas)[1].spi, kSpiOther);
  EXPECT_EQ((*sas)[1].dir, SaDir::kOut);
  EXPECT_EQ((*sas)[2].dir, SaDir::kIn);
  EXPECT_EQ((*sas)[2].line, 4u);
}

TEST(IpsecSa, ErrorsNameFileAndLine) {
  const std::string keys = std::string(kEncKey) + " " + kAuthKey;
  const std::pair<std::string, std::string> cases[] = {
      {"4096 1.2.3.4 5.6.7.8 " + keys, "sa.txt:2: expected 'SPI TUNNEL_SRC"},
      {"12 1.2.3.4 5.6.7.8 " + keys + " 10.0.0.0/8", "sa.txt:2: SPI 12 is reserved"},
      {"x 1.2.3.4 5.6.7.8 " + keys + " 10.0.0.0/8", "sa.txt:2: SPI 'x' is not a number"},
      {"4096 1.2.3 5.6.7.8 " + keys + " 10.0.0.0/8", "sa.txt:2: tunnel source '1.2.3'"},
      {"4096 1.2.3.4 5.6.7.8 abcd " + std::string(kAuthKey) + " 10.0.0.0/8",
       "sa.txt:2: encryption key must be 40 hex digits"},
      {"4096 1.2.3.4 5.6.7.8 " + std::string(kEncKey) + " zz 10.0.0.0/8",
       "sa.txt:2: authentication key must be 40 hex digits"},
      {"4096 1.2.3.4 5.6.7.8 " + keys + " 10.0.0.1/8", "sa.txt:2: host bits set in selector"},
      {"4096 1.2.3.4 5.6.7.8 " + keys + " 10.0.0.0/33", "sa.txt:2: selector '10.0.0.0/33'"},
      {"4096 1.2.3.4 5.6.7.8 " + keys + " 10.0.0.0/8 DIR sideways",
       "sa.txt:2: direction 'sideways'"},
      {"4096 1.2.3.4 5.6.7.8 " + keys + " 11.0.0.0/8",
       "sa.txt:2: duplicate SPI 4096 (first on line 1)"},
      {"4097 1.2.3.4 5.6.7.8 " + keys + " 10.0.0.0/8",
       "sa.txt:2: duplicate selector 10.0.0.0/8 (first on line 1)"},
  };
  for (const auto& [line, want] : cases) {
    const std::string text = "4096 1.2.3.4 5.6.7.8 " + keys + " 10.0.0.0/8\n" + line + "\n";
    auto r = parse_sa_file(text, "sa.txt");
    ASSERT_FALSE(r) << line;
    EXPECT_EQ(r.error().rfind(want, 0), 0u) << r.error();
  }
  EXPECT_TRUE(parse_sa_file("4096 1.2.3.4 5.6.7.8 " + keys +
                                " 10.0.0.0/8 in\n4096 1.2.3.4 "
                                "5.6.7.8 " +
                                keys + " 10.0.0.0/8 out # same SPI, other direction\n",
                            "sa.txt"));
  auto missing = load_sa_file("/nonexistent/sa.txt");
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().find("cannot open SA file /nonexistent/sa.txt"), std::string::npos);
}

// Selector lookup: the scan (few SAs) and DIR-24-8 (many) agree with a brute-force LPM.
TEST(IpsecSa, SelectorLongestPrefixMatch) {
  const std::string keys = std::string(kEncKey) + " " + kAuthKey;
  const char* const prefixes[] = {"10.0.0.0/8",    "10.1.0.0/16",    "10.1.2.0/24", "10.1.2.128/25",
                                  "10.1.2.200/32", "192.168.0.0/16", "0.0.0.0/0",   "172.16.0.0/12",
                                  "172.16.5.0/24", "11.0.0.0/8",     "12.0.0.0/8",  "13.0.0.0/8"};
  for (size_t count : {size_t{3}, size_t{7}, std::size(prefixes)}) {
    std::string text;
    for (size_t i = 0; i < count; ++i)
      text += std::to_string(kMinSpi + i) + " 1.2.3.4 5.6.7.8 " + keys + " " + prefixes[i] + "\n";
    auto sas = parse_sa_file(text, "sa.txt");
    ASSERT_TRUE(sas) << sas.error();
    auto table = SaTable::build(*sas, "sa.txt");
    ASSERT_TRUE(table) << table.error();
    std::mt19937 rng(5);
    for (int k = 0; k < 20000; ++k) {
      uint32_t dst = rng();
      if (k % 2 == 0) dst = ((*sas)[rng() % count].selector) | (rng() & 0x1FF);
      uint16_t want = SaTable::kNoSa;
      int best = -1;
      for (size_t i = 0; i < count; ++i) {
        const SaConfig& c = (*sas)[i];
        const uint32_t mask = c.selector_len == 0 ? 0 : ~uint32_t{0} << (32 - c.selector_len);
        if ((dst & mask) == c.selector && c.selector_len > best) {
          best = c.selector_len;
          want = static_cast<uint16_t>(i);
        }
      }
      ASSERT_EQ((*table)->lookup_out(dst), want) << count << " SAs, dst " << dst;
    }
  }
}

TEST(IpsecSa, ReplayWindow) {
  ReplayWindow w;
  EXPECT_FALSE(w.check(0));
  EXPECT_TRUE(w.update(1));
  EXPECT_FALSE(w.update(1));
  EXPECT_TRUE(w.update(3));
  EXPECT_TRUE(w.update(2));
  EXPECT_FALSE(w.check(2));
  EXPECT_TRUE(w.update(100));
  EXPECT_FALSE(w.check(100 - SaConfig::kDefaultReplayWindow));  // left of the window
  EXPECT_TRUE(w.check(100 - SaConfig::kDefaultReplayWindow + 1));
  EXPECT_TRUE(w.update(100 - SaConfig::kDefaultReplayWindow + 1));
  EXPECT_FALSE(w.check(100 - SaConfig::kDefaultReplayWindow + 1));
  EXPECT_TRUE(w.update(100 + 2 * SaConfig::kDefaultReplayWindow));
  EXPECT_FALSE(w.check(100));
  EXPECT_EQ(w.top(), 100 + 2 * SaConfig::kDefaultReplayWindow);
}

// --- elements ------------------------------------------------------------------------------

struct Gateway {
  explicit Gateway(const std::string& file)
      : encap(testing::make_or_fail("IPsecESPEncap", {file})),
        aes(testing::make_or_fail("IPsecAES", {file})),
        hmac(testing::make_or_fail("IPsecAuthHMACSHA1", {file})),
        decap(testing::make_or_fail("IPsecESPDecap", {file})) {}
  std::unique_ptr<Element> encap, aes, hmac, decap;
};

// Runs `e` on the live packets of `batch`; drops are freed and excluded, as the graph does.
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

// Encapsulates, encrypts and authenticates `frames`; returns the ESP frames (empty for drops).
std::vector<Bytes> encrypt(Gateway& g, const std::vector<Bytes>& frames,
                           std::vector<Verdict>* encap_verdicts = nullptr) {
  PacketBatch batch;
  auto v = testing::run_batch(*g.encap, batch, frames);
  if (encap_verdicts) *encap_verdicts = v;
  step(*g.aes, batch);
  step(*g.hmac, batch);
  std::vector<Bytes> out(frames.size());
  batch.for_each([&](uint32_t i, Packet* p) { out[i] = testing::packet_bytes(p); });
  testing::free_batch(batch);
  return out;
}

struct Decapped {
  std::vector<Verdict> verdicts;
  std::vector<Bytes> frames;
};

Decapped decrypt(Gateway& g, const std::vector<Bytes>& frames) {
  PacketBatch batch;
  Decapped d;
  d.verdicts = testing::run_batch(*g.decap, batch, frames);
  d.frames.resize(frames.size());
  batch.for_each([&](uint32_t i, Packet* p) { d.frames[i] = testing::packet_bytes(p); });
  testing::free_batch(batch);
  return d;
}

TEST(IPsecESPEncap, BuildsOuterHeaderEspHeaderAndTrailer) {
  const std::string file = write_sa_file();
  auto encap = testing::make_or_fail("IPsecESPEncap", {file});
  ASSERT_NE(encap, nullptr);
  std::vector<Bytes> frames;
  for (uint32_t len : {60u, 61u, 62u, 63u, 64u, 100u, 1514u}) frames.push_back(inner_frame(len));
  frames.push_back(inner_frame(kMinFrame, kOtherDst));
  PacketBatch batch;
  auto v = testing::run_batch(*encap, batch, frames);
  for (uint32_t i = 0; i < frames.size(); ++i) {
    ASSERT_FALSE(v[i].is_drop()) << i << ": " << testing::drop_reason(*encap, v[i]);
    Packet* p = batch.at(i);
    const Bytes out = testing::packet_bytes(p);
    const Bytes& in = frames[i];
    const uint32_t inner_len = static_cast<uint32_t>(in.size()) - kEtherHdrLen;
    const uint32_t pad = pad_len(inner_len);
    EXPECT_EQ((inner_len + pad + kTrailerLen) % kAlign, 0u);
    EXPECT_EQ(out.size(), kEtherHdrLen + kPrependLen + inner_len + pad + kTrailerLen + kIcvLen);
    EXPECT_TRUE(std::equal(in.begin(), in.begin() + kEtherHdrLen, out.begin()));
    const uint8_t* ip = out.data() + kOuterIpOffset;
    EXPECT_EQ(ip[0], kIpv4VersionIhl);
    EXPECT_EQ(load_be16(ip + 2), out.size() - kEtherHdrLen);
    EXPECT_EQ(ip[9], kIpProtoEsp);
    EXPECT_EQ(rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(ip)), 0xFFFF - 0xFFFF);
    const bool other = i + 1 == frames.size();
    EXPECT_EQ(load_be32(ip + 12), kTunnelSrc);
    EXPECT_EQ(load_be32(ip + 16), other ? RTE_IPV4(198, 51, 100, 2) : kTunnelDst);
    EXPECT_EQ(load_be32(out.data() + kEspOff), other ? kSpiOther : kSpiOut);
    const uint32_t seq = load_be32(out.data() + kEspOff + kSpiLen);
    EXPECT_EQ(seq, other ? 1u : i + 1);
    EXPECT_EQ(anno(p).flow_id, other ? 1u : 0u);
    // Payload in the clear (encryption is IPsecAES's job), then 1,2,3.. padding.
    const uint8_t* payload = out.data() + kEtherHdrLen + kPrependLen;
    EXPECT_TRUE(std::equal(in.begin() + kEtherHdrLen, in.end(), payload));
    for (uint32_t k = 0; k < pad; ++k) EXPECT_EQ(payload[inner_len + k], k + 1);
    EXPECT_EQ(payload[inner_len + pad], pad);
    EXPECT_EQ(payload[inner_len + pad + 1], kNextHeaderIpv4);
  }
  testing::free_batch(batch);
}

TEST(IPsecESPEncap, DropsWithReasons) {
  const std::string file = write_sa_file();
  auto encap = testing::make_or_fail("IPsecESPEncap", {file});
  ASSERT_NE(encap, nullptr);
  Bytes bad_version = inner_frame(kMinFrame);
  bad_version[kEtherHdrLen] = 0x65;
  Bytes bad_length = inner_frame(kMinFrame);
  store_be16(bad_length.data() + kEtherHdrLen + 2, kMaxFrame);
  const Bytes full = inner_frame(kMinFrame);
  const Bytes short_frame(full.begin(), full.begin() + kEtherHdrLen + kIpv4HdrLen - 1);
  const std::vector<std::pair<Bytes, std::string_view>> cases = {
      {inner_frame(kMinFrame, kUnmatchedDst), "no-sa"},
      {testing::ether_frame(0x0806), "not-ip"},
      {bad_version, "not-ip"},
      {bad_length, "not-ip"},
      {short_frame, "not-ip"},
  };
  std::vector<Bytes> frames;
  for (const auto& c : cases) frames.push_back(c.first);
  PacketBatch batch;
  auto v = testing::run_batch(*encap, batch, frames);
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(testing::drop_reason(*encap, v[i]), cases[i].second) << i;
  testing::free_batch(batch);
}

TEST(IPsecESPEncap, SequenceNumbersIncrementAcrossBatches) {
  const std::string file = write_sa_file();
  Gateway g(file);
  for (uint32_t round = 0; round < kSeqsPerTest; ++round) {
    auto out = encrypt(g, {inner_frame(kMinFrame), inner_frame(kMinFrame)});
    EXPECT_EQ(load_be32(out[0].data() + kEspOff + kSpiLen), 2 * round + 1);
    EXPECT_EQ(load_be32(out[1].data() + kEspOff + kSpiLen), 2 * round + 2);
    // The IV is the 64-bit sequence number.
    EXPECT_EQ(load_be32(out[1].data() + kEspOff + kHdrLen + kSpiLen), 2 * round + 2);
  }
}

// Each SA numbers its packets in batch order; a packet dropped before numbering takes none; two
// replicas on one SA file (two workers) number from the same counter, never the same number twice.
TEST(IPsecESPEncap, SasNumberTheirPacketsInBatchOrderAcrossReplicas) {
  const std::string file = write_sa_file();
  auto first = testing::make_or_fail("IPsecESPEncap", {file});
  auto second = testing::make_or_fail("IPsecESPEncap", {file});
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  const Bytes out_sa = inner_frame(kMinFrame), other_sa = inner_frame(kMinFrame, kOtherDst);
  const Bytes no_sa = inner_frame(kMinFrame, kUnmatchedDst);
  // (SPI, sequence number) of each packet, 0 for a drop.
  auto numbers = [&](Element& e, const std::vector<Bytes>& frames) {
    PacketBatch batch;
    auto v = testing::run_batch(e, batch, frames);
    std::vector<std::pair<uint32_t, uint32_t>> got;
    for (uint32_t i = 0; i < frames.size(); ++i) {
      if (v[i].is_drop()) {
        got.emplace_back(0, 0);
        continue;
      }
      const Bytes b = testing::packet_bytes(batch.at(i));
      got.emplace_back(load_be32(b.data() + kEspOff), load_be32(b.data() + kEspOff + kSpiLen));
    }
    testing::free_batch(batch);
    return got;
  };
  using N = std::vector<std::pair<uint32_t, uint32_t>>;
  EXPECT_EQ(numbers(*first, {out_sa, other_sa, no_sa, out_sa, out_sa, other_sa}),
            (N{{kSpiOut, 1}, {kSpiOther, 1}, {0, 0}, {kSpiOut, 2}, {kSpiOut, 3}, {kSpiOther, 2}}));
  EXPECT_EQ(numbers(*second, {other_sa, out_sa, out_sa}),
            (N{{kSpiOther, 3}, {kSpiOut, 4}, {kSpiOut, 5}}));
  EXPECT_EQ(numbers(*first, {no_sa, out_sa}), (N{{0, 0}, {kSpiOut, 6}}));
}

TEST(IPsecESPEncap, TruncatedAndGarbageFramesAreDroppedWithoutCrash) {
  const std::string file = write_sa_file();
  Gateway g(file);
  std::vector<Bytes> frames = testing::prefixes(inner_frame(kMinFrame), kMaxRobustLen);
  std::mt19937 rng(11);
  for (uint32_t i = 0; i < kGarbageFrames; ++i) {
    Bytes f(rng() % kGarbageMaxLen);
    for (auto& b : f) b = static_cast<uint8_t>(rng());
    frames.push_back(f);
  }
  for (size_t first = 0; first < frames.size(); first += kMaxBatch) {
    std::vector<Bytes> chunk(frames.begin() + first,
                             frames.begin() + std::min(frames.size(), first + kMaxBatch));
    std::vector<Verdict> v;
    auto out = encrypt(g, chunk, &v);
    for (size_t i = 0; i < chunk.size(); ++i) {
      if (chunk[i].size() < kMinFrame) {
        EXPECT_TRUE(v[i].is_drop()) << chunk[i].size();
      }
      if (!v[i].is_drop()) {
        EXPECT_FALSE(out[i].empty());
      }
    }
    auto d = decrypt(g, chunk);
    for (size_t i = 0; i < chunk.size(); ++i) EXPECT_TRUE(d.verdicts[i].is_drop()) << i;
  }
}

// The elements' output checked with OpenSSL: AES-128-CTR with counter block nonce|IV|1 and
// HMAC-SHA1 truncated to 96 bits over SPI..next header.
TEST(IPsecAES, OutputMatchesOpenSsl) {
  const std::string file = write_sa_file();
  Gateway g(file);
  std::vector<Bytes> frames;
  for (uint32_t len = kMinFrame; len <= kMaxFrame; len += 97) frames.push_back(inner_frame(len));
  auto out = encrypt(g, frames);
  const Bytes material = unhex(kEncKey), auth = unhex(kAuthKey);
  for (size_t i = 0; i < frames.size(); ++i) {
    const Bytes& o = out[i];
    ASSERT_FALSE(o.empty());
    const uint8_t* e = o.data() + kEspOff;
    const size_t esp_len = o.size() - kEspOff;
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    HMAC(EVP_sha1(), auth.data(), static_cast<int>(auth.size()), e, esp_len - kIcvLen, mac, &n);
    EXPECT_TRUE(std::equal(mac, mac + kIcvLen, e + esp_len - kIcvLen)) << "ICV of packet " << i;
    uint8_t block[16] = {};
    std::copy(material.begin() + kAesKeyLen, material.end(), block);
    std::copy(e + kHdrLen, e + kHdrIvLen, block + kCtrNonceLen);
    block[15] = 1;
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    ASSERT_EQ(EVP_DecryptInit_ex(ctx, EVP_aes_128_ctr(), nullptr, material.data(), block), 1);
    const int clen = static_cast<int>(esp_len - kHdrIvLen - kIcvLen);
    Bytes plain(clen);
    int outl = 0;
    ASSERT_EQ(EVP_DecryptUpdate(ctx, plain.data(), &outl, e + kHdrIvLen, clen), 1);
    EVP_CIPHER_CTX_free(ctx);
    const Bytes& in = frames[i];
    EXPECT_TRUE(std::equal(in.begin() + kEtherHdrLen, in.end(), plain.begin())) << i;
    EXPECT_EQ(plain.back(), kNextHeaderIpv4);
  }
}

TEST(IPsecAES, DropsPacketsWithoutSaOrRoom) {
  const std::string file = write_sa_file();
  for (const char* cls : {"IPsecAES", "IPsecAuthHMACSHA1"}) {
    auto e = testing::make_or_fail(cls, {file});
    ASSERT_NE(e, nullptr);
    PacketBatch batch;
    batch.push(testing::make_packet(inner_frame(kMinFrame)));
    anno(batch.at(0)).flow_id = 99;
    batch.push(testing::make_packet(inner_frame(kMinFrame)));
    anno(batch.at(1)).flow_id = 0;
    for (const Bytes& f : testing::prefixes(inner_frame(kMinFrame), kEspOff + kMinEspLen - 1)) {
      batch.push(testing::make_packet(f));
      anno(batch.at(batch.count() - 1)).flow_id = 0;
    }
    auto v = step(*e, batch);
    EXPECT_EQ(testing::drop_reason(*e, v[0]), "no-sa") << cls;
    EXPECT_FALSE(v[1].is_drop()) << cls;  // 64 bytes is enough room for a (garbage) ESP packet
    for (size_t i = 2; i < v.size(); ++i) EXPECT_EQ(testing::drop_reason(*e, v[i]), "truncated");
    testing::free_batch(batch);
  }
}

TEST(IPsecESPDecap, RoundTripAllSizes) {
  const std::string file = write_sa_file();
  Gateway g(file);
  std::vector<Bytes> frames;
  for (uint32_t len = kMinFrame; len <= kMaxFrame; len += kSizeStep)
    frames.push_back(inner_frame(len, kInnerDst, len));
  frames.push_back(inner_frame(kMaxFrame));
  for (size_t first = 0; first < frames.size(); first += kMaxBatch) {
    std::vector<Bytes> chunk(frames.begin() + first,
                             frames.begin() + std::min(frames.size(), first + kMaxBatch));
    auto esp_frames = encrypt(g, chunk);
    auto d = decrypt(g, esp_frames);
    for (size_t i = 0; i < chunk.size(); ++i) {
      ASSERT_FALSE(d.verdicts[i].is_drop())
          << chunk[i].size() << ": " << testing::drop_reason(*g.decap, d.verdicts[i]);
      EXPECT_EQ(d.frames[i], chunk[i]) << "frame of " << chunk[i].size() << " bytes";
    }
  }
}

TEST(IPsecESPDecap, TamperingAnyByteFailsTheIcv) {
  const std::string file = write_sa_file();
  Gateway g(file);
  const Bytes esp_frame = encrypt(g, {inner_frame(100)})[0];
  std::vector<Bytes> tampered;
  for (size_t k = kEspOff + kSpiLen; k < esp_frame.size(); ++k) {
    Bytes t = esp_frame;
    t[k] ^= kTamperBit;
    tampered.push_back(t);
  }
  auto d = decrypt(g, tampered);
  for (size_t i = 0; i < tampered.size(); ++i)
    EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[i]), "bad-icv") << "byte " << i;
  // The untouched packet still passes: failed ICVs do not move the replay window.
  EXPECT_FALSE(decrypt(g, {esp_frame}).verdicts[0].is_drop());
}

TEST(IPsecESPDecap, ReplayIsDropped) {
  const std::string file = write_sa_file();
  Gateway g(file);
  std::vector<Bytes> frames(SaConfig::kDefaultReplayWindow + 2, inner_frame(kMinFrame));
  auto esp_frames = encrypt(g, frames);
  // Newest first, then the oldest (left of the window), then a duplicate in one batch.
  auto d = decrypt(g, {esp_frames.back()});
  EXPECT_FALSE(d.verdicts[0].is_drop());
  d = decrypt(g, {esp_frames.back(), esp_frames[0], esp_frames[5], esp_frames[5]});
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[0]), "replayed");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[1]), "replayed");
  EXPECT_FALSE(d.verdicts[2].is_drop());
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[3]), "replayed");
  EXPECT_EQ(d.frames[2], frames[5]);
}

TEST(IPsecESPDecap, DropsWithReasons) {
  const std::string file = write_sa_file();
  Gateway g(file);
  const Bytes good = encrypt(g, {inner_frame(100)})[0];
  Bytes unknown = good;
  store_be32(unknown.data() + kEspOff, 0x9999);
  Bytes not_esp = good;
  not_esp[kOuterIpOffset + 9] = 17;
  Bytes long_total = good;
  store_be16(long_total.data() + kOuterIpOffset + 2, static_cast<uint16_t>(good.size()));
  const auto short_esp = Bytes(good.begin(), good.begin() + kEspOff + kMinEspLen - 1);
  auto d = decrypt(g, {unknown, not_esp, long_total, short_esp, testing::ether_frame(0x0806),
                       inner_frame(kMinFrame)});
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[0]), "unknown-spi");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[1]), "not-esp");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[2]), "truncated");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[3]), "truncated");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[4]), "not-esp");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[5]), "not-esp");
}

// A correctly authenticated packet whose padding is wrong: built by hand with the SA's keys.
TEST(IPsecESPDecap, BadPaddingAndNextHeader) {
  const std::string file = write_sa_file();
  Gateway g(file);
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto);
  const Bytes material = unhex(kEncKey), auth = unhex(kAuthKey);
  AesKey akey;
  HmacSha1Key hkey;
  (*crypto)->expand_aes(material.data(), kAesKeyLen, material.data() + kAesKeyLen, akey);
  (*crypto)->prepare_hmac_sha1(auth.data(), auth.size(), hkey);
  auto forge = [&](uint32_t seq, uint8_t pad_byte, uint8_t next_header) {
    Bytes f = encrypt(g, {inner_frame(kOnePadFrame)})[0];
    uint8_t* e = f.data() + kEspOff;
    store_be32(e + kSpiLen, seq);
    alignas(16) uint8_t nonce_iv[kCtrNonceIvLen];
    std::copy(material.begin() + kAesKeyLen, material.end(), nonce_iv);
    std::copy(e + kHdrLen, e + kHdrIvLen, nonce_iv + kCtrNonceLen);
    const size_t clen = f.size() - kEspOff - kHdrIvLen - kIcvLen;
    (*crypto)->ctr(akey, nonce_iv, e + kHdrIvLen, clen, 0);  // decrypt
    EXPECT_TRUE((*crypto)->finish().empty());
    e[kHdrIvLen + clen - 3] = pad_byte;
    e[kHdrIvLen + clen - 1] = next_header;
    (*crypto)->ctr(akey, nonce_iv, e + kHdrIvLen, clen, 0);  // encrypt again
    EXPECT_TRUE((*crypto)->finish().empty());
    (*crypto)->hmac_sha1(hkey, e, f.size() - kEspOff - kIcvLen, f.data() + f.size() - kIcvLen,
                         kIcvLen, 0);
    EXPECT_TRUE((*crypto)->finish().empty());
    return f;
  };
  auto d = decrypt(
      g, {forge(1000, 7, kNextHeaderIpv4), forge(1001, 1, 41), forge(1002, 1, kNextHeaderIpv4)});
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[0]), "bad-padding");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[1]), "bad-inner");
  EXPECT_FALSE(d.verdicts[2].is_drop()) << testing::drop_reason(*g.decap, d.verdicts[2]);
}

TEST(IpsecElements, ConfigErrors) {
  EXPECT_NE(testing::config_error("IPsecESPEncap", {}).find("SA_FILE"), std::string::npos);
  const std::string err = testing::config_error("IPsecAES", {"/nonexistent/sa.txt"});
  EXPECT_NE(err.find("cannot open SA file /nonexistent/sa.txt"), std::string::npos) << err;
  const std::string bad = write_sa_file("4096 1.2.3.4\n");
  const std::string err2 = testing::config_error("IPsecESPDecap", {bad});
  EXPECT_NE(err2.find(bad + ":1: expected"), std::string::npos) << err2;
}

TEST(IPsecAES, CbcSaRoundTripAndOpenSslCheck) {
  const std::string file = write_sa_file(cbc_sa_text());
  Gateway g(file);
  std::vector<Bytes> frames;
  for (uint32_t len = kMinFrame; len <= kMaxFrame; len += kSizeStep * 3)
    frames.push_back(inner_frame(len, kInnerDst, len));
  frames.resize(std::min<size_t>(frames.size(), kMaxBatch));
  auto esp_frames = encrypt(g, frames);
  const Bytes key = unhex(kCbcKey);
  for (size_t i = 0; i < frames.size(); ++i) {
    const Bytes& o = esp_frames[i];
    ASSERT_FALSE(o.empty());
    const uint32_t inner_len = static_cast<uint32_t>(frames[i].size()) - kEtherHdrLen;
    const uint32_t cipher_len = inner_len + pad_len(inner_len, kAesBlockLen) + kTrailerLen;
    EXPECT_EQ(cipher_len % kAesBlockLen, 0u);
    EXPECT_EQ(o.size(), kEspOff + kHdrLen + kCbcIvLen + cipher_len + kIcvLen);
    EXPECT_EQ(load_be32(o.data() + kEspOff), kSpiCbc);
    const uint8_t* iv = o.data() + kEspOff + kHdrLen;
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    ASSERT_EQ(EVP_DecryptInit_ex(ctx, EVP_aes_128_cbc(), nullptr, key.data(), iv), 1);
    EVP_CIPHER_CTX_set_padding(ctx, 0);
    Bytes plain(cipher_len);
    int outl = 0;
    ASSERT_EQ(
        EVP_DecryptUpdate(ctx, plain.data(), &outl, iv + kCbcIvLen, static_cast<int>(cipher_len)),
        1);
    EVP_CIPHER_CTX_free(ctx);
    EXPECT_TRUE(std::equal(frames[i].begin() + kEtherHdrLen, frames[i].end(), plain.begin()));
    EXPECT_EQ(plain.back(), kNextHeaderIpv4);
  }
  // Two packets never share an IV.
  EXPECT_FALSE(std::equal(esp_frames[0].begin() + kEspOff + kHdrLen,
                          esp_frames[0].begin() + kEspOff + kHdrLen + kCbcIvLen,
                          esp_frames[1].begin() + kEspOff + kHdrLen));
  auto d = decrypt(g, esp_frames);
  for (size_t i = 0; i < frames.size(); ++i) {
    ASSERT_FALSE(d.verdicts[i].is_drop()) << testing::drop_reason(*g.decap, d.verdicts[i]);
    EXPECT_EQ(d.frames[i], frames[i]);
  }
  // Fresh packets (the ones above are in the replay window now).
  const auto fresh = encrypt(g, {inner_frame(kMinFrame), inner_frame(kMinFrame)});
  Bytes tampered = fresh[0];
  tampered[tampered.size() - kIcvLen - 1] ^= kTamperBit;
  Bytes not_blocks = fresh[1];
  not_blocks.resize(not_blocks.size() - 1);
  store_be16(not_blocks.data() + kOuterIpOffset + 2,
             static_cast<uint16_t>(not_blocks.size() - kEtherHdrLen));
  d = decrypt(g, {tampered, not_blocks});
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[0]), "bad-icv");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[1]), "truncated");
}

// --- deployment modes (issue 15): AES-256, GCM, ESN, large replay windows, ECN ----------------

namespace modes {

Bytes random_bytes(std::mt19937& rng, size_t n) {
  Bytes b(n);
  for (auto& x : b) x = static_cast<uint8_t>(rng());
  return b;
}

// OpenSSL's one-shot cipher of `in` (CTR, CBC without padding); the independent reference.
Bytes openssl_cipher(const EVP_CIPHER* c, const Bytes& key, const uint8_t* iv, const Bytes& in,
                     bool encrypt) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  EXPECT_EQ(EVP_CipherInit_ex(ctx, c, nullptr, key.data(), iv, encrypt ? 1 : 0), 1);
  EVP_CIPHER_CTX_set_padding(ctx, 0);
  Bytes out(in.size());
  int n = 0;
  EXPECT_EQ(EVP_CipherUpdate(ctx, out.data(), &n, in.data(), static_cast<int>(in.size())), 1);
  EVP_CIPHER_CTX_free(ctx);
  return out;
}

// OpenSSL's AES-GCM decryption of `cipher` with `tag`; nullopt-like empty + false when the tag
// does not verify.
bool openssl_gcm_open(const Bytes& key, const uint8_t* nonce, const Bytes& aad, const Bytes& cipher,
                      const uint8_t* tag, Bytes& plain) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  const EVP_CIPHER* c = key.size() == kAes256KeyLen ? EVP_aes_256_gcm() : EVP_aes_128_gcm();
  EXPECT_EQ(EVP_DecryptInit_ex(ctx, c, nullptr, nullptr, nullptr), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, kGcmNonceLen, nullptr), 1);
  EXPECT_EQ(EVP_DecryptInit_ex(ctx, nullptr, nullptr, key.data(), nonce), 1);
  int n = 0;
  EXPECT_EQ(EVP_DecryptUpdate(ctx, nullptr, &n, aad.data(), static_cast<int>(aad.size())), 1);
  plain.resize(cipher.size());
  EXPECT_EQ(
      EVP_DecryptUpdate(ctx, plain.data(), &n, cipher.data(), static_cast<int>(cipher.size())), 1);
  EXPECT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, kGcmIcvLen, const_cast<uint8_t*>(tag)),
            1);
  const bool ok = EVP_DecryptFinal_ex(ctx, plain.data() + n, &n) == 1;
  EVP_CIPHER_CTX_free(ctx);
  return ok;
}

const char* const kGcm256Material =
    "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4cafebabe";
const char* const kCtr256Material =
    "776befF2851db06f4c8a0542c8696f6c6a81af1eec96b4d37fc1d689e6c1c10400000060";
const char* const kCbc256Key = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";

// One SA per mode for 10.0.0.0/8 out and in: `opts` after the selector.
std::string sa_text(const std::string& material, const std::string& auth, const std::string& opts) {
  const std::string head = "4096 192.0.2.1 198.51.100.1 " + material + " " + auth + " ";
  return head + "10.0.0.0/8 DIR out " + opts + "\n" + head + "0.0.0.0/0 DIR in " + opts + "\n";
}

}  // namespace modes

TEST(IpsecCrypto, Aes256CtrAndCbcMatchOpenSsl) {
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto);
  std::mt19937 rng(11);
  for (size_t len : {16u, 48u, 1024u}) {
    const Bytes key = modes::random_bytes(rng, kAes256KeyLen),
                plain = modes::random_bytes(rng, len);
    const Bytes nonce_iv = modes::random_bytes(rng, kCtrNonceIvLen);
    Bytes iv = modes::random_bytes(rng, kCbcIvLen);
    AesKey k;
    (*crypto)->expand_aes(key.data(), key.size(), nonce_iv.data(), k);
    Bytes ctr = plain, cbc = plain;
    (*crypto)->ctr(k, nonce_iv.data(), ctr.data(), ctr.size(), 0);
    (*crypto)->cbc_encrypt(k, iv.data(), cbc.data(), cbc.size(), 1);
    ASSERT_TRUE((*crypto)->finish().empty());
    uint8_t block[16] = {};
    std::copy(nonce_iv.begin(), nonce_iv.end(), block);
    block[15] = 1;  // RFC 3686: the block counter starts at 1
    EXPECT_EQ(ctr, modes::openssl_cipher(EVP_aes_256_ctr(), key, block, plain, true)) << len;
    EXPECT_EQ(cbc, modes::openssl_cipher(EVP_aes_256_cbc(), key, iv.data(), plain, true)) << len;
  }
}

TEST(IpsecCrypto, GcmMatchesOpenSslBothWays) {
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto);
  std::mt19937 rng(12);
  for (size_t key_len : {kAesKeyLen, kAes256KeyLen}) {
    for (size_t len : {0u, 1u, 15u, 16u, 17u, 100u, 1500u}) {
      for (size_t aad_len : {8u, 12u}) {
        const Bytes key = modes::random_bytes(rng, key_len), salt = modes::random_bytes(rng, 4);
        const Bytes plain = modes::random_bytes(rng, len), aad = modes::random_bytes(rng, aad_len);
        GcmKey k;
        (*crypto)->expand_gcm(key.data(), key.size(), salt.data(), k);
        Bytes nonce = salt, iv = modes::random_bytes(rng, kGcmIvLen);
        nonce.insert(nonce.end(), iv.begin(), iv.end());
        Bytes data = plain;
        uint8_t tag[kGcmIcvLen];
        (*crypto)->gcm(k, true, nonce.data(), aad.data(), aad.size(), data.data(), data.size(), tag,
                       0);
        ASSERT_TRUE((*crypto)->finish().empty());
        Bytes opened;
        ASSERT_TRUE(modes::openssl_gcm_open(key, nonce.data(), aad, data, tag, opened))
            << key_len << " " << len << " " << aad_len;
        EXPECT_EQ(opened, plain);
        uint8_t back_tag[kGcmIcvLen];
        (*crypto)->gcm(k, false, nonce.data(), aad.data(), aad.size(), data.data(), data.size(),
                       back_tag, 1);
        ASSERT_TRUE((*crypto)->finish().empty());
        EXPECT_EQ(data, plain);
        EXPECT_TRUE(std::equal(tag, tag + kGcmIcvLen, back_tag));
        Bytes other_aad = aad;
        other_aad[0] ^= 1;
        Bytes reencrypted = plain;
        (*crypto)->gcm(k, true, nonce.data(), aad.data(), aad.size(), reencrypted.data(),
                       reencrypted.size(), tag, 2);
        ASSERT_TRUE((*crypto)->finish().empty());
        EXPECT_FALSE(
            modes::openssl_gcm_open(key, nonce.data(), other_aad, reencrypted, tag, opened));
      }
    }
  }
}

// McGrew and Viega, "The Galois/Counter Mode of Operation (GCM)", test cases 4 (AES-128) and
// 16 (AES-256): 96-bit IV, 20 bytes of AAD, 60 bytes of plaintext (the vectors RFC 4106 §8
// points implementers to; its nonce is salt | explicit IV, so the IV's first 4 bytes are the
// SA's salt here).
struct GcmVector {
  const char* key;
  const char* cipher;
  const char* tag;
};
const GcmVector kGcmVectors[] = {
    {"feffe9928665731c6d6a8f9467308308",
     "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e21d514b25466931c7d8f6a5aac84"
     "aa051ba30b396a0aac973d58e091",
     "5bc94fbc3221a5db94fae95ae7121a47"},
    {"feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308",
     "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa8cb08e48590dbb3da7b08b1056"
     "828838c5f61e6393ba7a0abcc9f662",
     "76fc6ece0f4e1768cddf8853bb2d551b"},
};
constexpr const char* kGcmVectorPlain =
    "d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a721c3c0c95956809532fcf0e2449a6"
    "b525b16aedf5aa0de657ba637b39";
constexpr const char* kGcmVectorAad = "feedfacedeadbeeffeedfacedeadbeefabaddad2";
constexpr const char* kGcmVectorIv = "cafebabefacedbaddecaf888";

TEST(IpsecCrypto, GcmSpecVectors) {
  auto crypto = MbCrypto::create();
  ASSERT_TRUE(crypto) << crypto.error();
  const Bytes nonce = unhex(kGcmVectorIv), aad = unhex(kGcmVectorAad);
  for (const GcmVector& v : kGcmVectors) {
    const Bytes key = unhex(v.key);
    GcmKey k;
    (*crypto)->expand_gcm(key.data(), key.size(), nonce.data(), k);
    Bytes data = unhex(kGcmVectorPlain);
    uint8_t tag[kGcmIcvLen];
    (*crypto)->gcm(k, true, nonce.data(), aad.data(), aad.size(), data.data(), data.size(), tag, 0);
    ASSERT_TRUE((*crypto)->finish().empty());
    EXPECT_EQ(data, unhex(v.cipher)) << v.key;
    EXPECT_EQ(Bytes(tag, tag + kGcmIcvLen), unhex(v.tag)) << v.key;
    uint8_t back_tag[kGcmIcvLen];
    (*crypto)->gcm(k, false, nonce.data(), aad.data(), aad.size(), data.data(), data.size(),
                   back_tag, 1);
    ASSERT_TRUE((*crypto)->finish().empty());
    EXPECT_EQ(data, unhex(kGcmVectorPlain)) << "decryption with " << v.key;
    EXPECT_EQ(Bytes(back_tag, back_tag + kGcmIcvLen), unhex(v.tag)) << v.key;
  }
}

TEST(IpsecSa, ParsesModesAndOptions) {
  const std::string gcm = modes::sa_text(modes::kGcm256Material, "-", "CIPHER aes-gcm ESN on");
  auto sas = parse_sa_file(gcm + "8192 1.2.3.4 5.6.7.8 " + modes::kCbc256Key + " " + kAuthKey +
                               " 0.0.0.0/0 REPLAY 4096 DIR in\n" + "8193 1.2.3.4 5.6.7.8 " +
                               modes::kCtr256Material + " " + kAuthKey + " 11.0.0.0/8\n",
                           "sa.txt");
  ASSERT_TRUE(sas) << sas.error();
  ASSERT_EQ(sas->size(), 4u);
  EXPECT_EQ((*sas)[0].cipher, EspCipher::kAesGcm);
  EXPECT_EQ((*sas)[0].key_len, kAes256KeyLen);
  EXPECT_TRUE((*sas)[0].esn);
  EXPECT_EQ((*sas)[0].nonce[0], 0xca);
  EXPECT_EQ((*sas)[0].icv_len(), kGcmIcvLen);
  EXPECT_TRUE((*sas)[0].device_aes());
  EXPECT_TRUE((*sas)[0].device_hmac());  // GCM passes the HMAC kernel untouched
  EXPECT_EQ((*sas)[1].dir, SaDir::kIn);
  EXPECT_EQ((*sas)[2].cipher, EspCipher::kAesCbc);
  EXPECT_EQ((*sas)[2].key_len, kAes256KeyLen);
  EXPECT_EQ((*sas)[2].replay_window, 4096);
  EXPECT_FALSE((*sas)[2].device_aes());  // CBC stays on the CPU
  EXPECT_EQ((*sas)[2].dir, SaDir::kIn);
  EXPECT_EQ((*sas)[3].cipher, EspCipher::kAesCtr);
  EXPECT_EQ((*sas)[3].key_len, kAes256KeyLen);
  EXPECT_FALSE((*sas)[3].esn);
  EXPECT_EQ((*sas)[3].replay_window, SaConfig::kDefaultReplayWindow);

  const std::string keys = std::string(kEncKey) + " " + kAuthKey;
  const std::string head = "4096 1.2.3.4 5.6.7.8 ";
  const std::pair<std::string, std::string> cases[] = {
      {head + keys + " 10.0.0.0/8 REPLAY 0", "sa.txt:1: REPLAY '0' is not a window of 1..4096"},
      {head + keys + " 10.0.0.0/8 REPLAY 4097", "sa.txt:1: REPLAY '4097'"},
      {head + keys + " 10.0.0.0/8 ESN yes", "sa.txt:1: ESN 'yes' is neither 'on' nor 'off'"},
      {head + keys + " 10.0.0.0/8 CIPHER des", "sa.txt:1: CIPHER 'des' is not aes-ctr"},
      {head + keys + " 10.0.0.0/8 LIFETIME 5", "sa.txt:1: unknown option 'LIFETIME'"},
      {head + keys + " 10.0.0.0/8 DIR in ESN", "sa.txt:1: option 'ESN' has no value"},
      {head + keys + " 10.0.0.0/8 CIPHER aes-gcm", "sa.txt:1: aes-gcm authenticates by itself"},
      {head + modes::kCbc256Key + " - 10.0.0.0/8 CIPHER aes-gcm",
       "sa.txt:1: aes-gcm key material must be 32 or 64 hex digits of key and 8 of salt"},
      {head + kEncKey + " " + kAuthKey + " 10.0.0.0/8 CIPHER aes-cbc",
       "sa.txt:1: aes-cbc key must be 32 or 64 hex digits"},
  };
  for (const auto& [line, want] : cases) {
    auto r = parse_sa_file(line + "\n", "sa.txt");
    ASSERT_FALSE(r) << line;
    EXPECT_EQ(r.error().rfind(want, 0), 0u) << r.error();
  }
}

// The window against a brute-force model (the set of numbers received): random arrivals with
// jumps, duplicates and stragglers, for windows of 1 to 4096 packets.
TEST(IpsecSa, ReplayWindowMatchesModel) {
  std::mt19937_64 rng(13);
  for (uint32_t size : {1u, 2u, 63u, 64u, 65u, 1000u, 4096u}) {
    ReplayWindow w(size, false);
    std::vector<uint64_t> received;
    uint64_t top = 0;
    for (int k = 0; k < 20000; ++k) {
      uint64_t seq;
      switch (rng() % 4) {
        case 0:
          seq = top + 1 + rng() % 3;
          break;
        case 1:
          seq = top + rng() % (3 * uint64_t{size} + 10000);
          break;
        default:
          seq = top > 0 ? top - rng() % std::min<uint64_t>(top, 2 * uint64_t{size} + 2) : 1;
      }
      const bool seen = std::find(received.begin(), received.end(), seq) != received.end();
      const bool want = seq != 0 && !seen && (seq > top || top - seq < size);
      ASSERT_EQ(w.check(seq), want) << "window " << size << " top " << top << " seq " << seq;
      ASSERT_EQ(w.update(seq), want);
      if (want) {
        received.push_back(seq);
        top = std::max(top, seq);
      }
      if (received.size() > 3 * size + 64)
        received.erase(std::remove_if(received.begin(), received.end(),
                                      [&](uint64_t s) { return top - s >= size; }),
                       received.end());
    }
    EXPECT_EQ(w.top(), top);
  }
}

// RFC 4303 Appendix A2.2: the high half from the low half and the window.
TEST(IpsecSa, EsnInference) {
  constexpr uint64_t k2to32 = uint64_t{1} << 32;
  ReplayWindow w(64, true);
  EXPECT_EQ(w.infer(5), 5u);
  EXPECT_EQ(w.infer(0xFFFFFFF0u), 0xFFFFFFF0u);  // case B at the start: no subspace before 0
  ASSERT_TRUE(w.update(k2to32 - 10));
  EXPECT_EQ(w.infer(0xFFFFFFF0u), 0xFFFFFFF0u);  // case A, in the window
  EXPECT_EQ(w.infer(0xFFFFFFF5u), 0xFFFFFFF5u);
  EXPECT_EQ(w.infer(3), k2to32 + 3);  // case A, below the window: the next subspace
  ASSERT_TRUE(w.update(k2to32 + 5));
  EXPECT_EQ(w.infer(0xFFFFFFF0u), 0xFFFFFFF0u);  // case B: the window reaches back
  EXPECT_EQ(w.infer(6), k2to32 + 6);
  EXPECT_EQ(w.infer(0x80000000u), k2to32 + 0x80000000u);
  EXPECT_FALSE(w.check(k2to32 - 10));  // received before the wrap
  EXPECT_TRUE(w.check(k2to32 - 11));   // in the window, never received
  ReplayWindow plain(64, false);
  ASSERT_TRUE(plain.update(0xFFFFFFF0u));
  EXPECT_EQ(plain.infer(3), 3u);  // without ESN the header's number is the number
}

TEST(IPsecESPEncap, EsnRunsPast2To32AndDecapFollows) {
  constexpr uint64_t k2to32 = uint64_t{1} << 32;
  const std::string file = write_sa_file(modes::sa_text(kEncKey, kAuthKey, "ESN on"));
  Gateway g(file);
  auto* encap = dynamic_cast<IPsecESPEncap*>(g.encap.get());
  ASSERT_NE(encap, nullptr);
  encap->table().at(0).last_seq.store(k2to32 - 3);
  std::vector<Bytes> frames;
  for (uint32_t k = 0; k < 6; ++k) frames.push_back(inner_frame(kMinFrame + 10 * k, kInnerDst, k));
  const std::vector<Bytes> esp = encrypt(g, frames);
  const Bytes auth = unhex(kAuthKey);
  for (uint32_t k = 0; k < esp.size(); ++k) {
    ASSERT_FALSE(esp[k].empty()) << k;
    const uint64_t seq = k2to32 - 2 + k;
    const uint8_t* e = esp[k].data() + kEspOff;
    EXPECT_EQ(load_be32(e + kSpiLen), static_cast<uint32_t>(seq)) << k;
    EXPECT_EQ(load_be32(e + kHdrLen), static_cast<uint32_t>(seq >> 32)) << k;  // CTR IV = seq
    // RFC 4303 §2.2.1: the ICV covers the high half appended after the trailer.
    const size_t esp_len = esp[k].size() - kEspOff;
    Bytes msg(e, e + esp_len - kIcvLen);
    msg.push_back(0), msg.push_back(0), msg.push_back(0);
    msg.push_back(static_cast<uint8_t>(seq >> 32));
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    HMAC(EVP_sha1(), auth.data(), static_cast<int>(auth.size()), msg.data(), msg.size(), mac, &n);
    EXPECT_TRUE(std::equal(mac, mac + kIcvLen, e + esp_len - kIcvLen)) << k;
  }
  // One batch over the wrap: the receiver completes the packets before the wrap first.
  const Decapped d = decrypt(g, esp);
  for (uint32_t k = 0; k < esp.size(); ++k) {
    ASSERT_FALSE(d.verdicts[k].is_drop()) << k << testing::drop_reason(*g.decap, d.verdicts[k]);
    EXPECT_EQ(d.frames[k], frames[k]);
  }
  EXPECT_EQ(testing::drop_reason(*g.decap, decrypt(g, {esp[1]}).verdicts[0]), "replayed");
}

TEST(IPsecESPEncap, WithoutEsnTheSaStopsAt2To32) {
  const std::string file = write_sa_file();
  Gateway g(file);
  auto* encap = dynamic_cast<IPsecESPEncap*>(g.encap.get());
  ASSERT_NE(encap, nullptr);
  encap->table().at(0).last_seq.store(0xFFFFFFFEu);
  std::vector<Verdict> v;
  encrypt(g, {inner_frame(kMinFrame), inner_frame(kMinFrame)}, &v);
  EXPECT_FALSE(v[0].is_drop());
  EXPECT_EQ(testing::drop_reason(*g.encap, v[1]), "seq-overflow");
}

// GCM SAs through the whole gateway, both key sizes, with and without ESN: round trips, OpenSSL
// opens every packet, any flipped byte fails the ICV.
TEST(IPsecAES, GcmGatewayRoundTripAndOpenSslCheck) {
  for (const char* material :
       {"2b7e151628aed2a6abf7158809cf4f3cdeadbeef", modes::kGcm256Material}) {
    for (bool esn : {false, true}) {
      const std::string file = write_sa_file(
          modes::sa_text(material, "-", std::string("CIPHER aes-gcm ESN ") + (esn ? "on" : "off")));
      Gateway g(file);
      std::vector<Bytes> frames;
      for (uint32_t len = kMinFrame; len <= kMaxFrame && frames.size() < kMaxBatch; len += 23)
        frames.push_back(inner_frame(len, kInnerDst, len));
      const std::vector<Bytes> esp = encrypt(g, frames);
      const Bytes m = unhex(material);
      const Bytes key(m.begin(), m.end() - kGcmSaltLen);
      for (size_t i = 0; i < esp.size(); ++i) {
        ASSERT_FALSE(esp[i].empty());
        const uint8_t* e = esp[i].data() + kEspOff;
        const size_t esp_len = esp[i].size() - kEspOff;
        Bytes nonce(m.end() - kGcmSaltLen, m.end());
        nonce.insert(nonce.end(), e + kHdrLen, e + kHdrLen + kGcmIvLen);
        Bytes aad(e, e + kHdrLen);
        if (esn) aad.insert(aad.begin() + kSpiLen, 4, 0);  // SPI | high 32 (0) | low 32
        const Bytes cipher(e + kHdrLen + kGcmIvLen, e + esp_len - kGcmIcvLen);
        Bytes plain;
        ASSERT_TRUE(modes::openssl_gcm_open(key, nonce.data(), aad, cipher,
                                            e + esp_len - kGcmIcvLen, plain))
            << "packet " << i << (esn ? " ESN" : "");
        EXPECT_TRUE(std::equal(frames[i].begin() + kEtherHdrLen, frames[i].end(), plain.begin()));
      }
      const Decapped d = decrypt(g, esp);
      for (size_t i = 0; i < esp.size(); ++i) {
        ASSERT_FALSE(d.verdicts[i].is_drop()) << testing::drop_reason(*g.decap, d.verdicts[i]);
        EXPECT_EQ(d.frames[i], frames[i]);
      }
      std::vector<Bytes> tampered;
      const Bytes fresh = encrypt(g, {inner_frame(100)})[0];
      for (size_t k = kEspOff + kSpiLen; k < fresh.size(); ++k) {
        Bytes t = fresh;
        t[k] ^= kTamperBit;
        tampered.push_back(t);
      }
      const Decapped bad = decrypt(g, tampered);
      for (size_t i = 0; i < tampered.size(); ++i)
        EXPECT_EQ(testing::drop_reason(*g.decap, bad.verdicts[i]), "bad-icv") << "byte " << i;
      EXPECT_FALSE(decrypt(g, {fresh}).verdicts[0].is_drop());
    }
  }
}

TEST(IPsecESPDecap, ReplayWindowOfTheSa) {
  const std::string file = write_sa_file(modes::sa_text(kEncKey, kAuthKey, "REPLAY 1024"));
  Gateway g(file);
  std::vector<Bytes> frames(1200, inner_frame(kMinFrame));
  std::vector<Bytes> esp;
  for (size_t first = 0; first < frames.size(); first += kMaxBatch) {
    std::vector<Bytes> chunk(frames.begin() + first,
                             frames.begin() + std::min(frames.size(), first + kMaxBatch));
    for (Bytes& b : encrypt(g, chunk)) esp.push_back(std::move(b));
  }
  EXPECT_FALSE(decrypt(g, {esp[1199]}).verdicts[0].is_drop());         // seq 1200
  EXPECT_FALSE(decrypt(g, {esp[1200 - 1024]}).verdicts[0].is_drop());  // 1023 behind
  EXPECT_EQ(testing::drop_reason(*g.decap, decrypt(g, {esp[1200 - 1025]}).verdicts[0]), "replayed");
}

// RFC 6040 §4.2, Figure 4: inner (rows) x outer (columns) ECN -> inner after; -1: drop.
TEST(IPsecESPDecap, EcnDecapsulationFollowsRfc6040) {
  constexpr int kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3, kDrop = -1;
  const int want[4][4] = {
      /* Not-ECT */ {kNotEct, kNotEct, kNotEct, kDrop},
      /* ECT(1)  */ {kEct1, kEct1, kEct1, kCe},
      /* ECT(0)  */ {kEct0, kEct1, kEct0, kCe},
      /* CE      */ {kCe, kCe, kCe, kCe},
  };
  for (int inner = 0; inner < 4; ++inner) {
    for (int outer = 0; outer < 4; ++outer) {
      Bytes f = inner_frame(kMinFrame);
      uint8_t* ip = f.data() + kEtherHdrLen;
      ip[1] = static_cast<uint8_t>(0xB8 | inner);  // DSCP EF
      store_be16(ip + 10, 0);
      const uint16_t ck = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(ip));
      std::memcpy(ip + 10, &ck, sizeof ck);
      const bool kept = decapsulate_ecn(static_cast<uint8_t>(0x20 | outer), ip);
      ASSERT_EQ(kept, want[inner][outer] != kDrop) << inner << " " << outer;
      if (!kept) continue;
      EXPECT_EQ(ip[1], 0xB8 | want[inner][outer]) << inner << " " << outer;  // DSCP kept
      EXPECT_EQ(rte_raw_cksum(ip, kIpv4HdrLen), 0xFFFF) << "checksum " << inner << " " << outer;
    }
  }
}

// A fragment of an ESP packet is named as such, not failed as a bad ICV or an unknown SPI.
TEST(IPsecESPDecap, FragmentsAreDroppedAsFragments) {
  const std::string file = write_sa_file();
  Gateway g(file);
  const Bytes good = encrypt(g, {inner_frame(200)})[0];
  Bytes first = good, later = good;
  store_be16(first.data() + kOuterIpOffset + 6, 0x2000);  // more fragments
  store_be16(later.data() + kOuterIpOffset + 6, 0x0010);  // offset 128
  const Decapped d = decrypt(g, {first, later, good});
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[0]), "fragment");
  EXPECT_EQ(testing::drop_reason(*g.decap, d.verdicts[1]), "fragment");
  EXPECT_FALSE(d.verdicts[2].is_drop());
}

TEST(IvSource, GivesDistinctUnpredictableBlocks) {
  auto a = IvSource::create(), b = IvSource::create();
  ASSERT_TRUE(a && b);
  std::vector<std::pair<uint64_t, uint64_t>> ivs;
  size_t ones = 0;
  for (int k = 0; k < 5000; ++k) {
    uint8_t iv[kCbcIvLen];
    ASSERT_TRUE((*(k % 2 ? a : b))->fill(iv, sizeof iv));
    std::pair<uint64_t, uint64_t> v;
    std::memcpy(&v.first, iv, sizeof v.first);
    std::memcpy(&v.second, iv + sizeof v.first, sizeof v.second);
    ones += __builtin_popcountll(v.first) + __builtin_popcountll(v.second);
    ivs.push_back(v);
  }
  std::sort(ivs.begin(), ivs.end());
  EXPECT_EQ(std::adjacent_find(ivs.begin(), ivs.end()), ivs.end());  // two sources, no repeat
  const double share = static_cast<double>(ones) / (ivs.size() * kCbcIvLen * 8);
  EXPECT_NEAR(share, 0.5, 0.01);
}

// --- SA lifetimes (RFC 4301 4.4.2.1) and rekeying ------------------------------------------

// An outbound and an inbound SA for 10.0.0.0/8 with the same keys, each with its own options.
std::string life_sa_text(const std::string& out_opts, const std::string& in_opts) {
  const std::string head = "4096 192.0.2.1 198.51.100.1 " + std::string(kEncKey) + " " + kAuthKey;
  return head + " 10.0.0.0/8 DIR out " + out_opts + "\n" + head + " 0.0.0.0/0 DIR in " + in_opts +
         "\n";
}

std::vector<std::string_view> reasons(const Element& e, const std::vector<Verdict>& v) {
  std::vector<std::string_view> out;
  for (const Verdict& x : v) out.push_back(x.is_drop() ? testing::drop_reason(e, x) : "");
  return out;
}

TEST(IpsecSa, ParsesLifetimes) {
  auto sas = parse_sa_file(
      life_sa_text("LIFE_PACKETS 10,20 LIFE_BYTES -,5000 LIFE_SECONDS 60,- ESN on", ""), "sa.txt");
  ASSERT_TRUE(sas) << sas.error();
  const SaLifetime& l = (*sas)[0].life;
  EXPECT_EQ(l.packets.soft, 10u);
  EXPECT_EQ(l.packets.hard, 20u);
  EXPECT_EQ(l.bytes.soft, 0u);
  EXPECT_EQ(l.bytes.hard, 5000u);
  EXPECT_EQ(l.seconds.soft, 60u);
  EXPECT_EQ(l.seconds.hard, 0u);
  EXPECT_TRUE((*sas)[0].esn);
  EXPECT_FALSE((*sas)[1].life.any());
  const std::pair<std::string, std::string> cases[] = {
      {"LIFE_PACKETS 20,10", "sa.txt:1: LIFE_PACKETS '20,10': SOFT must be below HARD"},
      {"LIFE_PACKETS 10,10", "sa.txt:1: LIFE_PACKETS '10,10': SOFT must be below HARD"},
      {"LIFE_BYTES 100", "sa.txt:1: LIFE_BYTES '100' is not SOFT,HARD"},
      {"LIFE_BYTES 0,100", "sa.txt:1: LIFE_BYTES '0,100' is not SOFT,HARD"},
      {"LIFE_SECONDS x,1", "sa.txt:1: LIFE_SECONDS 'x,1' is not SOFT,HARD"},
      {"LIFE_SECONDS -,-", "sa.txt:1: LIFE_SECONDS '-,-' sets no limit"},
      {"LIFE_SECONDS", "sa.txt:1: option 'LIFE_SECONDS' has no value"},
      {"LIFE_MINUTES 1,2", "sa.txt:1: unknown option 'LIFE_MINUTES'"},
  };
  for (const auto& [opts, want] : cases) {
    auto r = parse_sa_file(life_sa_text(opts, ""), "sa.txt");
    ASSERT_FALSE(r) << opts;
    EXPECT_EQ(r.error().rfind(want, 0), 0u) << r.error();
  }
}

// LIFE_PACKETS: the soft limit is reported once and the SA goes on; past the hard limit every
// packet is dropped as sa-expired. Outbound 2,4; inbound 1,3.
TEST(IpsecLifetime, PacketsSoftAndHardBothDirections) {
  const std::string file = write_sa_file(life_sa_text("LIFE_PACKETS 2,4", "LIFE_PACKETS 1,3"));
  Gateway g(file);
  std::vector<Bytes> frames;
  for (uint32_t k = 0; k < 5; ++k) frames.push_back(inner_frame(kMinFrame, kInnerDst, k));
  std::vector<Verdict> v;
  const std::vector<Bytes> esp = encrypt(g, frames, &v);
  EXPECT_EQ(reasons(*g.encap, v), (std::vector<std::string_view>{"", "", "", "", "sa-expired"}));
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 1u);
  EXPECT_EQ(testing::counter(*g.encap, "hard-expired"), 1u);
  encrypt(g, {frames[0]}, &v);
  EXPECT_EQ(testing::drop_reason(*g.encap, v[0]), "sa-expired");
  EXPECT_EQ(testing::counter(*g.encap, "hard-expired"), 1u);  // once per SA

  const Decapped first = decrypt(g, {esp[0]});
  EXPECT_FALSE(first.verdicts[0].is_drop());
  EXPECT_EQ(testing::counter(*g.decap, "soft-expired"), 1u);  // at the first packet
  const Decapped rest = decrypt(g, {esp[1], esp[2], esp[3]});
  EXPECT_EQ(reasons(*g.decap, rest.verdicts),
            (std::vector<std::string_view>{"", "", "sa-expired"}));
  EXPECT_EQ(rest.frames[1], frames[2]);
  EXPECT_EQ(testing::counter(*g.decap, "soft-expired"), 1u);
  EXPECT_EQ(testing::counter(*g.decap, "hard-expired"), 1u);
  // A forged packet does not count: its ICV fails before the lifetime is looked at.
  const std::string fresh = write_sa_file(life_sa_text("", "LIFE_PACKETS -,1"));
  Gateway h(fresh);
  const std::vector<Bytes> two = encrypt(h, {frames[0], frames[1]});
  Bytes forged = two[0];
  forged.back() ^= kTamperBit;
  EXPECT_EQ(reasons(*h.decap, decrypt(h, {forged, two[0], two[1]}).verdicts),
            (std::vector<std::string_view>{"bad-icv", "", "sa-expired"}));
}

// LIFE_BYTES counts inner IPv4 packets' total lengths: 50 bytes each here.
TEST(IpsecLifetime, BytesSoftAndHardBothDirections) {
  constexpr uint32_t kInnerLen = kMinFrame - kEtherHdrLen;
  static_assert(kInnerLen == 50);
  const std::string file = write_sa_file(life_sa_text("LIFE_BYTES 100,200", "LIFE_BYTES 120,150"));
  Gateway g(file);
  std::vector<Bytes> frames;
  for (uint32_t k = 0; k < 5; ++k) frames.push_back(inner_frame(kMinFrame, kInnerDst, k));
  std::vector<Verdict> v;
  const std::vector<Bytes> esp = encrypt(g, {frames[0]}, &v);
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 0u);
  const std::vector<Bytes> more = encrypt(g, {frames[1], frames[2], frames[3], frames[4]}, &v);
  EXPECT_EQ(reasons(*g.encap, v), (std::vector<std::string_view>{"", "", "", "sa-expired"}));
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 1u);  // at 100 bytes
  EXPECT_EQ(testing::counter(*g.encap, "hard-expired"), 1u);  // 250 > 200
  const Decapped d = decrypt(g, {esp[0], more[0], more[1], more[2]});
  EXPECT_EQ(reasons(*g.decap, d.verdicts),
            (std::vector<std::string_view>{"", "", "", "sa-expired"}));  // 200 > 150
  EXPECT_EQ(testing::counter(*g.decap, "soft-expired"), 1u);             // 150 >= 120
  EXPECT_EQ(testing::counter(*g.decap, "hard-expired"), 1u);
}

uint64_t g_fake_now_ns = 0;
uint64_t fake_clock() {
  return g_fake_now_ns;
}
// The SA clock stepped by hand for a test's duration.
struct FakeSaClock {
  explicit FakeSaClock(uint64_t start_ns) {
    g_fake_now_ns = start_ns;
    set_sa_clock(&fake_clock);
  }
  ~FakeSaClock() { set_sa_clock(nullptr); }
};

// LIFE_SECONDS from the table's build, with the clock stepped by the test.
TEST(IpsecLifetime, SecondsSoftAndHardBothDirections) {
  constexpr uint64_t kSecond = 1000000000;
  const FakeSaClock clock(1000 * kSecond);
  const std::string file = write_sa_file(life_sa_text("LIFE_SECONDS 10,20", "LIFE_SECONDS 10,20"));
  Gateway g(file);
  std::vector<Bytes> frames;
  for (uint32_t k = 0; k < 4; ++k) frames.push_back(inner_frame(kMinFrame, kInnerDst, k));
  std::vector<Verdict> v;
  const std::vector<Bytes> esp = encrypt(g, frames, &v);
  EXPECT_EQ(reasons(*g.encap, v), (std::vector<std::string_view>{"", "", "", ""}));
  g_fake_now_ns += 10 * kSecond - 1;
  encrypt(g, {frames[0]}, &v);
  EXPECT_FALSE(v[0].is_drop());
  EXPECT_FALSE(decrypt(g, {esp[0]}).verdicts[0].is_drop());
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 0u);
  EXPECT_EQ(testing::counter(*g.decap, "soft-expired"), 0u);
  g_fake_now_ns += 1;  // 10 s
  encrypt(g, {frames[0]}, &v);
  EXPECT_FALSE(v[0].is_drop());
  EXPECT_FALSE(decrypt(g, {esp[1]}).verdicts[0].is_drop());
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 1u);
  EXPECT_EQ(testing::counter(*g.decap, "soft-expired"), 1u);
  g_fake_now_ns += 10 * kSecond - 1;  // 20 s less 1 ns
  EXPECT_FALSE(decrypt(g, {esp[2]}).verdicts[0].is_drop());
  g_fake_now_ns += 1;  // 20 s
  encrypt(g, {frames[0]}, &v);
  EXPECT_EQ(testing::drop_reason(*g.encap, v[0]), "sa-expired");
  EXPECT_EQ(testing::drop_reason(*g.decap, decrypt(g, {esp[3]}).verdicts[0]), "sa-expired");
  EXPECT_EQ(testing::counter(*g.encap, "hard-expired"), 1u);
  EXPECT_EQ(testing::counter(*g.decap, "hard-expired"), 1u);
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 1u);
}

// Replaces the table behind `e` (and every element of the same SA file) with `file`, as a hot
// reload does, and moves this thread's tables on (a worker's quiescent point).
void reload(Element& e, const std::string& file) {
  auto old = e.table_slot()->replace(file);
  ASSERT_TRUE(old) << old.error();
  ASSERT_TRUE(e.table_slot()->settle(old.value()));
  ++t_table_epoch;
}

// A reload that keeps an SA keeps its lifetime counts.
TEST(IpsecLifetime, KeptAcrossReload) {
  const std::string text = life_sa_text("LIFE_PACKETS -,3", "");
  const std::string file = write_sa_file(text);
  Gateway g(file);
  std::vector<Verdict> v;
  encrypt(g, {inner_frame(kMinFrame), inner_frame(kMinFrame)}, &v);
  EXPECT_EQ(reasons(*g.encap, v), (std::vector<std::string_view>{"", ""}));
  reload(*g.encap, write_sa_file(text));
  encrypt(g, {inner_frame(kMinFrame), inner_frame(kMinFrame)}, &v);
  EXPECT_EQ(reasons(*g.encap, v), (std::vector<std::string_view>{"", "sa-expired"}));
}

// Make-before-break: the new file replaces the outbound SA by one of a new SPI and keys for the
// same selector and keeps the old inbound SA next to the new one. Packets encapsulated before
// the reload and still in flight decapsulate after it; nothing is lost.
TEST(IpsecLifetime, MakeBeforeBreakRekeyLosesNoPacket) {
  const std::string old_keys = std::string(kEncKey) + " " + kAuthKey;
  const std::string new_keys =
      "000102030405060708090a0b0c0d0e0f10111213 a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3";
  const std::string file = write_sa_file("4096 192.0.2.1 198.51.100.1 " + old_keys +
                                         " 10.0.0.0/8 DIR out LIFE_PACKETS 3,1000\n"
                                         "4096 192.0.2.1 198.51.100.1 " +
                                         old_keys + " 0.0.0.0/0 in\n");
  Gateway g(file);
  std::vector<Bytes> frames;
  for (uint32_t k = 0; k < 8; ++k) frames.push_back(inner_frame(kMinFrame + 10 * k, kInnerDst, k));
  const std::vector<Bytes> before = encrypt(g, {frames.begin(), frames.begin() + 4});
  EXPECT_EQ(testing::counter(*g.encap, "soft-expired"), 1u);  // time to rekey
  reload(*g.encap, write_sa_file("8192 192.0.2.1 198.51.100.1 " + new_keys +
                                 " 10.0.0.0/8 out\n"
                                 "4096 192.0.2.1 198.51.100.1 " +
                                 old_keys +
                                 " 0.0.0.0/0 in\n"
                                 "8192 192.0.2.1 198.51.100.1 " +
                                 new_keys + " 0.0.0.0/0 in\n"));
  const std::vector<Bytes> after = encrypt(g, {frames.begin() + 4, frames.end()});
  for (uint32_t k = 0; k < 4; ++k) {
    ASSERT_FALSE(before[k].empty() || after[k].empty()) << k;
    EXPECT_EQ(load_be32(before[k].data() + kEspOff), kSpiOut);
    EXPECT_EQ(load_be32(after[k].data() + kEspOff), kSpiOther);
    EXPECT_EQ(load_be32(after[k].data() + kEspOff + kSpiLen), k + 1);  // the new SA from 1
  }
  // The old SA's packets arrive interleaved with the new one's, after the reload.
  const std::vector<Bytes> wire = {after[0],  before[0], before[1], after[1],
                                   before[2], after[2],  after[3],  before[3]};
  const std::vector<Bytes> want = {frames[4], frames[0], frames[1], frames[5],
                                   frames[2], frames[6], frames[7], frames[3]};
  const Decapped d = decrypt(g, wire);
  for (uint32_t k = 0; k < wire.size(); ++k) {
    ASSERT_FALSE(d.verdicts[k].is_drop()) << k << testing::drop_reason(*g.decap, d.verdicts[k]);
    EXPECT_EQ(d.frames[k], want[k]) << k;
  }
}

}  // namespace
}  // namespace fulcrum
