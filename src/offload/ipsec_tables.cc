#include "offload/ipsec_tables.hh"

#include <algorithm>
#include <string>

#include "lib/ipsec_crypto.hh"

namespace fulcrum::offload {
namespace {

constexpr uint32_t kAesKeyWords = 4;
constexpr uint8_t kAesPoly = 0x1B;    // x^8 + x^4 + x^3 + x + 1, less x^8
constexpr uint8_t kAesAffine = 0x63;  // FIPS-197 §5.1.1 constant c
constexpr uint8_t kHmacIpad = 0x36;   // RFC 2104
constexpr uint8_t kHmacOpad = 0x5C;
constexpr uint32_t kSha1Rounds = 80;
constexpr uint32_t kSha1ScheduleWords = 16;
constexpr std::array<uint32_t, kSha1StateWords> kSha1Init{0x67452301, 0xEFCDAB89, 0x98BADCFE,
                                                          0x10325476, 0xC3D2E1F0};
constexpr std::array<uint32_t, 4> kSha1K{0x5A827999, 0x6ED9EBA1, 0x8F1BBCDC, 0xCA62C1D6};
constexpr uint32_t kSha1RoundsPerK = 20;

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

uint32_t rotl32(uint32_t x, int n) {
  return (x << n) | (x >> (32 - n));
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
  uint32_t w[kSha1Rounds];
  for (uint32_t t = 0; t < kSha1ScheduleWords; ++t) w[t] = be32(block + 4 * t);
  for (uint32_t t = kSha1ScheduleWords; t < kSha1Rounds; ++t)
    w[t] = rotl32(w[t - 3] ^ w[t - 8] ^ w[t - 14] ^ w[t - 16], 1);
  uint32_t a = state[0], b = state[1], c = state[2], d = state[3], e = state[4];
  for (uint32_t t = 0; t < kSha1Rounds; ++t) {
    uint32_t f;
    switch (t / kSha1RoundsPerK) {
      case 0:
        f = (b & c) | (~b & d);
        break;
      case 2:
        f = (b & c) | (b & d) | (c & d);
        break;
      default:
        f = b ^ c ^ d;
        break;
    }
    const uint32_t tmp = rotl32(a, 5) + f + e + kSha1K[t / kSha1RoundsPerK] + w[t];
    e = d;
    d = c;
    c = rotl32(b, 30);
    b = a;
    a = tmp;
  }
  state[0] += a;
  state[1] += b;
  state[2] += c;
  state[3] += d;
  state[4] += e;
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
  words[0] = static_cast<uint32_t>(table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const SaConfig& cfg = table.at(i).cfg;
    uint32_t* r = words.data() + (i + 1) * kIpsecRecordWords;
    const AesRoundKeys rk = aes128_expand_key(cfg.enc_key);
    std::copy(rk.begin(), rk.end(), r);
    r[kIpsecNonceWord] = be32(cfg.nonce);
    Sha1State inner, outer;
    hmac_sha1_states(cfg.auth_key, inner, outer);
    std::copy(inner.begin(), inner.end(), r + kIpsecIpadWord);
    std::copy(outer.begin(), outer.end(), r + kIpsecOpadWord);
    r[kIpsecCtrWord] = cfg.cipher == EspCipher::kAesCtr ? 1 : 0;
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
