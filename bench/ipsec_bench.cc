// IPsec ESP gateway benchmark (issue 3, NBA §4.1 / Fig. 11): the encapsulation pipeline
// (IPsecESPEncap -> IPsecAES -> IPsecAuthHMACSHA1) from the generator at 64..1500 B, next to
// ceilings measured in the same run on buffers of the same ESP sizes:
//   * OpenSSL EVP, one packet at a time (AES-128-CTR + HMAC-SHA1, as NBA's CPU version),
//   * intel-ipsec-mb through MbCrypto, 64 packets per flush (the elements' crypto, no pipeline).
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/params.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "lib/esp.hh"
#include "lib/ipsec_crypto.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kSizes[] = {64, 256, 1024, 1500};
constexpr uint32_t kFlows = 1024;
constexpr uint32_t kCryptoBatch = 64;
constexpr double kBitsPerByte = 8;
constexpr double kMega = 1e6;
constexpr double kGiga = 1e9;
constexpr uint8_t kKeyByte = 0x2b;
constexpr uint8_t kAuthByte = 0x0c;
const char* const kNullTxOnly = "net_null1,no-rx=1";
// One outbound SA for every destination (the generator's dst=uniform draws them at random).
const char* const kSaLine =
    "4096 192.0.2.1 198.51.100.1 2b7e151628aed2a6abf7158809cf4f3cdeadbeef "
    "0102030405060708090a0b0c0d0e0f1011121314 0.0.0.0/0 DIR out\n";

using Clock = std::chrono::steady_clock;

// Bytes the cipher and the MAC cover for a frame of `frame` bytes.
struct EspSizes {
  uint32_t cipher;
  uint32_t auth;
};
EspSizes esp_sizes(uint32_t frame) {
  const uint32_t inner = frame - esp::kEtherHdrLen;
  const uint32_t cipher = inner + esp::pad_len(inner) + esp::kTrailerLen;
  return {cipher, cipher + esp::kHdrIvLen};
}

struct Ceiling {
  double aes_mpps = 0;
  double hmac_mpps = 0;
  double both_mpps = 0;
};

// OpenSSL EVP, per packet: a new IV on a kept AES-128-CTR context, an HMAC-SHA1 re-initialised
// with the kept key.
Ceiling openssl_ceiling(uint32_t frame, double seconds) {
  Ceiling c;
  const EspSizes sz = esp_sizes(frame);
  std::vector<uint8_t> buf(sz.auth + kIcvLen, 0);
  uint8_t key[kAesKeyLen];
  uint8_t auth[kHmacSha1KeyLen];
  std::memset(key, kKeyByte, sizeof key);
  std::memset(auth, kAuthByte, sizeof auth);
  uint8_t iv[kAesKeyLen] = {};
  std::unique_ptr<EVP_CIPHER_CTX, decltype(&EVP_CIPHER_CTX_free)> cctx(EVP_CIPHER_CTX_new(),
                                                                       &EVP_CIPHER_CTX_free);
  std::unique_ptr<EVP_MAC, decltype(&EVP_MAC_free)> mac(EVP_MAC_fetch(nullptr, "HMAC", nullptr),
                                                        &EVP_MAC_free);
  if (!cctx || !mac) return c;
  std::unique_ptr<EVP_MAC_CTX, decltype(&EVP_MAC_CTX_free)> mctx(EVP_MAC_CTX_new(mac.get()),
                                                                 &EVP_MAC_CTX_free);
  char digest[] = "SHA1";
  const OSSL_PARAM params[] = {OSSL_PARAM_construct_utf8_string(OSSL_MAC_PARAM_DIGEST, digest, 0),
                               OSSL_PARAM_END};
  if (!mctx || EVP_EncryptInit_ex(cctx.get(), EVP_aes_128_ctr(), nullptr, key, iv) != 1 ||
      EVP_MAC_init(mctx.get(), auth, sizeof auth, params) != 1)
    return c;
  uint8_t* cipher = buf.data() + esp::kHdrIvLen;
  uint64_t seq = 0;
  auto aes = [&] {
    std::memcpy(iv + kCtrNonceLen, &++seq, sizeof seq);
    int outl = 0;
    EVP_EncryptInit_ex(cctx.get(), nullptr, nullptr, nullptr, iv);
    EVP_EncryptUpdate(cctx.get(), cipher, &outl, cipher, static_cast<int>(sz.cipher));
  };
  auto hmac = [&] {
    uint8_t out[EVP_MAX_MD_SIZE];
    size_t outl = 0;
    EVP_MAC_init(mctx.get(), nullptr, 0, nullptr);
    EVP_MAC_update(mctx.get(), buf.data(), sz.auth);
    EVP_MAC_final(mctx.get(), out, &outl, sizeof out);
    std::memcpy(buf.data() + sz.auth, out, kIcvLen);
  };
  c.aes_mpps = rate_mpps(seconds / 3, aes);
  c.hmac_mpps = rate_mpps(seconds / 3, hmac);
  c.both_mpps = rate_mpps(seconds / 3, [&] {
    aes();
    hmac();
  });
  return c;
}

// intel-ipsec-mb via MbCrypto, kCryptoBatch packets per flush (CTR jobs, then HMAC jobs).
double multibuffer_mpps(uint32_t frame, double seconds) {
  auto crypto = MbCrypto::create();
  if (!crypto) return 0;
  MbCrypto& c = **crypto;
  const EspSizes sz = esp_sizes(frame);
  uint8_t key[kAesKeyLen + kCtrNonceLen];
  uint8_t auth[kHmacSha1KeyLen];
  std::memset(key, kKeyByte, sizeof key);
  std::memset(auth, kAuthByte, sizeof auth);
  AesKey akey;
  HmacSha1Key hkey;
  c.expand_aes(key, kAesKeyLen, key + kAesKeyLen, akey);
  c.prepare_hmac_sha1(auth, sizeof auth, hkey);
  std::vector<std::vector<uint8_t>> bufs(kCryptoBatch, std::vector<uint8_t>(sz.auth + kIcvLen));
  alignas(16) uint8_t ivs[kCryptoBatch][kAesKeyLen] = {};
  const auto start = Clock::now();
  uint64_t n = 0;
  double elapsed = 0;
  do {
    for (uint32_t i = 0; i < kCryptoBatch; ++i)
      c.ctr(akey, ivs[i], bufs[i].data() + esp::kHdrIvLen, sz.cipher, i);
    c.finish();
    for (uint32_t i = 0; i < kCryptoBatch; ++i)
      c.hmac_sha1(hkey, bufs[i].data(), sz.auth, bufs[i].data() + sz.auth, kIcvLen, i);
    c.finish();
    n += kCryptoBatch;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return static_cast<double>(n) / elapsed / kMega;
}

std::string bench_ipsec(const BenchContext& ctx) {
  const double s = ctx.seconds;
  const std::string sa_file = ctx.dir + "/ipsec-bench-sa.txt";
  if (FILE* f = std::fopen(sa_file.c_str(), "w")) {
    std::fputs(kSaLine, f);
    std::fclose(f);
  } else {
    return "null";
  }
  const std::string q = "\"" + sa_file + "\"";
  const std::string pipeline = "FromInput -> IPsecESPEncap(" + q + ") -> IPsecAES(" + q +
                               ") -> IPsecAuthHMACSHA1(" + q + ") -> ToOutput;";
  std::vector<std::string> rows;
  for (uint32_t size : kSizes) {
    const std::string gen =
        "gen:size=" + std::to_string(size) + ",flows=" + std::to_string(kFlows) + ",dst=uniform";
    // Pipeline and ceilings alternate, kRepeats times each, so that load from elsewhere on
    // this shared machine falls on both sides of the ratios; medians of each.
    std::vector<Measured> runs;
    std::vector<Ceiling> ceilings;
    std::vector<double> mbs;
    for (int r = 0; r < kRepeats; ++r) {
      runs.push_back(measure_once(pipeline, {gen, kNullTxOnly}, s / kRepeats, BranchMode::kReuse));
      ceilings.push_back(openssl_ceiling(size, s / kRepeats));
      mbs.push_back(multibuffer_mpps(size, s / kRepeats));
    }
    Measured m = runs[0];
    for (const Measured& x : runs) m.balanced &= x.balanced;
    m.mpps = median(runs, [](const Measured& x) { return x.mpps; });
    Ceiling ossl;
    ossl.aes_mpps = median(ceilings, [](const Ceiling& c) { return c.aes_mpps; });
    ossl.hmac_mpps = median(ceilings, [](const Ceiling& c) { return c.hmac_mpps; });
    ossl.both_mpps = median(ceilings, [](const Ceiling& c) { return c.both_mpps; });
    const double mb = median(mbs, [](double x) { return x; });
    const double gbps = m.mpps * kMega * size * kBitsPerByte / kGiga;
    const double ratio = ossl.both_mpps > 0 ? m.mpps / ossl.both_mpps : 0;
    std::fprintf(stderr,
                 "bench: ipsec encap %u B: %.2f Mpps %.2f Gbps; OpenSSL per packet aes %.2f, "
                 "hmac %.2f, both %.2f Mpps (ratio %.2f); intel-ipsec-mb x%u %.2f Mpps\n",
                 size, m.mpps, gbps, ossl.aes_mpps, ossl.hmac_mpps, ossl.both_mpps, ratio,
                 kCryptoBatch, mb);
    rows.push_back(Obj()
                       .count("size", size)
                       .num("mpps", m.mpps)
                       .num("gbps", gbps)
                       .raw("balanced", m.balanced ? "true" : "false")
                       .num("openssl_aes_ctr_mpps", ossl.aes_mpps)
                       .num("openssl_hmac_sha1_mpps", ossl.hmac_mpps)
                       .num("openssl_both_mpps", ossl.both_mpps)
                       .num("ratio_to_openssl_both", ratio)
                       .num("ipsec_mb_crypto_only_mpps", mb)
                       .num("ratio_to_ipsec_mb_crypto_only", mb > 0 ? m.mpps / mb : 0)
                       .done());
  }
  return Obj()
      .str("what",
           "IPsecESPEncap -> IPsecAES (AES-128-CTR) -> IPsecAuthHMACSHA1 (HMAC-SHA1-96) from "
           "gen dst=uniform, one SA 0.0.0.0/0, 1 worker; gbps counts input frame bytes. "
           "Ceilings on buffers of the same ESP sizes: OpenSSL EVP one packet at a time, and "
           "intel-ipsec-mb 64 jobs per flush without the pipeline")
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(80, "ipsec", bench_ipsec);

}  // namespace fulcrum::bench
