#include "l7/flow/device_tables.hh"

#include <cstring>

#include "kernels/common/ids_ac_layout.h"
#include "offload/ipsec_tables.hh"

namespace fulcrum::l7 {
namespace {

constexpr uint32_t kAes128Rounds = 10;
constexpr uint32_t kWordsPerRound = 4;

uint32_t xtime(uint32_t x) {
  return ((x << 1) ^ ((x & 0x80u) != 0 ? 0x1Bu : 0u)) & 0xFFu;
}

uint32_t gf_mul(uint32_t x, uint32_t b) {
  uint32_t r = 0;
  for (; b != 0; b >>= 1, x = xtime(x))
    if (b & 1u) r ^= x;
  return r;
}

// InvMixColumns of one column held as a big-endian word.
uint32_t inv_mix_column(uint32_t w) {
  const uint32_t a0 = w >> 24, a1 = (w >> 16) & 0xFFu, a2 = (w >> 8) & 0xFFu, a3 = w & 0xFFu;
  const auto row = [](uint32_t p, uint32_t q, uint32_t r, uint32_t s) {
    return gf_mul(p, 14) ^ gf_mul(q, 11) ^ gf_mul(r, 13) ^ gf_mul(s, 9);
  };
  return row(a0, a1, a2, a3) << 24 | row(a1, a2, a3, a0) << 16 | row(a2, a3, a0, a1) << 8 |
         row(a3, a0, a1, a2);
}

}  // namespace

std::vector<uint8_t> aes128_cbc_table(std::span<const uint8_t, kAes128KeyBytes> key) {
  const offload::AesRoundKeys w = offload::aes_expand_key(key.data(), key.size());
  uint32_t words[2 * kAes128ScheduleWords];
  for (size_t i = 0; i < kAes128ScheduleWords; ++i) {
    words[i] = w[i];
    const size_t round = i / kWordsPerRound;
    words[kAes128ScheduleWords + i] =
        round == 0 || round == kAes128Rounds ? w[i] : inv_mix_column(w[i]);
  }
  std::vector<uint8_t> table(sizeof words);
  std::memcpy(table.data(), words, sizeof words);
  return table;
}

std::vector<uint8_t> ids_ac_table(const ids::AhoCorasick& ac) {
  static_assert(IDS_AC_ALPHABET % sizeof(uint32_t) == 0, "transitions start 4-byte aligned");
  const std::span<const uint8_t> classes = ac.classes();
  const std::span<const uint32_t> trans = ac.table();
  std::vector<uint8_t> table(IDS_AC_ALPHABET + trans.size_bytes());
  std::memcpy(table.data(), classes.data(), classes.size());
  std::memcpy(table.data() + IDS_AC_ALPHABET, trans.data(), trans.size_bytes());
  return table;
}

}  // namespace fulcrum::l7
