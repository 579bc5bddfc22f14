// Multi-buffer MD5 (src/lib/re/md5.hh, md5_bulk): eight messages at a time, one in each 32-bit
// lane of AVX2 registers (the technique of Intel's multi-buffer hashing, isa-l_crypto's
// md5_mb). MD5 is a chain of dependent 32-bit operations, so one message cannot use the vector
// width; eight independent messages can. Lanes whose message has fewer blocks than the longest
// of the group keep their state (a blend) while the others go on.
//
// Compiled for AVX2 through function attributes only: the rest of the binary runs on any x86-64,
// and md5_bulk calls this only where the CPU has AVX2 (md5_avx2_available).
#include <immintrin.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "lib/re/md5.hh"

namespace fulcrum::re {
namespace {

constexpr uint32_t kLanes = 8;
constexpr uint32_t kBlock = 64;
constexpr uint32_t kWords = 16;
constexpr uint32_t kSteps = 64;
constexpr uint32_t kStepsPerRound = 16;
constexpr uint32_t kLengthField = 8;  // bytes of the bit length closing the padding
constexpr uint8_t kPadByte = 0x80;
constexpr uint32_t kBitsPerByte = 8;
constexpr int kStateWords = 4;      // a, b, c, d
constexpr int kShiftsPerRound = 4;  // each round cycles through four rotation amounts
constexpr uint32_t kWordBytes = sizeof(uint32_t);

// RFC 1321, 3.3 (initial state) and 3.4 (T[i] = floor(2^32 * |sin(i + 1)|), shift amounts).
constexpr uint32_t kInit[kStateWords] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
constexpr uint32_t kT[kSteps] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
constexpr int kShift[kSteps / kStepsPerRound][kShiftsPerRound] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

// The message word step i reads (RFC 1321, 3.4: rounds 2-4 step through X in strides).
constexpr uint32_t word_index(uint32_t i) {
  const uint32_t j = i % kStepsPerRound;
  switch (i / kStepsPerRound) {
    case 0:
      return j;
    case 1:
      return (5 * j + 1) % kWords;
    case 2:
      return (3 * j + 5) % kWords;
    default:
      return (7 * j) % kWords;
  }
}

// One lane's message: the blocks read straight from the data, then one or two padded tail
// blocks built here.
struct Lane {
  const uint8_t* data = nullptr;
  uint32_t full = 0;    // whole 64-byte blocks of the message
  uint32_t blocks = 0;  // full + tail blocks; 0: an idle lane
  alignas(32) uint8_t tail[2 * kBlock] = {};

  void set(const ByteRange& r) {
    data = r.data;
    full = r.len / kBlock;
    const uint32_t rem = r.len % kBlock;
    const uint32_t tails = rem + 1 + kLengthField > kBlock ? 2 : 1;
    blocks = full + tails;
    std::memset(tail, 0, sizeof tail);
    if (rem > 0) std::memcpy(tail, data + full * kBlock, rem);
    tail[rem] = kPadByte;
    const uint64_t bits = uint64_t{r.len} * kBitsPerByte;
    std::memcpy(tail + tails * kBlock - kLengthField, &bits, sizeof bits);  // little-endian
  }
  const uint8_t* block(uint32_t b) const {
    return b < full ? data + b * kBlock : tail + (b - full) * kBlock;
  }
};

__attribute__((target("avx2"))) inline __m256i rotl(__m256i x, int s) {
  return _mm256_or_si256(_mm256_slli_epi32(x, s), _mm256_srli_epi32(x, 32 - s));
}

// The four round functions (RFC 1321, 3.4), in forms with fewer operations.
__attribute__((target("avx2"))) inline __m256i round_fn(uint32_t round, __m256i x, __m256i y,
                                                        __m256i z) {
  switch (round) {
    case 0:  // F = (x & y) | (~x & z)
      return _mm256_xor_si256(z, _mm256_and_si256(x, _mm256_xor_si256(y, z)));
    case 1:  // G = (x & z) | (y & ~z)
      return _mm256_xor_si256(y, _mm256_and_si256(z, _mm256_xor_si256(x, y)));
    case 2:  // H = x ^ y ^ z
      return _mm256_xor_si256(_mm256_xor_si256(x, y), z);
    default:  // I = y ^ (x | ~z)
      return _mm256_xor_si256(y, _mm256_or_si256(x, _mm256_xor_si256(z, _mm256_set1_epi32(-1))));
  }
}

// Eight lanes' messages from the first block to the last of the longest one.
__attribute__((target("avx2"))) void hash_lanes(const Lane* lanes, Md5Digest* out[kLanes]) {
  __m256i st[kStateWords];
  for (int k = 0; k < kStateWords; ++k) st[k] = _mm256_set1_epi32(static_cast<int>(kInit[k]));
  uint32_t most = 0;
  for (uint32_t l = 0; l < kLanes; ++l) most = lanes[l].blocks > most ? lanes[l].blocks : most;
  for (uint32_t b = 0; b < most; ++b) {
    // The block's words transposed: x[w] holds word w of every lane.
    alignas(32) uint32_t words[kWords][kLanes];
    alignas(32) int32_t active[kLanes];
    for (uint32_t l = 0; l < kLanes; ++l) {
      const bool on = b < lanes[l].blocks;
      active[l] = on ? -1 : 0;
      const uint8_t* p = on ? lanes[l].block(b) : lanes[l].tail;
      for (uint32_t w = 0; w < kWords; ++w)
        std::memcpy(&words[w][l], p + kWordBytes * w, kWordBytes);
    }
    __m256i x[kWords];
    for (uint32_t w = 0; w < kWords; ++w)
      x[w] = _mm256_load_si256(reinterpret_cast<const __m256i*>(words[w]));
    __m256i v[kStateWords] = {st[0], st[1], st[2], st[3]};  // a, b, c, d
#pragma GCC unroll 64
    for (uint32_t i = 0; i < kSteps; ++i) {
      const uint32_t round = i / kStepsPerRound;
      __m256i t = _mm256_add_epi32(v[0], round_fn(round, v[1], v[2], v[3]));
      t = _mm256_add_epi32(
          t, _mm256_add_epi32(x[word_index(i)], _mm256_set1_epi32(static_cast<int>(kT[i]))));
      t = _mm256_add_epi32(v[1], rotl(t, kShift[round][i % kShiftsPerRound]));
      v[0] = v[3], v[3] = v[2], v[2] = v[1], v[1] = t;
    }
    const __m256i on = _mm256_load_si256(reinterpret_cast<const __m256i*>(active));
    for (int k = 0; k < kStateWords; ++k)
      st[k] = _mm256_blendv_epi8(st[k], _mm256_add_epi32(st[k], v[k]), on);
  }
  alignas(32) uint32_t words[kStateWords][kLanes];
  for (int k = 0; k < kStateWords; ++k)
    _mm256_store_si256(reinterpret_cast<__m256i*>(words[k]), st[k]);
  for (uint32_t l = 0; l < kLanes; ++l) {
    if (out[l] == nullptr) continue;
    for (int k = 0; k < kStateWords; ++k)  // little-endian words
      std::memcpy(out[l]->b + kWordBytes * k, &words[k][l], kWordBytes);
  }
}

}  // namespace

bool md5_avx2_available() {
  static const bool yes = __builtin_cpu_supports("avx2");
  return yes;
}

void md5_bulk_avx2(const ByteRange* in, Md5Digest* out, uint32_t n) {
  std::array<Lane, kLanes> lanes;
  for (uint32_t first = 0; first < n; first += kLanes) {
    Md5Digest* dst[kLanes] = {};
    for (uint32_t l = 0; l < kLanes; ++l) {
      if (first + l < n) {
        lanes[l].set(in[first + l]);
        dst[l] = &out[first + l];
      } else {
        lanes[l].blocks = 0;
      }
    }
    hash_lanes(lanes.data(), dst);
  }
}

}  // namespace fulcrum::re
