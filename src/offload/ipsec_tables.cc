#include "offload/ipsec_tables.hh"

#include <algorithm>
#include <cstring>
#include <string>

#include "kernels/common/sha1.h"
#include "lib/ipsec_crypto.hh"

namespace fulcrum::offload {
namespace {

constexpr uint32_t kAesKeyWords = 4;
constexpr uint8_t kAesPoly = 0x1B;    // x^8 + x^4 + x^3 + x + 1, less x^8
constexpr uint8_t kAesAffine = 0x63;  // FIPS-197 §5.1.1 constant c
constexpr uint8_t kHmacIpad = 0x36;   // RFC 2104
constexpr uint8_t kHmacOpad = 0x5C;
static_assert(kSha1StateWords == SHA1_STATE_WORDS);
static_assert(kSha1BlockLen == SHA1_BLOCK_BYTES);
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

AesRoundKeys aes128_expand_key(const uint8_t* key) {
  AesRoundKeys w{};
  for (uint32_t i = 0; i < kAesKeyWords; ++i) w[i] = be32(key + 4 * i);
  uint8_t rcon = 1;
  for (uint32_t i = kAesKeyWords; i < kIpsecRoundKeyWords; ++i) {
    uint32_t t = w[i - 1];
    if (i % kAesKeyWords == 0) {
      t = sub_word(rotl32(t, 8)) ^ (uint32_t{rcon} << 24);
      rcon = gf_mul(rcon, 2);
    }
    w[i] = w[i - kAesKeyWords] ^ t;
  }
  return w;
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

std::vector<uint32_t> ipsec_sa_records(const SaTable& table) {
  std::vector<uint32_t> words((table.size() + 1) * kIpsecRecordWords, 0);
  words[IPSEC_SA_COUNT_WORD] = static_cast<uint32_t>(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const SaConfig& cfg = table.at(i).cfg;
    IpsecSaRecord r{};
    const AesRoundKeys rk = aes128_expand_key(cfg.enc_key);
    std::copy(rk.begin(), rk.end(), r.round_keys);
    r.nonce = be32(cfg.nonce);
    Sha1State inner, outer;
    hmac_sha1_states(cfg.auth_key, inner, outer);
    std::copy(inner.begin(), inner.end(), r.ipad_state);
    std::copy(outer.begin(), outer.end(), r.opad_state);
    r.ctr = cfg.cipher == EspCipher::kAesCtr ? 1 : 0;
    std::memcpy(words.data() + (i + 1) * kIpsecRecordWords, &r, sizeof(r));
  }
  return words;
}

Result<std::unique_ptr<IpsecTables>> IpsecTables::upload(Device& device, const SaTable& table) {
  const std::vector<uint32_t> words = ipsec_sa_records(table);
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
