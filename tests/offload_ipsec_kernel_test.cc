// The IPsec kernels (kernels/ipsec.cl, OpenCL and CUDA) on every device present, and on the
// emulated device (the same source built for the host), with tasks built by hand in the
// whole-packet layout, against the CPU function (intel-ipsec-mb through MbCrypto, as IPsecAES
// and IPsecAuthHMACSHA1 call it) and OpenSSL EVP, byte for byte: the cipher kernel alone, the
// HMAC kernel alone, both chained in one task (two launches on the same device buffers) and the
// fused kernel. SAs of every kind the kernels take are mixed in each task: AES-128/256-CTR with
// HMAC-SHA1-96, AES-128/256-GCM, each with and without ESN, and AES-128/256-CBC (whose packets
// only the HMAC touches). Regions are ESP parts (SPI through the ICV's room) of random lengths
// up to 1500 + ICV, many of them short and odd. OpenCL runs on PoCL's CPU device here; the CUDA
// tests skip without a GPU.
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

#include "lib/esp.hh"
#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_device.hh"
#include "offload/emu/emu_kernels.hh"
#include "offload/ipsec_tables.hh"
#include "offload/task.hh"

namespace fulcrum::offload {
namespace {

using Bytes = std::vector<uint8_t>;
using Icv = std::array<uint8_t, kIpsecIcvBytes>;

constexpr uint32_t kRegions = 3000;
constexpr uint32_t kMaxText = 1500;  // bytes between the IV and the ICV's room
constexpr uint32_t kShortText = 40;  // every fourth region has at most this many
constexpr uint32_t kTaskItems = 1024;
constexpr uint32_t kFirstSpi = 0x1000;
constexpr uint32_t kIvOffset = 8;
constexpr uint8_t kCounterOne = 1;
constexpr uint32_t kSeqHiLen = 4;

enum class Mode { kAes, kHmac, kChained, kFused };

struct SaKind {
  EspCipher cipher;
  size_t key_len;
  bool esn;
};

// SA i has kind kKinds[i]: SA 0 is AES-128-CTR without ESN (the mutation test relies on it).
constexpr SaKind kKinds[] = {
    {EspCipher::kAesCtr, kAesKeyLen, false}, {EspCipher::kAesCtr, kAes256KeyLen, false},
    {EspCipher::kAesCtr, kAesKeyLen, true},  {EspCipher::kAesCtr, kAes256KeyLen, true},
    {EspCipher::kAesGcm, kAesKeyLen, false}, {EspCipher::kAesGcm, kAes256KeyLen, false},
    {EspCipher::kAesGcm, kAesKeyLen, true},  {EspCipher::kAesGcm, kAes256KeyLen, true},
    {EspCipher::kAesCbc, kAesKeyLen, false}, {EspCipher::kAesCbc, kAes256KeyLen, true},
};
constexpr uint32_t kSas = std::size(kKinds);
constexpr uint32_t kGcm128Esn = 6;  // an AES-128-GCM SA with ESN

struct Fixture {
  std::shared_ptr<SaTable> table;
  std::vector<uint32_t> sa;  // per region
  std::vector<Bytes> plain;
  std::vector<Bytes> cipher;  // CTR and GCM regions encrypted (and GCM tagged) by MbCrypto
  std::vector<Icv> icv;       // HMAC-SHA1-96 of `cipher` (MbCrypto); zero for GCM SAs
};

std::vector<SaConfig> random_sas(std::mt19937_64& rng) {
  std::vector<SaConfig> sas(kSas);
  for (uint32_t i = 0; i < kSas; ++i) {
    SaConfig& c = sas[i];
    c.spi = kFirstSpi + i;
    c.tunnel_src = 0xC0000201;
    c.tunnel_dst = 0xC6336401 + i;
    c.cipher = kKinds[i].cipher;
    c.key_len = static_cast<uint8_t>(kKinds[i].key_len);
    c.esn = kKinds[i].esn;
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

// Where a region's ciphertext ends (its ICV's room starts) and its authenticated bytes end.
uint32_t cipher_end(const SaConfig& c, const Bytes& r) {
  return static_cast<uint32_t>(r.size()) - c.icv_len();
}
uint32_t hash_end(const SaConfig& c, const Bytes& r) {
  return cipher_end(c, r) + (c.esn ? kSeqHiLen : 0);
}

// The CPU function: intel-ipsec-mb, as IPsecAES and IPsecAuthHMACSHA1 call it.
void mb_encrypt_and_sign(MbCrypto& mb, const SecurityAssociation& sa, Bytes& r, Icv& icv) {
  const SaConfig& c = sa.cfg;
  const uint32_t end = cipher_end(c, r);
  alignas(16) uint8_t nonce_iv[kGcmNonceLen];
  std::memcpy(nonce_iv, c.nonce, kCtrNonceLen);
  std::memcpy(nonce_iv + kCtrNonceLen, r.data() + kIvOffset, kCtrIvLen);
  if (c.cipher == EspCipher::kAesGcm) {
    uint8_t aad[esp::kAadSlotLen];
    const uint32_t aad_len = esp::gcm_aad(r.data(), c.esn ? r.data() + end : nullptr, aad);
    mb.gcm(*sa.gcm, true, nonce_iv, aad, aad_len, r.data() + kIpsecCipherOffset,
           end - kIpsecCipherOffset, r.data() + end, 0);
    ASSERT_TRUE(mb.finish().empty());
    return;
  }
  if (c.cipher == EspCipher::kAesCtr && end > kIpsecCipherOffset) {
    mb.ctr(sa.aes, nonce_iv, r.data() + kIpsecCipherOffset, end - kIpsecCipherOffset, 0);
    ASSERT_TRUE(mb.finish().empty());
  }
  mb.hmac_sha1(sa.hmac, r.data(), hash_end(c, r), icv.data(), kIcvLen, 0);
  ASSERT_TRUE(mb.finish().empty());
}

// The independent oracle: OpenSSL EVP (CTR with the RFC 3686 counter block nonce | IV | 1, GCM
// with the RFC 4106 nonce and AAD) and OpenSSL's HMAC.
void openssl_encrypt_and_sign(const SaConfig& c, Bytes& r, Icv& icv) {
  const uint32_t end = cipher_end(c, r);
  const bool big = c.key_len == kAes256KeyLen;
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  int n = 0;
  if (c.cipher == EspCipher::kAesGcm) {
    uint8_t nonce[kGcmNonceLen], aad[esp::kAadSlotLen];
    std::memcpy(nonce, c.nonce, kGcmSaltLen);
    std::memcpy(nonce + kGcmSaltLen, r.data() + kIvOffset, kGcmIvLen);
    const uint32_t aad_len = esp::gcm_aad(r.data(), c.esn ? r.data() + end : nullptr, aad);
    uint8_t* text = r.data() + kIpsecCipherOffset;
    const int text_len = static_cast<int>(end - kIpsecCipherOffset);
    ASSERT_EQ(EVP_EncryptInit_ex(ctx, big ? EVP_aes_256_gcm() : EVP_aes_128_gcm(), nullptr,
                                 c.enc_key, nonce),
              1);
    ASSERT_EQ(EVP_EncryptUpdate(ctx, nullptr, &n, aad, static_cast<int>(aad_len)), 1);
    if (text_len > 0) {
      ASSERT_EQ(EVP_EncryptUpdate(ctx, text, &n, text, text_len), 1);
    }
    ASSERT_EQ(EVP_EncryptFinal_ex(ctx, text + text_len, &n), 1);
    ASSERT_EQ(EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, static_cast<int>(kGcmIcvLen),
                                  r.data() + end),
              1);
    EVP_CIPHER_CTX_free(ctx);
    return;
  }
  if (c.cipher == EspCipher::kAesCtr && end > kIpsecCipherOffset) {
    uint8_t block[kAesBlockLen] = {};
    std::memcpy(block, c.nonce, kCtrNonceLen);
    std::memcpy(block + kCtrNonceLen, r.data() + kIvOffset, kCtrIvLen);
    block[kAesBlockLen - 1] = kCounterOne;
    ASSERT_EQ(EVP_EncryptInit_ex(ctx, big ? EVP_aes_256_ctr() : EVP_aes_128_ctr(), nullptr,
                                 c.enc_key, block),
              1);
    ASSERT_EQ(
        EVP_EncryptUpdate(ctx, r.data() + kIpsecCipherOffset, &n, r.data() + kIpsecCipherOffset,
                          static_cast<int>(end - kIpsecCipherOffset)),
        1);
  }
  EVP_CIPHER_CTX_free(ctx);
  uint8_t mac[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  HMAC(EVP_sha1(), c.auth_key, static_cast<int>(kHmacSha1KeyLen), r.data(), hash_end(c, r), mac,
       &len);
  ASSERT_EQ(len, kSha1DigestLen);
  std::memcpy(icv.data(), mac, kIpsecIcvBytes);
}

// A region of SA kind c: SPI, sequence number, IV, text_len random bytes, and the ICV's room
// (random bytes; with ESN its first 4 are the high half, random too).
Bytes random_region(std::mt19937_64& rng, const SaConfig& c, uint32_t text_len) {
  Bytes r(kIpsecCipherOffset + text_len + c.icv_len());
  for (uint8_t& b : r) b = static_cast<uint8_t>(rng());
  esp::store_be32(r.data(), c.spi);
  return r;
}

const Fixture& fixture() {
  static const Fixture* f = [] {
    auto* x = new Fixture;
    std::mt19937_64 rng(11);
    const std::vector<SaConfig> sas = random_sas(rng);
    x->table = build_table(sas);
    auto mb = MbCrypto::create();
    EXPECT_TRUE(mb.ok()) << mb.error();
    for (uint32_t i = 0; i < kRegions; ++i) {
      const uint32_t max = i % 4 == 0 ? kShortText : kMaxText;
      const auto sa = static_cast<uint32_t>(rng() % kSas);
      Bytes r = random_region(rng, sas[sa], static_cast<uint32_t>(rng() % (max + 1)));
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
        task.launches = {{kIpsecAesKernel, tables.aes_args()}};
        break;
      case Mode::kHmac:
        task.launches = {{kIpsecHmacSha1Kernel, tables.hmac_args()}};
        break;
      case Mode::kChained:
        task.launches = {{kIpsecAesKernel, tables.aes_args()},
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

// The devices of one backend, found once (the emulated ones: the default model, portable and
// native host compute).
std::vector<std::unique_ptr<Device>>& devices(Backend backend) {
  static std::map<Backend, std::vector<std::unique_ptr<Device>>> found;
  auto [it, inserted] = found.try_emplace(backend);
  if (inserted && backend == Backend::kEmu) {
    it->second.push_back(make_emulated_device(EmuSpec{}));
    EmuSpec native;
    native.native = 1;
    native.text = "native=1";
    it->second.push_back(make_emulated_device(native));
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
  size_t bad_cipher = 0, bad_icv = 0, no_text = 0, odd_regions = 0;
  std::array<size_t, kSas> per_sa{};
  for (size_t i = 0; i < f.plain.size(); ++i) {
    const SaConfig& c = f.table->at(f.sa[i]).cfg;
    Bytes r = f.plain[i];
    Icv icv{};
    openssl_encrypt_and_sign(c, r, icv);
    bad_cipher += r != f.cipher[i];
    bad_icv += icv != f.icv[i];
    no_text += cipher_end(c, r) == kIpsecCipherOffset;
    odd_regions += r.size() % 2;
    ++per_sa[f.sa[i]];
  }
  EXPECT_EQ(bad_cipher, 0u);
  EXPECT_EQ(bad_icv, 0u);
  EXPECT_GT(no_text, 5u);  // no ciphertext at all: GCM tags the AAD alone, CTR leaves it
  EXPECT_GT(odd_regions, kRegions / 3);
  for (size_t n : per_sa) EXPECT_GT(n, kRegions / kSas / 2);
}

std::array<uint8_t, kAes256KeyLen> unhex32(const char* hex) {
  std::array<uint8_t, kAes256KeyLen> k{};
  for (size_t i = 0; i < k.size() && hex[2 * i] != 0; ++i)
    k[i] = static_cast<uint8_t>(std::stoul(std::string(hex + 2 * i, 2), nullptr, 16));
  return k;
}

// FIPS-197 Appendix A.1 and A.3: the expansions of 2b7e1516 28aed2a6 abf71588 09cf4f3c and
// 603deb10 15ca71be 2b73aef0 857d7781 1f352c07 3b6108d7 2d9810a3 0914dff4.
TEST(OffloadIpsecKernel, KeyExpansionMatchesFips197) {
  const auto k128 = unhex32("2b7e151628aed2a6abf7158809cf4f3c");
  const AesRoundKeys w = aes_expand_key(k128.data(), kAesKeyLen);
  EXPECT_EQ(w[4], 0xa0fafe17u);
  EXPECT_EQ(w[9], 0x7a96b943u);
  EXPECT_EQ(w[24], 0x6d88a37au);
  EXPECT_EQ(w[43], 0xb6630ca6u);
  EXPECT_EQ(w[44], 0u);
  const auto k256 = unhex32("603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4");
  const AesRoundKeys v = aes_expand_key(k256.data(), kAes256KeyLen);
  EXPECT_EQ(v[8], 0x9ba35411u);
  EXPECT_EQ(v[12], 0xa8b09c1au);  // an extra SubWord (i mod 8 = 4)
  EXPECT_EQ(v[59], 0x706c631eu);
}

// Our expansion equals intel-ipsec-mb's (its encryption schedule as bytes) for random keys of
// both lengths.
TEST(OffloadIpsecKernel, KeyExpansionMatchesIntelIpsecMb) {
  auto mb = MbCrypto::create();
  ASSERT_TRUE(mb.ok()) << mb.error();
  std::mt19937_64 rng(23);
  for (size_t len : {kAesKeyLen, kAes256KeyLen}) {
    for (int t = 0; t < 20; ++t) {
      uint8_t key[kAes256KeyLen], nonce[kCtrNonceLen] = {};
      for (uint8_t& b : key) b = static_cast<uint8_t>(rng());
      AesKey k;
      mb.value()->expand_aes(key, len, nonce, k);
      const AesRoundKeys w = aes_expand_key(key, len);
      const size_t words = len == kAes256KeyLen ? kIpsecRoundKeyWords : 44;
      const auto* bytes = reinterpret_cast<const uint8_t*>(k.enc);
      for (size_t i = 0; i < words; ++i)
        ASSERT_EQ(w[i], esp::load_be32(bytes + 4 * i)) << "key length " << len << ", word " << i;
    }
  }
}

// SP 800-38D test cases 1 and 13: H for the all-zero 128- and 256-bit keys.
TEST(OffloadIpsecKernel, GcmHashKeyIsTheZeroBlockEncrypted) {
  const std::array<uint8_t, kAes256KeyLen> zero{};
  auto h128 = gcm_hash_key(zero.data(), kAesKeyLen);
  auto h256 = gcm_hash_key(zero.data(), kAes256KeyLen);
  ASSERT_TRUE(h128.ok() && h256.ok());
  EXPECT_EQ(h128.value(),
            (std::array<uint32_t, 4>{0x66e94bd4, 0xef8a2c3b, 0x884cfa59, 0xca342b2e}));
  EXPECT_EQ(h256.value(),
            (std::array<uint32_t, 4>{0xdc95c078, 0xa2408989, 0xad48a214, 0x92842087}));
}

// GF(2^128) multiplication bit by bit (SP 800-38D §6.3, Algorithm 1): the table's reference.
std::array<uint64_t, 2> gf128_mul(std::array<uint64_t, 2> x, std::array<uint64_t, 2> y) {
  std::array<uint64_t, 2> z{}, v = y;
  for (int i = 0; i < 128; ++i) {
    const uint64_t bit = i < 64 ? (x[0] >> (63 - i)) & 1 : (x[1] >> (127 - i)) & 1;
    if (bit != 0) z = {z[0] ^ v[0], z[1] ^ v[1]};
    const bool low = (v[1] & 1) != 0;
    v = {v[0] >> 1, (v[1] >> 1) | (v[0] << 63)};
    if (low) v[0] ^= 0xE100000000000000ull;
  }
  return z;
}

// Entry n of the GHASH table is H times the 4-bit polynomial of n (bit 3: x^0 .. bit 0: x^3).
TEST(OffloadIpsecKernel, GhashTableHoldsTheMultiplesOfH) {
  std::mt19937_64 rng(29);
  for (int t = 0; t < 10; ++t) {
    const std::array<uint32_t, 4> h{static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng()),
                                    static_cast<uint32_t>(rng()), static_cast<uint32_t>(rng())};
    const GhashTable table = ghash_table(h);
    const std::array<uint64_t, 2> hh{uint64_t{h[0]} << 32 | h[1], uint64_t{h[2]} << 32 | h[3]};
    for (uint64_t n = 0; n < 16; ++n) {
      const std::array<uint64_t, 2> want = gf128_mul({n << 60, 0}, hh);
      const uint32_t* e = table.data() + 4 * n;
      EXPECT_EQ((uint64_t{e[0]} << 32 | e[1]), want[0]) << "entry " << n;
      EXPECT_EQ((uint64_t{e[2]} << 32 | e[3]), want[1]) << "entry " << n;
    }
  }
}

TEST(OffloadIpsecKernel, SaRecordsHoldKeysNonceCipherAndGhashKey) {
  std::mt19937_64 rng(5);
  const std::vector<SaConfig> sas = random_sas(rng);
  auto table = build_table(sas);
  ASSERT_TRUE(table);
  const auto records = ipsec_sa_records(*table);
  ASSERT_TRUE(records.ok()) << records.error();
  const std::vector<uint32_t>& w = records.value();
  ASSERT_EQ(w.size(), (kSas + 1) * kIpsecRecordWords);
  EXPECT_EQ(w[0], kSas);
  for (uint32_t i = 0; i < kSas; ++i) {
    SCOPED_TRACE(i);
    const SaConfig& c = sas[i];
    const uint32_t* r = w.data() + (i + 1) * kIpsecRecordWords;
    EXPECT_EQ(r[0], esp::load_be32(c.enc_key));
    EXPECT_EQ(r[kIpsecNonceWord], esp::load_be32(c.nonce));
    EXPECT_EQ(r[kIpsecModeWord], c.cipher == EspCipher::kAesCtr   ? IPSEC_MODE_CTR
                                 : c.cipher == EspCipher::kAesGcm ? IPSEC_MODE_GCM
                                                                  : IPSEC_MODE_CBC);
    EXPECT_EQ(r[kIpsecRoundsWord], c.key_len == kAes256KeyLen ? 14u : 10u);
    EXPECT_EQ(r[kIpsecEsnWord], c.esn ? 1u : 0u);
    // The round keys past AES-128's 44 words are the 256-bit key's only.
    EXPECT_EQ(r[44] != 0, c.key_len == kAes256KeyLen);
    const bool gcm = c.cipher == EspCipher::kAesGcm;
    auto h = gcm_hash_key(c.enc_key, c.key_len);
    ASSERT_TRUE(h.ok());
    for (uint32_t k = 0; k < 4; ++k) {
      EXPECT_EQ(r[kIpsecHashKeyWord + k], gcm ? h.value()[k] : 0u);
      EXPECT_EQ(r[kIpsecGhashTableWord + 4 * 8 + k], gcm ? h.value()[k] : 0u);  // entry 8: H
    }
  }
}

FOR_EACH_BACKEND_TEST(AesMatchesCpu, [](Backend b) { expect_mode_matches_cpu(b, Mode::kAes); })
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

// The native emulated device (intel-ipsec-mb on the device thread) on launches without GCM SAs,
// which it computes itself (the mixed launches above fall back to the portable kernel): the
// same regions and ICVs as the CPU path and as the portable kernel.
TEST(OffloadIpsecKernel, EmuNativeMatchesCpuAndPortableKernel) {
  const Fixture& f = fixture();
  std::vector<Bytes> plain, cipher;
  std::vector<Icv> icv;
  std::vector<uint32_t> sa;
  for (size_t i = 0; i < f.sa.size(); ++i) {
    if (kKinds[f.sa[i]].cipher == EspCipher::kAesGcm) continue;
    plain.push_back(f.plain[i]);
    cipher.push_back(f.cipher[i]);
    icv.push_back(f.icv[i]);
    sa.push_back(f.sa[i]);
  }
  sa.push_back(kSas);  // past the table: left alone, zero ICV
  plain.push_back(f.plain[0]);
  cipher.push_back(f.plain[0]);
  icv.push_back(Icv{});
  ASSERT_GT(sa.size(), 50u);
  EmuSpec native_spec;
  native_spec.native = 1;
  const std::unique_ptr<Device> native = make_emulated_device(native_spec);
  const std::unique_ptr<Device> portable = make_emulated_device(EmuSpec{});
  EXPECT_NE(native->info().platform.find("native host compute"), std::string::npos);
  for (Mode mode : {Mode::kAes, Mode::kHmac, Mode::kChained, Mode::kFused}) {
    SCOPED_TRACE(static_cast<int>(mode));
    auto nt = IpsecTables::upload(*native, *f.table);
    auto pt = IpsecTables::upload(*portable, *f.table);
    ASSERT_TRUE(nt.ok() && pt.ok());
    const std::vector<Bytes>& in = mode == Mode::kHmac ? cipher : plain;
    const uint64_t before = emu_native_launches();
    const DeviceOutcome got = run_on(*native, *nt.value(), mode, in, sa);
    EXPECT_GT(emu_native_launches(), before);
    const DeviceOutcome want = run_on(*portable, *pt.value(), mode, in, sa);
    EXPECT_EQ(count_mismatches(got.regions, cipher), 0u);
    EXPECT_EQ(count_mismatches(got.regions, want.regions), 0u);
    if (mode != Mode::kAes) {
      EXPECT_EQ(count_mismatches(got.icv, icv), 0u);
      EXPECT_EQ(count_mismatches(got.icv, want.icv), 0u);
    }
  }
}

// Kernels without a native form (the lookups, the IDS) run the portable build on a native device;
// a launch with a GCM SA does too (the fixture's mixed launches above).
TEST(OffloadIpsecKernel, EmuNativeFormsAreTheIpsecKernelsOnly) {
  EXPECT_NE(find_emu_native(kIpsecFusedKernel), nullptr);
  EXPECT_NE(find_emu_native(kIpsecAesKernel), nullptr);
  EXPECT_NE(find_emu_native(kIpsecHmacSha1Kernel), nullptr);
  EXPECT_EQ(find_emu_native("ipv4_dir24_8_lookup"), nullptr);
  EXPECT_NE(find_emu_kernel("ipv4_dir24_8_lookup"), nullptr);
}

// The comparison can fail: one flipped bit of an SA's key material or its ESN flag on the device
// and exactly that SA's packets no longer match the CPU: SA 0 (AES-128-CTR) with a wrong
// encryption key or nonce (its regions with ciphertext, and their ICVs) or authentication key
// (every ICV); the AES-128-GCM SA with ESN with a wrong key or salt, or without ESN (every
// region: the tag); SA 2 (AES-128-CTR, ESN) without ESN (every ICV: the high half is hashed).
void expect_mutations_detected(Backend backend) {
  const Fixture& f = fixture();
  std::vector<SaConfig> sas;
  for (uint32_t i = 0; i < kSas; ++i) sas.push_back(f.table->at(i).cfg);
  auto on = [&](uint32_t sa, bool with_text) {
    size_t n = 0;
    for (size_t i = 0; i < f.sa.size(); ++i)
      n += f.sa[i] == sa && (!with_text || cipher_end(sas[sa], f.plain[i]) > kIpsecCipherOffset);
    return n;
  };
  constexpr uint32_t kCtrEsn = 2;
  ASSERT_TRUE(sas[kCtrEsn].esn && sas[kCtrEsn].cipher == EspCipher::kAesCtr);
  ASSERT_TRUE(sas[kGcm128Esn].esn && sas[kGcm128Esn].cipher == EspCipher::kAesGcm);
  struct Mutation {
    const char* what;
    void (*apply)(std::vector<SaConfig>&);
    size_t bad_cipher, bad_icv;
  };
  const Mutation mutations[] = {
      {"ctr key", [](auto& v) { v[0].enc_key[5] ^= 1; }, on(0, true), on(0, true)},
      {"ctr nonce", [](auto& v) { v[0].nonce[2] ^= 1; }, on(0, true), on(0, true)},
      {"auth key", [](auto& v) { v[0].auth_key[19] ^= 1; }, 0, on(0, false)},
      {"gcm key", [](auto& v) { v[kGcm128Esn].enc_key[15] ^= 0x80; }, on(kGcm128Esn, false), 0},
      {"gcm salt", [](auto& v) { v[kGcm128Esn].nonce[0] ^= 1; }, on(kGcm128Esn, false), 0},
      {"gcm esn", [](auto& v) { v[kGcm128Esn].esn = false; }, on(kGcm128Esn, false), 0},
      {"ctr esn", [](auto& v) { v[kCtrEsn].esn = false; }, 0, on(kCtrEsn, false)},
  };
  for (const Mutation& m : mutations) {
    std::vector<SaConfig> bad = sas;
    m.apply(bad);
    auto table = build_table(bad);
    ASSERT_TRUE(table);
    ASSERT_GT(m.bad_cipher + m.bad_icv, 0u);
    for (const auto& dev : devices(backend)) {
      SCOPED_TRACE(dev->label() + " mutation " + m.what);
      auto tables = IpsecTables::upload(*dev, *table);
      ASSERT_TRUE(tables.ok()) << tables.error();
      const DeviceOutcome got = run_on(*dev, *tables.value(), Mode::kFused, f.plain, f.sa);
      EXPECT_EQ(count_mismatches(got.regions, f.cipher), m.bad_cipher);
      EXPECT_EQ(count_mismatches(got.icv, f.icv), m.bad_icv);
    }
  }
}
FOR_EACH_BACKEND_TEST(WrongKeyNonceAuthKeyOrEsnIsDetected, expect_mutations_detected)

TEST(OffloadIpsecKernel, KernelSignatures) {
  for (Backend b : {Backend::kOpenCL, Backend::kCuda}) {
    for (const auto& dev : devices(b)) {
      SCOPED_TRACE(dev->label());
      auto aes = dev->kernel(kIpsecAesKernel);
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
