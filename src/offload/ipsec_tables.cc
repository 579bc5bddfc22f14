#include "offload/ipsec_tables.hh"

#include <openssl/evp.h>

#include <algorithm>
#include <bit>
#include <cstring>
#include <string>

#include "kernels/common/sha1.h"
#include "lib/ipsec_crypto.hh"

namespace fulcrum::offload {
namespace {

constexpr uint32_t kAes128KeyWords = 4;
constexpr uint32_t kAes256KeyWords = 8;
constexpr uint32_t kAes256SubWordAt = 4;  // FIPS-197 §5.2: the extra SubWord of Nk = 8
constexpr uint32_t kAes128Words = 4 * (IPSEC_AES128_ROUNDS + 1);
constexpr uint8_t kAesPoly = 0x1B;    // x^8 + x^4 + x^3 + x + 1, less x^8
constexpr uint8_t kAesAffine = 0x63;  // FIPS-197 §5.1.1 constant c
constexpr uint8_t kHmacIpad = 0x36;   // RFC 2104
constexpr uint8_t kHmacOpad = 0x5C;
static_assert(kSha1StateWords == SHA1_STATE_WORDS);
static_assert(kSha1BlockLen == SHA1_BLOCK_BYTES);
static_assert(kIpsecRoundKeyWords == 4 * (IPSEC_AES256_ROUNDS + 1));
// GHASH (SP 800-38D §6.3): multiplying by x is a right shift of the bit string, folding x^128
// back as 0xE1 followed by 120 zero bits.
constexpr uint64_t kGhashReduce = 0xE100000000000000ull;
constexpr uint32_t kGhashH = 8;  // the table entry that is H itself
constexpr std::array<uint32_t, kSha1StateWords> kSha1Init{0x67452301, 0xEFCDAB89, 0x98BADCFE,
                                                          0x10325476, 0xC3D2E1F0};

constexpr uint8_t gf_mul(uint8_t a, uint8_t b) {
  uint8_t p = 0;
  for (int i = 0; i < 8; ++i) {
    if (b & 1) p ^= a;
    const bool carry = (a & 0x80) != 0;
    a = static_cast<uint8_t>(a << 1);
    if (carry) a ^= kAesPoly;
    b >>= 1;
  }
  return p;
}

constexpr uint8_t rotl8(uint8_t x, int n) {
  return static_cast<uint8_t>((x << n) | (x >> (8 - n)));
}

// FIPS-197 §5.1.1: the multiplicative inverse in GF(2^8) (0 for 0), then the affine map.
constexpr std::array<uint8_t, 256> make_sbox() {
  std::array<uint8_t, 256> s{};
  for (int x = 0; x < 256; ++x) {
    uint8_t inv = 0;
    for (int y = 1; y < 256 && x != 0; ++y)
      if (gf_mul(static_cast<uint8_t>(x), static_cast<uint8_t>(y)) == 1)
        inv = static_cast<uint8_t>(y);
    s[static_cast<size_t>(x)] = static_cast<uint8_t>(inv ^ rotl8(inv, 1) ^ rotl8(inv, 2) ^
                                                     rotl8(inv, 3) ^ rotl8(inv, 4) ^ kAesAffine);
  }
  return s;
}

const std::array<uint8_t, 256>& sbox() {
  static const std::array<uint8_t, 256> s = make_sbox();
  return s;
}

uint32_t sub_word(uint32_t w) {
  const auto& s = sbox();
  return uint32_t{s[w >> 24]} << 24 | uint32_t{s[(w >> 16) & 0xFF]} << 16 |
         uint32_t{s[(w >> 8) & 0xFF]} << 8 | s[w & 0xFF];
}

uint32_t be32(const uint8_t* p) {
  return uint32_t{p[0]} << 24 | uint32_t{p[1]} << 16 | uint32_t{p[2]} << 8 | p[3];
}

}  // namespace

AesRoundKeys aes_expand_key(const uint8_t* key, size_t key_len) {
  const uint32_t nk = key_len == kAes256KeyLen ? kAes256KeyWords : kAes128KeyWords;
  const uint32_t words = key_len == kAes256KeyLen ? kIpsecRoundKeyWords : kAes128Words;
  AesRoundKeys w{};
  for (uint32_t i = 0; i < nk; ++i) w[i] = be32(key + 4 * i);
  uint8_t rcon = 1;
  for (uint32_t i = nk; i < words; ++i) {
    uint32_t t = w[i - 1];
    if (i % nk == 0) {
      t = sub_word(rotl32(t, 8)) ^ (uint32_t{rcon} << 24);
      rcon = gf_mul(rcon, 2);
    } else if (nk == kAes256KeyWords && i % nk == kAes256SubWordAt) {
      t = sub_word(t);
    }
    w[i] = w[i - nk] ^ t;
  }
  return w;
}

Result<std::array<uint32_t, IPSEC_GCM_BLOCK_WORDS>> gcm_hash_key(const uint8_t* key,
                                                                 size_t key_len) {
  const EVP_CIPHER* cipher = key_len == kAes256KeyLen ? EVP_aes_256_ecb() : EVP_aes_128_ecb();
  uint8_t zero[kAesBlockLen] = {}, h[2 * kAesBlockLen] = {};
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  if (ctx == nullptr) return make_error("ipsec tables: OpenSSL: cannot allocate a cipher context");
  int n = 0;
  const bool ok = EVP_EncryptInit_ex(ctx, cipher, nullptr, key, nullptr) == 1 &&
                  EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 &&
                  EVP_EncryptUpdate(ctx, h, &n, zero, sizeof zero) == 1 &&
                  n == static_cast<int>(kAesBlockLen);
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return make_error("ipsec tables: OpenSSL: AES of the zero block failed");
  std::array<uint32_t, IPSEC_GCM_BLOCK_WORDS> out{};
  for (uint32_t i = 0; i < IPSEC_GCM_BLOCK_WORDS; ++i) out[i] = be32(h + 4 * i);
  return out;
}

GhashTable ghash_table(const std::array<uint32_t, IPSEC_GCM_BLOCK_WORDS>& h) {
  struct Block {
    uint64_t hi, lo;
  };
  Block e[IPSEC_GHASH_ENTRIES] = {};
  Block v{uint64_t{h[0]} << 32 | h[1], uint64_t{h[2]} << 32 | h[3]};
  // Entries 8, 4, 2, 1: H, H x, H x^2, H x^3; the others are sums of those.
  for (uint32_t bit = kGhashH; bit != 0; bit >>= 1) {
    e[bit] = v;
    const uint64_t fold = (v.lo & 1) != 0 ? kGhashReduce : 0;
    v = {(v.hi >> 1) ^ fold, (v.hi << 63) | (v.lo >> 1)};
  }
  for (uint32_t n = 1; n < IPSEC_GHASH_ENTRIES; ++n) {
    const uint32_t top = 1u << (std::bit_width(n) - 1);
    if (n != top) e[n] = {e[top].hi ^ e[n - top].hi, e[top].lo ^ e[n - top].lo};
  }
  GhashTable t{};
  for (uint32_t n = 0; n < IPSEC_GHASH_ENTRIES; ++n) {
    uint32_t* w = t.data() + IPSEC_GCM_BLOCK_WORDS * n;
    w[0] = static_cast<uint32_t>(e[n].hi >> 32);
    w[1] = static_cast<uint32_t>(e[n].hi);
    w[2] = static_cast<uint32_t>(e[n].lo >> 32);
    w[3] = static_cast<uint32_t>(e[n].lo);
  }
  return t;
}

void sha1_compress(Sha1State& state, const uint8_t* block) {
  uint32_t w[SHA1_BLOCK_WORDS];
  for (uint32_t t = 0; t < SHA1_BLOCK_WORDS; ++t) w[t] = be32(block + sizeof(uint32_t) * t);
  sha1_block(state.data(), w);
}

void hmac_sha1_states(const uint8_t* key, Sha1State& inner, Sha1State& outer) {
  uint8_t block[kSha1BlockLen];
  inner = kSha1Init;
  outer = kSha1Init;
  for (size_t i = 0; i < kSha1BlockLen; ++i)
    block[i] = static_cast<uint8_t>((i < kHmacSha1KeyLen ? key[i] : 0) ^ kHmacIpad);
  sha1_compress(inner, block);
  for (size_t i = 0; i < kSha1BlockLen; ++i)
    block[i] = static_cast<uint8_t>((i < kHmacSha1KeyLen ? key[i] : 0) ^ kHmacOpad);
  sha1_compress(outer, block);
}

Result<std::vector<uint32_t>> ipsec_sa_records(const SaTable& table) {
  std::vector<uint32_t> words((table.size() + 1) * kIpsecRecordWords, 0);
  words[IPSEC_SA_COUNT_WORD] = static_cast<uint32_t>(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const SaConfig& cfg = table.at(i).cfg;
    IpsecSaRecord r{};
    const AesRoundKeys rk = aes_expand_key(cfg.enc_key, cfg.key_len);
    std::copy(rk.begin(), rk.end(), r.round_keys);
    r.nonce = be32(cfg.nonce);
    Sha1State inner, outer;
    hmac_sha1_states(cfg.auth_key, inner, outer);
    std::copy(inner.begin(), inner.end(), r.ipad_state);
    std::copy(outer.begin(), outer.end(), r.opad_state);
    r.mode = cfg.cipher == EspCipher::kAesCtr   ? IPSEC_MODE_CTR
             : cfg.cipher == EspCipher::kAesGcm ? IPSEC_MODE_GCM
                                                : IPSEC_MODE_CBC;
    r.rounds = cfg.key_len == kAes256KeyLen ? IPSEC_AES256_ROUNDS : IPSEC_AES128_ROUNDS;
    r.esn = cfg.esn ? 1 : 0;
    if (cfg.cipher == EspCipher::kAesGcm) {
      auto h = gcm_hash_key(cfg.enc_key, cfg.key_len);
      if (!h) return make_error(h.error());
      std::copy(h.value().begin(), h.value().end(), r.hash_key);
      const GhashTable t = ghash_table(h.value());
      std::copy(t.begin(), t.end(), r.ghash_table);
    }
    std::memcpy(words.data() + (i + 1) * kIpsecRecordWords, &r, sizeof(r));
  }
  return words;
}

Result<std::unique_ptr<IpsecTables>> IpsecTables::upload(Device& device, const SaTable& table) {
  const Result<std::vector<uint32_t>> records = ipsec_sa_records(table);
  if (!records) return make_error(records.error());
  const std::vector<uint32_t>& words = records.value();
  const size_t bytes = words.size() * sizeof(uint32_t);
  Result<std::unique_ptr<DeviceBuffer>> buf = device.alloc(bytes);
  if (!buf) return make_error("ipsec tables: " + buf.error());
  if (Status s = device.upload(*buf.value(), words.data(), bytes); !s)
    return make_error("ipsec tables: " + s.error());
  return std::unique_ptr<IpsecTables>(
      new IpsecTables(device, std::move(buf.value()), static_cast<uint32_t>(table.size())));
}

std::vector<TaskArg> IpsecTables::aes_args() const {
  return {TaskArg::input(kBytesInput), TaskArg::input(kRegionsInput), TaskArg::input(kItemsInput),
          TaskArg::resident(*table_), TaskArg::items()};
}

std::vector<TaskArg> IpsecTables::hmac_args() const {
  return {TaskArg::input(kBytesInput), TaskArg::input(kRegionsInput),   TaskArg::input(kItemsInput),
          TaskArg::resident(*table_),  TaskArg::output(kResultsOutput), TaskArg::items()};
}

}  // namespace fulcrum::offload
