// IPsecAESOffload and IPsecAuthHMACSHA1Offload in a pipeline (IPsecESPEncap -> balancer -> the
// two): device-only output byte for byte the CPU-only output (and the plain IPsecAES ->
// IPsecAuthHMACSHA1 output) with the two elements in separate tasks (CHAIN false), chained with
// two kernels (FUSE false) and fused; a fixed fraction loses nothing; AES-CBC SAs and malformed
// frames stay on the CPU with the CPU element's drops; the ICVs check against OpenSSL HMAC. Then
// the same with eight SAs of every mode the kernels take mixed in each batch (AES-128/256-CTR +
// HMAC-SHA1-96 and AES-128/256-GCM, each with and without ESN): device-only equals CPU-only, and
// OpenSSL verifies and decrypts every packet back to the frame that went in.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "elements/ipsec/ipsec_aes_offload.hh"
#include "elements/ipsec/ipsec_auth_hmac_sha1_offload.hh"
#include "lib/esp.hh"
#include "offload/ipsec_tables.hh"
#include "offload_testing.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Bytes = std::vector<uint8_t>;

constexpr uint32_t kPackets = 1500;
constexpr uint32_t kBurst = 64;
constexpr uint32_t kMinFrame = 42;
constexpr uint32_t kMaxFrame = 1514;
constexpr uint32_t kPayloadOffset = 42;
constexpr uint32_t kEspOffset = esp::kEtherHdrLen + esp::kIpv4HdrLen;
constexpr uint32_t kGarbage = 300;
constexpr uint32_t kGarbageMaxLen = 120;

const char* const kAuthA = "0102030405060708090a0b0c0d0e0f1011121314";
const char* const kAuthB = "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3";

// Two AES-CTR SAs (10.0.0.0/8, 172.16.0.0/12) and, with `cbc`, an AES-CBC one (192.168.0.0/16).
std::string sa_file(bool cbc) {
  const std::string path =
      testing::temp_path(cbc ? "ipsec-offload-cbc-sa.txt" : "ipsec-offload-sa.txt");
  std::string text =
      std::string("4096 192.0.2.1 198.51.100.1 2b7e151628aed2a6abf7158809cf4f3cdeadbeef ") +
      kAuthA +
      " 10.0.0.0/8\n"
      "8192 192.0.2.1 198.51.100.2 000102030405060708090a0b0c0d0e0fcafe0001 " +
      kAuthB + " 172.16.0.0/12\n";
  if (cbc)
    text += std::string("12288 192.0.2.1 198.51.100.3 06a9214036b8a15b512e03d534120006 ") + kAuthA +
            " 192.168.0.0/16\n";
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  if (f != nullptr) {
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  return path;
}

// UDP frames of random lengths 42..1514 with random payloads, to the SAs in turn (and one frame
// in 50 to no SA: IPsecESPEncap drops it).
std::vector<Bytes> frames(bool cbc) {
  std::mt19937 rng(17);
  std::vector<Bytes> out;
  for (uint32_t i = 0; i < kPackets; ++i) {
    const uint32_t which = i % (cbc ? 3 : 2);
    uint32_t dst = which == 0   ? RTE_IPV4(10, i % 256, 1, 2)
                   : which == 1 ? RTE_IPV4(172, 16, i % 256, 9)
                                : RTE_IPV4(192, 168, 3, i % 256);
    if (i % 50 == 49) dst = RTE_IPV4(8, 8, 8, 8);
    const uint32_t len =
        i % 3 == 0 ? kMinFrame + rng() % 40 : kMinFrame + rng() % (kMaxFrame - kMinFrame + 1);
    Bytes f = testing::ipv4_udp_frame(RTE_IPV4(10, 9, 9, 9), dst, 64, len);
    for (uint32_t k = kPayloadOffset; k < f.size(); ++k) f[k] = static_cast<uint8_t>(rng());
    out.push_back(f);
  }
  return out;
}

testing::PipelineOutcome run(const std::string& balancer, const std::string& aes_extra,
                             bool cbc = false, bool offload = true) {
  const std::string file = sa_file(cbc);
  const std::string opts = ", AGGREGATE 4, FLUSH_US 0";
  const std::string crypto =
      offload ? "a :: IPsecAESOffload(" + file + opts + aes_extra +
                    ") -> h :: IPsecAuthHMACSHA1Offload(" + file + opts + ")"
              : "a :: IPsecAES(" + file + ") -> h :: IPsecAuthHMACSHA1(" + file + ")";
  return testing::run_pipeline(
      "FromInput -> IPsecESPEncap(" + file + ") -> " + balancer + " -> " + crypto + " -> ToOutput;",
      frames(cbc), 1, "a", kBurst);
}

void expect_same(const testing::PipelineOutcome& got, const testing::PipelineOutcome& want) {
  EXPECT_EQ(got.dropped, want.dropped);
  ASSERT_EQ(got.frames.size(), want.frames.size());
  size_t bad = 0;
  for (size_t i = 0; i < got.frames.size(); ++i)
    bad += got.frames[i] != want.frames[i] || got.sent[i] != want.sent[i];
  EXPECT_EQ(bad, 0u);
}

// The same frames per packet (tag), in any order: batches given to the CPU overtake held ones.
void expect_same_packets(const testing::PipelineOutcome& got,
                         const testing::PipelineOutcome& want) {
  auto by_tag = [](const testing::PipelineOutcome& o) {
    std::vector<std::pair<uint16_t, Bytes>> v;
    for (size_t i = 0; i < o.frames.size(); ++i) v.emplace_back(o.sent[i].tag, o.frames[i]);
    std::sort(v.begin(), v.end());
    return v;
  };
  EXPECT_EQ(got.dropped, want.dropped);
  EXPECT_TRUE(by_tag(got) == by_tag(want));
}

const testing::PipelineOutcome& cpu_only() {
  static const testing::PipelineOutcome r = run("CPUOnly", "");
  return r;
}

// Frames that left through port 0 carrying an ESP packet (all but IPsecESPEncap's no-sa drops).
uint64_t esp_frames() {
  return kPackets - kPackets / 50;
}

// Frames whose ICV is not HMAC-SHA1-96 (OpenSSL) over SPI..next header with their SA's key
// (SPI 8192: kAuthB; 4096 and the CBC SA 12288: kAuthA).
size_t icv_mismatches(const std::vector<Bytes>& frames) {
  auto unhex = [](const std::string& hex) {
    Bytes k;
    for (size_t i = 0; i < hex.size(); i += 2)
      k.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
    return k;
  };
  const Bytes key_a = unhex(kAuthA), key_b = unhex(kAuthB);
  size_t bad = 0;
  for (const Bytes& f : frames) {
    const Bytes& key = esp::load_be32(f.data() + kEspOffset) == 8192 ? key_b : key_a;
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned n = 0;
    const size_t msg = f.size() - kEspOffset - esp::kEspIcvLen;
    HMAC(EVP_sha1(), key.data(), static_cast<int>(key.size()), f.data() + kEspOffset, msg, mac, &n);
    bad += std::memcmp(mac, f.data() + f.size() - esp::kEspIcvLen, esp::kEspIcvLen) != 0;
  }
  return bad;
}

TEST(OffloadIpsecElement, CpuOnlyIsThePlainCpuPipelineAndSignsAsOpenSSL) {
  const testing::PipelineOutcome& cpu = cpu_only();
  expect_same(cpu, run("CPUOnly", "", false, false));
  ASSERT_EQ(cpu.frames.size(), esp_frames());
  EXPECT_EQ(cpu.dropped, kPackets / 50);
  EXPECT_EQ(cpu.counters.at("device_packets"), 0u);
  EXPECT_EQ(icv_mismatches(cpu.frames), 0u);
}

TEST(OffloadIpsecElement, DeviceOnlySeparateTasksMatchesCpuOnly) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome dev = run("DeviceOnly", ", CHAIN false");
  expect_same(dev, cpu_only());
  EXPECT_EQ(dev.counters.at("device_packets"), esp_frames());
  EXPECT_EQ(dev.counters.at("chained_stages"), 0u);
  EXPECT_TRUE(dev.device_up);
}

TEST(OffloadIpsecElement, DeviceOnlyChainedMatchesCpuOnly) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome dev = run("DeviceOnly", ", FUSE false");
  expect_same(dev, cpu_only());
  EXPECT_EQ(dev.counters.at("device_packets"), esp_frames());
  EXPECT_EQ(dev.counters.at("chained_stages"), 1u);
}

TEST(OffloadIpsecElement, DeviceOnlyFusedMatchesCpuOnly) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome dev = run("DeviceOnly", "");
  expect_same(dev, cpu_only());
  EXPECT_EQ(dev.counters.at("device_packets"), esp_frames());
  EXPECT_GT(dev.counters.at("tasks"), 0u);
  EXPECT_EQ(dev.counters.at("chained_stages"), 1u);
}

// fuse() gives the fused kernel with the HMAC element's (remapped) arguments only when the next
// element is IPsecAuthHMACSHA1Offload on the same SA file.
TEST(OffloadIpsecElement, FusesOnlyWithHmacOnTheSameSaFile) {
  const std::string file = sa_file(false), other = sa_file(true);
  auto aes = testing::make_or_fail("IPsecAESOffload", {file});
  auto hmac = testing::make_or_fail("IPsecAuthHMACSHA1Offload", {file});
  auto hmac_other = testing::make_or_fail("IPsecAuthHMACSHA1Offload", {other});
  auto aes2 = testing::make_or_fail("IPsecAESOffload", {file});
  ASSERT_TRUE(aes && hmac && hmac_other && aes2);
  auto& a = dynamic_cast<IPsecAESOffload&>(*aes);
  const std::vector<offload::TaskArg> args{offload::TaskArg::input(3), offload::TaskArg::u32(7)};
  const auto fused = a.fuse(*hmac, args);
  ASSERT_TRUE(fused.has_value());
  EXPECT_EQ(fused->kernel, offload::kIpsecFusedKernel);
  ASSERT_EQ(fused->args.size(), 2u);
  EXPECT_EQ(fused->args[0].index, 3u);
  EXPECT_EQ(fused->args[1].value, 7u);
  EXPECT_FALSE(a.fuse(*hmac_other, args).has_value());
  EXPECT_FALSE(a.fuse(*aes2, args).has_value());
}

TEST(OffloadIpsecElement, FixedFractionLosesNothing) {
  REQUIRE_OFFLOAD_DEVICE();
  const testing::PipelineOutcome split = run("FixedFraction(0.5)", "");
  expect_same_packets(split, cpu_only());
  EXPECT_GT(split.counters.at("device_packets"), 0u);
  EXPECT_LT(split.counters.at("device_packets"), esp_frames());
}

// AES-CBC SAs stay on the CPU for encryption (random IVs: compared by count and ICV, not with
// CPU-only bytes); unchained, IPsecAuthHMACSHA1Offload signs them on the device.
TEST(OffloadIpsecElement, CbcSasStayOnTheCpu) {
  REQUIRE_OFFLOAD_DEVICE();
  for (const char* extra : {"", ", CHAIN false"}) {
    SCOPED_TRACE(extra);
    const testing::PipelineOutcome dev = run("DeviceOnly", extra, true);
    uint64_t cbc = 0;
    for (const Bytes& f : dev.frames) cbc += esp::load_be32(f.data() + kEspOffset) == 12288;
    EXPECT_GT(cbc, 0u);
    EXPECT_EQ(dev.frames.size(), esp_frames());
    EXPECT_EQ(dev.counters.at("device_packets"), esp_frames() - cbc);
    EXPECT_EQ(icv_mismatches(dev.frames), 0u);
  }
}

// Frames straight into the offload elements, without IPsecESPEncap: SA index 0, most too short
// for ESP. Device-only drops and outputs exactly as CPU-only.
TEST(OffloadIpsecElement, MalformedFramesDropAsOnTheCpu) {
  REQUIRE_OFFLOAD_DEVICE();
  const std::string file = sa_file(false);
  std::mt19937 rng(3);
  std::vector<Bytes> garbage;
  for (uint32_t i = 0; i < kGarbage; ++i) {
    Bytes f(rng() % kGarbageMaxLen);
    for (uint8_t& b : f) b = static_cast<uint8_t>(rng());
    if (f.size() > esp::kEtherHdrLen)
      f[esp::kEtherHdrLen] = static_cast<uint8_t>(0x40 | (5 + rng() % 3));
    garbage.push_back(f);
  }
  auto go = [&](const std::string& balancer) {
    return testing::run_pipeline("FromInput -> " + balancer + " -> a :: IPsecAESOffload(" + file +
                                     ", FLUSH_US 0) -> IPsecAuthHMACSHA1Offload(" + file +
                                     ", FLUSH_US 0) -> ToOutput;",
                                 garbage, 1, "a", kBurst);
  };
  const testing::PipelineOutcome cpu = go("CPUOnly");
  const testing::PipelineOutcome dev = go("DeviceOnly");
  expect_same(dev, cpu);
  EXPECT_GT(cpu.dropped, kGarbage / 2);
  EXPECT_GT(cpu.frames.size(), 0u);
  EXPECT_EQ(dev.counters.at("device_packets"), cpu.frames.size());
}

// Eight SAs, one per mode: AES-128-CTR, AES-256-CTR, AES-128-GCM, AES-256-GCM, without ESN then
// with it; SA k takes the destinations 10.(k + 1).0.0/16.
struct ModeSa {
  uint32_t spi;
  const char* key;   // hex, without the nonce or salt
  const char* salt;  // hex, 4 bytes
  bool gcm, esn;
};
constexpr ModeSa kModeSas[] = {
    {0x1001, "2b7e151628aed2a6abf7158809cf4f3c", "deadbeef", false, false},
    {0x1002, "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", "cafe0001", false,
     false},
    {0x1003, "feffe9928665731c6d6a8f9467308308", "cafebabe", true, false},
    {0x1004, "feffe9928665731c6d6a8f9467308308feffe9928665731c6d6a8f9467308308", "cafebabe", true,
     false},
    {0x1005, "000102030405060708090a0b0c0d0e0f", "01020304", false, true},
    {0x1006, "1f1e1d1c1b1a191817161514131211100f0e0d0c0b0a09080706050403020100", "a1a2a3a4", false,
     true},
    {0x1007, "0f0e0d0c0b0a09080706050403020100", "b1b2b3b4", true, true},
    {0x1008, "101112131415161718191a1b1c1d1e1f202122232425262728292a2b2c2d2e2f", "c1c2c3c4", true,
     true},
};
constexpr uint32_t kModeSaCount = std::size(kModeSas);

Bytes unhex(const std::string& hex) {
  Bytes k;
  for (size_t i = 0; i < hex.size(); i += 2)
    k.push_back(static_cast<uint8_t>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return k;
}

std::string modes_sa_file() {
  const std::string path = testing::temp_path("ipsec-offload-modes-sa.txt");
  std::string text;
  for (uint32_t k = 0; k < kModeSaCount; ++k) {
    const ModeSa& m = kModeSas[k];
    text += std::to_string(m.spi) + " 192.0.2.1 198.51.100." + std::to_string(k + 1) + " " + m.key +
            m.salt + " " + (m.gcm ? "-" : kAuthA) + " 10." + std::to_string(k + 1) + ".0.0/16" +
            (m.gcm ? " CIPHER aes-gcm" : "") + (m.esn ? " ESN on" : "") + "\n";
  }
  FILE* f = std::fopen(path.c_str(), "w");
  EXPECT_NE(f, nullptr);
  if (f != nullptr) {
    std::fputs(text.c_str(), f);
    std::fclose(f);
  }
  return path;
}

// UDP frames of 28..1500-byte IPv4 packets (every length 28..80 once, then random ones), to the
// eight SAs in turn, so every batch mixes them.
std::vector<Bytes> modes_frames() {
  std::mt19937 rng(41);
  std::vector<Bytes> out;
  for (uint32_t i = 0; i < kPackets; ++i) {
    const uint32_t ip_len = i < 53 ? 28 + i : 28 + rng() % (1500 - 28 + 1);
    const uint32_t dst = RTE_IPV4(10, 1 + i % kModeSaCount, i % 256, 1 + i % 200);
    Bytes f = testing::ipv4_udp_frame(RTE_IPV4(10, 9, 9, 9), dst, 64, esp::kEtherHdrLen + ip_len);
    for (uint32_t k = kPayloadOffset; k < f.size(); ++k) f[k] = static_cast<uint8_t>(rng());
    out.push_back(f);
  }
  return out;
}

testing::PipelineOutcome run_modes(const std::string& balancer, const std::string& aes_extra) {
  const std::string file = modes_sa_file();
  const std::string opts = ", AGGREGATE 4, FLUSH_US 0";
  return testing::run_pipeline("FromInput -> IPsecESPEncap(" + file + ") -> " + balancer +
                                   " -> a :: IPsecAESOffload(" + file + opts + aes_extra +
                                   ") -> h :: IPsecAuthHMACSHA1Offload(" + file + opts +
                                   ") -> ToOutput;",
                               modes_frames(), 1, "a", kBurst);
}

const testing::PipelineOutcome& modes_cpu_only() {
  static const testing::PipelineOutcome r = run_modes("CPUOnly", "");
  return r;
}

// OpenSSL's verdict on one output ESP frame: its ICV verifies (HMAC-SHA1-96 with the high half
// 0 appended under ESN, or the GCM tag with the RFC 4106 AAD) and it decrypts to `inner`
// followed by the RFC 4303 padding 1, 2, 3.., pad length and next header 4.
bool openssl_opens(const Bytes& f, const Bytes& inner) {
  const uint8_t* e = f.data() + kEspOffset;
  const uint32_t spi = esp::load_be32(e);
  const ModeSa* m = nullptr;
  for (const ModeSa& s : kModeSas)
    if (s.spi == spi) m = &s;
  if (m == nullptr) return false;
  const Bytes key = unhex(m->key), salt = unhex(m->salt), auth = unhex(kAuthA);
  const bool big = key.size() == kAes256KeyLen;
  const uint32_t icv = m->gcm ? kGcmIcvLen : kIcvLen;
  const uint32_t esp_len = static_cast<uint32_t>(f.size()) - kEspOffset;
  if (esp_len < esp::kHdrIvLen + esp::kTrailerLen + icv) return false;
  const uint32_t text_len = esp_len - esp::kHdrIvLen - icv;
  Bytes text(e + esp::kHdrIvLen, e + esp::kHdrIvLen + text_len);
  const uint8_t zero_hi[esp::kSeqLen] = {};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  bool ok = true;
  if (m->gcm) {
    uint8_t nonce[kGcmNonceLen], aad[esp::kAadSlotLen], tag[kGcmIcvLen];
    std::memcpy(nonce, salt.data(), kGcmSaltLen);
    std::memcpy(nonce + kGcmSaltLen, e + esp::kHdrLen, kGcmIvLen);
    const uint32_t aad_len = esp::gcm_aad(e, m->esn ? zero_hi : nullptr, aad);
    std::memcpy(tag, e + esp::kHdrIvLen + text_len, kGcmIcvLen);
    ok = EVP_DecryptInit_ex(ctx, big ? EVP_aes_256_gcm() : EVP_aes_128_gcm(), nullptr, key.data(),
                            nonce) == 1 &&
         EVP_DecryptUpdate(ctx, nullptr, &n, aad, static_cast<int>(aad_len)) == 1 &&
         EVP_DecryptUpdate(ctx, text.data(), &n, text.data(), static_cast<int>(text_len)) == 1 &&
         EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, static_cast<int>(kGcmIcvLen), tag) == 1 &&
         EVP_DecryptFinal_ex(ctx, text.data() + text_len, &n) == 1;
  } else {
    Bytes msg(e, e + esp::kHdrIvLen + text_len);
    if (m->esn) msg.resize(msg.size() + esp::kSeqLen, 0);
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned len = 0;
    HMAC(EVP_sha1(), auth.data(), static_cast<int>(auth.size()), msg.data(), msg.size(), mac, &len);
    uint8_t block[kAesBlockLen] = {};
    std::memcpy(block, salt.data(), kCtrNonceLen);
    std::memcpy(block + kCtrNonceLen, e + esp::kHdrLen, kCtrIvLen);
    block[kAesBlockLen - 1] = 1;
    ok = std::memcmp(mac, e + esp::kHdrIvLen + text_len, kIcvLen) == 0 &&
         EVP_DecryptInit_ex(ctx, big ? EVP_aes_256_ctr() : EVP_aes_128_ctr(), nullptr, key.data(),
                            block) == 1 &&
         EVP_DecryptUpdate(ctx, text.data(), &n, text.data(), static_cast<int>(text_len)) == 1;
  }
  EVP_CIPHER_CTX_free(ctx);
  if (!ok || text_len < inner.size() + esp::kTrailerLen) return false;
  const uint32_t pad = text_len - static_cast<uint32_t>(inner.size()) - esp::kTrailerLen;
  for (uint32_t k = 0; k < pad; ++k)
    if (text[inner.size() + k] != k + 1) return false;
  return std::equal(inner.begin(), inner.end(), text.begin()) && text[text_len - 2] == pad &&
         text[text_len - 1] == esp::kNextHeaderIpv4;
}

// How many output frames OpenSSL cannot open back to the frame that went in (its IPv4 packet).
size_t openssl_failures(const testing::PipelineOutcome& o) {
  const std::vector<Bytes> in = modes_frames();
  size_t bad = 0;
  for (size_t i = 0; i < o.frames.size(); ++i) {
    const Bytes& f = in[o.sent[i].tag];
    bad += !openssl_opens(o.frames[i], Bytes(f.begin() + esp::kEtherHdrLen, f.end()));
  }
  return bad;
}

TEST(OffloadIpsecElement, EveryModeCpuOnlyOpensWithOpenSSL) {
  const testing::PipelineOutcome& cpu = modes_cpu_only();
  ASSERT_EQ(cpu.frames.size(), kPackets);
  EXPECT_EQ(cpu.dropped, 0u);
  EXPECT_EQ(openssl_failures(cpu), 0u);
  // The check can fail: one flipped byte in each of a GCM and an ESN CTR frame.
  testing::PipelineOutcome tampered = cpu;
  tampered.frames[2].back() ^= 1;                        // AES-128-GCM: its tag
  tampered.frames[4][kEspOffset + esp::kHdrIvLen] ^= 1;  // AES-128-CTR with ESN: its text
  EXPECT_EQ(openssl_failures(tampered), 2u);
}

TEST(OffloadIpsecElement, EveryModeDeviceOnlyMatchesCpuOnly) {
  REQUIRE_OFFLOAD_DEVICE();
  for (const char* extra : {"", ", FUSE false", ", CHAIN false"}) {
    SCOPED_TRACE(extra);
    const testing::PipelineOutcome dev = run_modes("DeviceOnly", extra);
    expect_same(dev, modes_cpu_only());
    EXPECT_EQ(dev.counters.at("device_packets"), kPackets);
    EXPECT_EQ(openssl_failures(dev), 0u);
    EXPECT_TRUE(dev.device_up);
  }
}

TEST(OffloadIpsecElement, ConfigErrors) {
  EXPECT_NE(testing::config_error("IPsecAESOffload", {}), "(no error)");
  EXPECT_NE(testing::config_error("IPsecAESOffload", {"/nonexistent/sa.txt"}), "(no error)");
  EXPECT_NE(testing::config_error("IPsecAuthHMACSHA1Offload", {sa_file(false), "AGGREGATE 0"}),
            "(no error)");
}

}  // namespace
}  // namespace fulcrum
