// SHA-1 (FIPS 180-4 §6.1.2): the compression of one 64-byte block into the chaining state, the
// one definition the IPsec kernels (HMAC-SHA1-96) and the host's SA table builder (the HMAC
// ipad/opad states, src/offload/ipsec_tables.cc) both use.
#ifndef FULCRUM_KERNELS_COMMON_SHA1_H
#define FULCRUM_KERNELS_COMMON_SHA1_H

#include "portable.h"

#define SHA1_BLOCK_BYTES 64u
#define SHA1_BLOCK_WORDS 16u
#define SHA1_STATE_WORDS 5u
#define SHA1_DIGEST_BYTES 20u
#define SHA1_ROUNDS 80u
#define SHA1_ROUNDS_PER_CONSTANT 20u

// One compression of the big-endian block words w[0..15] into h[0..4]; w is used as the rolling
// message schedule, so it holds no useful data afterwards.
INLINE void sha1_block(uint32_t* h, uint32_t* w) {
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  UNROLL
  for (uint32_t t = 0; t < SHA1_ROUNDS; ++t) {
    if (t >= SHA1_BLOCK_WORDS)
      w[t % 16u] =
          rotl32(w[(t - 3u) % 16u] ^ w[(t - 8u) % 16u] ^ w[(t - 14u) % 16u] ^ w[t % 16u], 1u);
    uint32_t f, k;
    if (t < SHA1_ROUNDS_PER_CONSTANT) {
      f = (b & c) | (~b & d);
      k = 0x5A827999u;
    } else if (t < 2u * SHA1_ROUNDS_PER_CONSTANT) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1u;
    } else if (t < 3u * SHA1_ROUNDS_PER_CONSTANT) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    const uint32_t tmp = rotl32(a, 5u) + f + e + k + w[t % 16u];
    e = d;
    d = c;
    c = rotl32(b, 30u);
    b = a;
    a = tmp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

#endif  // FULCRUM_KERNELS_COMMON_SHA1_H
