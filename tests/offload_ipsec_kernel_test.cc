// The IPsec kernels (kernels/ipsec.cl, OpenCL and CUDA) on every device present,
// with tasks built by hand in the whole-packet layout, against the CPU function (intel-ipsec-mb
// through MbCrypto) and OpenSSL EVP (aes-128-ctr, HMAC sha1), byte for byte: AES-128-CTR alone,
// HMAC-SHA1-96 alone, both chained in one task (two launches on the same device buffers) and
// the fused kernel. Regions are ESP parts (SPI through next header) of random lengths 1..1500,
// many of them short and odd. OpenCL runs on PoCL's CPU device here; the CUDA tests skip
// without a GPU.
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_device.hh"
#include "offload/ipsec_tables.hh"
#include "offload/task.hh"

namespace fulcrum::offload {
namespace {

using Bytes = std::vector<uint8_t>;
using Icv = std::array<uint8_t, kIpsecIcvBytes>;

constexpr uint32_t kSas = 5;
constexpr uint32_t kRegions = 3000;
constexpr uint32_t kMaxRegion = 1500;
constexpr uint32_t kShortRegion = 48;  // every fourth region is at most this long
constexpr uint32_t kTaskItems = 1024;
constexpr uint32_t kFirstSpi = 0x1000;
constexpr uint32_t kIvOffset = 8;
constexpr uint8_t kCounterOne = 1;

enum class Mode { kAes, kHmac, kChained, kFused };

struct Fixture {
  std::shared_ptr<SaTable> table;
  std::vector<uint32_t> sa;  // per region
  std::vector<Bytes> plain;
  std::vector<Bytes> cipher;  // region with [16, len) encrypted (MbCrypto)
  std::vector<Icv> icv;       // HMAC-SHA1-96 of `cipher` (MbCrypto)
};

std::vector<SaConfig> random_sas(std::mt19937_64& rng, uint32_t n) {
  std::vector<SaConfig> sas(n);
  for (uint32_t i = 0; i < n; ++i) {
    SaConfig& c = sas[i];
    c.spi = kFirstSpi + i;
    c.tunnel_src = 0xC0000201;
    c.tunnel_dst = 0xC6336401 + i;
    for (uint8_t& b : c.enc_key) b = static_cast<uint8_t>(rng());
    for (uint8_t& b : c.nonce) b = static_cast<uint8_t>(rng());
    for (uint8_t& b : c.auth_key) b = static_cast<uint8_t>(rng());
    c.selector = (10u << 24) | (i << 16);
    c.selector_len = 16;
  }
  return sas;
}

std::shared_ptr<SaTable> build_table(const std::vector<SaConfig>& sas) {
  auto t = SaTable::build(sas, "ipsec-kernel-test");
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? t.value() : nullptr;
}

// The CPU function: intel-ipsec-mb, as IPsecAES and IPsecAuthHMACSHA1 call it.
void mb_encrypt_and_sign(MbCrypto& mb, const SecurityAssociation& sa, Bytes& r, Icv& icv) {
  alignas(16) uint8_t nonce_iv[kCtrNonceIvLen];
  std::memcpy(nonce_iv, sa.aes.nonce, kCtrNonceLen);
  if (r.size() > kIpsecCipherOffset) {
    std::memcpy(nonce_iv + kCtrNonceLen, r.data() + kIvOffset, kCtrIvLen);
    mb.ctr(sa.aes, nonce_iv, r.data() + kIpsecCipherOffset, r.size() - kIpsecCipherOffset, 0);
    ASSERT_TRUE(mb.finish().empty());
  }
  mb.hmac_sha1(sa.hmac, r.data(), r.size(), icv.data(), kIcvLen, 0);
  ASSERT_TRUE(mb.finish().empty());
}

// The independent oracle: OpenSSL EVP with the RFC 3686 counter block nonce | IV | 1.
void openssl_encrypt_and_sign(const SaConfig& c, Bytes& r, Icv& icv) {
  if (r.size() > kIpsecCipherOffset) {
    uint8_t block[kAesBlockLen] = {};
    std::memcpy(block, c.nonce, kCtrNonceLen);
    std::memcpy(block + kCtrNonceLen, r.data() + kIvOffset, kCtrIvLen);
    block[kAesBlockLen - 1] = kCounterOne;
    EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
    int n = 0;
    ASSERT_EQ(EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), nullptr, c.enc_key, block), 1);
    ASSERT_EQ(
        EVP_EncryptUpdate(ctx, r.data() + kIpsecCipherOffset, &n, r.data() + kIpsecCipherOffset,
                          static_cast<int>(r.size() - kIpsecCipherOffset)),
        1);
    EVP_CIPHER_CTX_free(ctx);
  }
  uint8_t mac[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  HMAC(EVP_sha1(), c.auth_key, static_cast<int>(kHmacSha1KeyLen), r.data(), r.size(), mac, &len);
  ASSERT_EQ(len, kSha1DigestLen);
  std::memcpy(icv.data(), mac, kIpsecIcvBytes);
}

const Fixture& fixture() {
  static const Fixture* f = [] {
    auto* x = new Fixture;
    std::mt19937_64 rng(11);
    const std::vector<SaConfig> sas = random_sas(rng, kSas);
    x->table = build_table(sas);
    auto mb = MbCrypto::create();
    EXPECT_TRUE(mb.ok()) << mb.error();
    for (uint32_t i = 0; i < kRegions; ++i) {
      const uint32_t max = i % 4 == 0 ? kShortRegion : kMaxRegion;
      Bytes r(1 + rng() % max);
      for (uint8_t& b : r) b = static_cast<uint8_t>(rng());
      const uint32_t sa = static_cast<uint32_t>(rng() % kSas);
      x->sa.push_back(sa);
      x->plain.push_back(r);
      Icv icv{};
      mb_encrypt_and_sign(*mb.value(), x->table->at(sa), r, icv);
      x->cipher.push_back(r);
      x->icv.push_back(icv);
    }
    return x;
  }();
  return *f;
}

uint32_t align_up(uint32_t n) {
  return (n + kIpsecRegionAlign - 1) / kIpsecRegionAlign * kIpsecRegionAlign;
}

struct DeviceOutcome {
  std::vector<Bytes> regions;
  std::vector<Icv> icv;
};

// Runs `regions` (SA indices `sa`) through `device` in hand-built whole-packet tasks of up to
// kTaskItems packets: the AES kernel, the HMAC kernel, both back to back, or the fused one.
DeviceOutcome run_on(Device& device, const IpsecTables& tables, Mode mode,
                     const std::vector<Bytes>& regions, const std::vector<uint32_t>& sa) {
  DeviceOutcome out;
  auto exec = TaskExecutor::create(device);
  EXPECT_TRUE(exec.ok()) << exec.error();
  if (!exec) return out;
  for (size_t first = 0; first < regions.size(); first += kTaskItems) {
    const auto n = static_cast<uint32_t>(std::min<size_t>(kTaskItems, regions.size() - first));
    uint32_t total = 0;
    for (uint32_t k = 0; k < n; ++k)
      total += align_up(static_cast<uint32_t>(regions[first + k].size()));
    auto items = device.alloc_host(n * kIpsecItemBytes);
    auto bytes = device.alloc_host(total);
    auto places = device.alloc_host(n * sizeof(Region));
    auto icvs = device.alloc_host(n * kIpsecIcvBytes);
    auto back = device.alloc_host(total);
    EXPECT_TRUE(items.ok() && bytes.ok() && places.ok() && icvs.ok() && back.ok());
    if (!items || !bytes || !places || !icvs || !back) return out;
    uint32_t at = 0;
    for (uint32_t k = 0; k < n; ++k) {
      const Bytes& r = regions[first + k];
      items.value()->as<uint32_t>()[k] = sa[first + k];
      places.value()->as<Region>()[k] = {at, static_cast<uint32_t>(r.size())};
      std::memcpy(bytes.value()->as<uint8_t>() + at, r.data(), r.size());
      at += align_up(static_cast<uint32_t>(r.size()));
    }
    std::memset(icvs.value()->data(), 0, n * kIpsecIcvBytes);
    OffloadTask task;
    task.inputs = {{items.value().get(), kIpsecItemBytes},
                   {bytes.value().get(), 0, total},
                   {places.value().get(), sizeof(Region)}};
    task.outputs = {{icvs.value().get(), kIpsecIcvBytes},
                    {back.value().get(), 0, total, static_cast<int32_t>(kBytesInput)}};
    switch (mode) {
      case Mode::kAes:
        task.launches = {{kIpsecAesCtrKernel, tables.aes_args()}};
        break;
      case Mode::kHmac:
        task.launches = {{kIpsecHmacSha1Kernel, tables.hmac_args()}};
        break;
      case Mode::kChained:
        task.launches = {{kIpsecAesCtrKernel, tables.aes_args()},
                         {kIpsecHmacSha1Kernel, tables.hmac_args()}};
        break;
      case Mode::kFused:
        task.launches = {{kIpsecFusedKernel, tables.hmac_args()}};
        break;
    }
    task.capacity = task.items = n;
    EXPECT_EQ(run_task_sync(*exec.value(), task), TaskStatus::kOk) << task.error;
    for (uint32_t k = 0; k < n; ++k) {
      const Region& p = places.value()->as<Region>()[k];
      const uint8_t* b = back.value()->as<uint8_t>() + p.offset;
      out.regions.emplace_back(b, b + p.length);
      Icv icv;
      std::memcpy(icv.data(), icvs.value()->as<uint8_t>() + k * kIpsecIcvBytes, kIpsecIcvBytes);
      out.icv.push_back(icv);
    }
  }
  return out;
}

// The devices of one backend, found once (the emulated one: the default model).
std::vector<std::unique_ptr<Device>>& devices(Backend backend) {
  static std::map<Backend, std::vector<std::unique_ptr<Device>>> found;
  auto [it, inserted] = found.try_emplace(backend);
  if (inserted && backend == Backend::kEmu) {
    it->second.push_back(make_emulated_device(EmuSpec{}));
  } else if (inserted) {
    DiscoverOptions only;
    only.only = backend;
    it->second = discover_devices(only);
  }
  return it->second;
}

template <class T>
size_t count_mismatches(const std::vector<T>& got, const std::vector<T>& want) {
  EXPECT_EQ(got.size(), want.size());
  size_t bad = 0;
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i) bad += got[i] != want[i];
  return bad;
}

void expect_mode_matches_cpu(Backend backend, Mode mode) {
  const Fixture& f = fixture();
  for (const auto& dev : devices(backend)) {
    SCOPED_TRACE(dev->label());
    auto tables = IpsecTables::upload(*dev, *f.table);
    ASSERT_TRUE(tables.ok()) << tables.error();
    // HMAC alone signs what the CPU encrypted; the other modes start from the plaintext.
    const std::vector<Bytes>& in = mode == Mode::kHmac ? f.cipher : f.plain;
    const DeviceOutcome got = run_on(*dev, *tables.value(), mode, in, f.sa);
    EXPECT_EQ(count_mismatches(got.regions, f.cipher), 0u);
    // The AES kernel alone writes no ICV (that output is left as the device buffer was).
    if (mode != Mode::kAes) {
      EXPECT_EQ(count_mismatches(got.icv, f.icv), 0u);
    }
  }
}

void require_backend(Backend backend) {
  if (!backend_compiled(backend))
    GTEST_SKIP() << backend_name(backend) << " backend not compiled in";
}

#define FOR_EACH_BACKEND_TEST(name, body)                                                \
  TEST(OffloadIpsecKernel, OpenCL##name) {                                               \
    require_backend(Backend::kOpenCL);                                                   \
    if (IsSkipped()) return;                                                             \
    ASSERT_FALSE(devices(Backend::kOpenCL).empty())                                      \
        << "OpenCL is built in but no OpenCL device was found (scripts/install-deps.sh " \
           "installs PoCL)";                                                             \
    body(Backend::kOpenCL);                                                              \
  }                                                                                      \
  TEST(OffloadIpsecKernel, Cuda##name) {                                                 \
    require_backend(Backend::kCuda);                                                     \
    if (IsSkipped()) return;                                                             \
    if (devices(Backend::kCuda).empty()) GTEST_SKIP() << "no CUDA device (no GPU here)"; \
    body(Backend::kCuda);                                                                \
  }                                                                                      \
  TEST(OffloadIpsecKernel, Emu##name) {                                                  \
    body(Backend::kEmu);                                                                 \
  }

// The two CPU implementations agree on every region before the devices are compared to them.
TEST(OffloadIpsecKernel, MbCryptoAgreesWithOpenSSL) {
  const Fixture& f = fixture();
  size_t bad_cipher = 0, bad_icv = 0, short_regions = 0, odd_regions = 0;
  for (size_t i = 0; i < f.plain.size(); ++i) {
    Bytes r = f.plain[i];
    Icv icv{};
    openssl_encrypt_and_sign(f.table->at(f.sa[i]).cfg, r, icv);
    bad_cipher += r != f.cipher[i];
    bad_icv += icv != f.icv[i];
    short_regions += r.size() <= kIpsecCipherOffset;
    odd_regions += r.size() % 2;
  }
  EXPECT_EQ(bad_cipher, 0u);
  EXPECT_EQ(bad_icv, 0u);
  EXPECT_GT(short_regions, 50u);  // no ciphertext at all: the kernels must leave them alone
  EXPECT_GT(odd_regions, kRegions / 3);
}

// FIPS-197 Appendix A.1: the expansion of 2b7e1516 28aed2a6 abf71588 09cf4f3c.
TEST(OffloadIpsecKernel, KeyExpansionMatchesFips197) {
  const uint8_t key[kAesKeyLen] = {0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
                                   0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c};
  const AesRoundKeys w = aes128_expand_key(key);
  EXPECT_EQ(w[4], 0xa0fafe17u);
  EXPECT_EQ(w[9], 0x7a96b943u);
  EXPECT_EQ(w[24], 0x6d88a37au);
  EXPECT_EQ(w[43], 0xb6630ca6u);
}

TEST(OffloadIpsecKernel, SaRecordsHoldKeysNonceAndCipher) {
  std::mt19937_64 rng(5);
  std::vector<SaConfig> sas = random_sas(rng, 2);
  sas[1].cipher = EspCipher::kAesCbc;
  auto table = build_table(sas);
  ASSERT_TRUE(table);
  const std::vector<uint32_t> w = ipsec_sa_records(*table);
  ASSERT_EQ(w.size(), 3 * kIpsecRecordWords);
  EXPECT_EQ(w[0], 2u);
  const uint32_t* r0 = w.data() + kIpsecRecordWords;
  EXPECT_EQ(r0[0], uint32_t{sas[0].enc_key[0]} << 24 | uint32_t{sas[0].enc_key[1]} << 16 |
                       uint32_t{sas[0].enc_key[2]} << 8 | sas[0].enc_key[3]);
  EXPECT_EQ(r0[kIpsecNonceWord] >> 24, sas[0].nonce[0]);
  EXPECT_EQ(r0[kIpsecCtrWord], 1u);
  EXPECT_EQ(w[2 * kIpsecRecordWords + kIpsecCtrWord], 0u);
}

FOR_EACH_BACKEND_TEST(AesCtrMatchesCpu, [](Backend b) { expect_mode_matches_cpu(b, Mode::kAes); })
FOR_EACH_BACKEND_TEST(HmacSha1MatchesCpu,
                      [](Backend b) { expect_mode_matches_cpu(b, Mode::kHmac); })
FOR_EACH_BACKEND_TEST(ChainedMatchesCpu,
                      [](Backend b) { expect_mode_matches_cpu(b, Mode::kChained); })
FOR_EACH_BACKEND_TEST(FusedMatchesCpu, [](Backend b) { expect_mode_matches_cpu(b, Mode::kFused); })

// An SA index at or past the table's SA count: the region stays as it was, the ICV zero, and the
// packets around it are processed as usual.
void expect_bad_sa_untouched(Backend backend) {
  const Fixture& f = fixture();
  const std::vector<Bytes> regions{f.plain[1], f.plain[2], f.plain[3]};
  const std::vector<uint32_t> sa{kSas, 0xFFFFFFFFu, f.sa[3]};
  for (const auto& dev : devices(backend)) {
    SCOPED_TRACE(dev->label());
    auto tables = IpsecTables::upload(*dev, *f.table);
    ASSERT_TRUE(tables.ok()) << tables.error();
    const DeviceOutcome got = run_on(*dev, *tables.value(), Mode::kFused, regions, sa);
    ASSERT_EQ(got.regions.size(), 3u);
    EXPECT_EQ(got.regions[0], f.plain[1]);
    EXPECT_EQ(got.regions[1], f.plain[2]);
    EXPECT_EQ(got.icv[0], Icv{});
    EXPECT_EQ(got.icv[1], Icv{});
    EXPECT_EQ(got.regions[2], f.cipher[3]);
    EXPECT_EQ(got.icv[2], f.icv[3]);
  }
}
FOR_EACH_BACKEND_TEST(SaIndexOutOfRangeLeavesPacketAlone, expect_bad_sa_untouched)

// The comparison can fail: one flipped bit of SA 0's encryption key, nonce or authentication key
// on the device and exactly that SA's packets no longer match the CPU.
void expect_mutations_detected(Backend backend) {
  const Fixture& f = fixture();
  std::vector<SaConfig> sas;
  for (uint32_t i = 0; i < kSas; ++i) sas.push_back(f.table->at(i).cfg);
  const size_t on_sa0 = static_cast<size_t>(
      std::count_if(f.sa.begin(), f.sa.end(), [&](uint32_t s) { return s == 0; }));
  size_t long_on_sa0 = 0;
  for (size_t i = 0; i < f.sa.size(); ++i)
    long_on_sa0 += f.sa[i] == 0 && f.plain[i].size() > kIpsecCipherOffset;
  for (int which = 0; which < 3; ++which) {
    std::vector<SaConfig> bad = sas;
    (which == 0 ? bad[0].enc_key[5] : which == 1 ? bad[0].nonce[2] : bad[0].auth_key[19]) ^= 1;
    auto table = build_table(bad);
    ASSERT_TRUE(table);
    for (const auto& dev : devices(backend)) {
      SCOPED_TRACE(dev->label() + " mutation " + std::to_string(which));
      auto tables = IpsecTables::upload(*dev, *table);
      ASSERT_TRUE(tables.ok()) << tables.error();
      const DeviceOutcome got = run_on(*dev, *tables.value(), Mode::kFused, f.plain, f.sa);
      const size_t bad_cipher = count_mismatches(got.regions, f.cipher);
      const size_t bad_icv = count_mismatches(got.icv, f.icv);
      // A region without ciphertext keeps its ICV unless the authentication key changed.
      EXPECT_EQ(bad_cipher, which == 2 ? 0u : long_on_sa0);
      EXPECT_EQ(bad_icv, which == 2 ? on_sa0 : long_on_sa0);
    }
  }
}
FOR_EACH_BACKEND_TEST(WrongKeyNonceOrAuthKeyIsDetected, expect_mutations_detected)

TEST(OffloadIpsecKernel, KernelSignatures) {
  for (Backend b : {Backend::kOpenCL, Backend::kCuda}) {
    for (const auto& dev : devices(b)) {
      SCOPED_TRACE(dev->label());
      auto aes = dev->kernel(kIpsecAesCtrKernel);
      auto hmac = dev->kernel(kIpsecHmacSha1Kernel);
      auto fused = dev->kernel(kIpsecFusedKernel);
      ASSERT_TRUE(aes.ok() && hmac.ok() && fused.ok());
      EXPECT_EQ(aes.value()->signature(), "bbbbu");
      EXPECT_EQ(hmac.value()->signature(), "bbbbbu");
      EXPECT_EQ(fused.value()->signature(), "bbbbbu");
    }
  }
}

}  // namespace
}  // namespace fulcrum::offload
