// GHASH (NIST SP 800-38D §6.4), the authentication of AES-GCM: a 128-bit block is multiplied
// by the hash key H in GF(2^128) four bits at a time (Shoup's method, as OpenSSL's
// gcm_gmult_4bit): a 16-entry table of multiples of H per SA (common/sa_record.h, built on the
// host), and a 16-entry table reducing the four bits shifted out past x^127 at each step.
// Blocks are two 64-bit halves of the big-endian 128-bit string (hi: its first 8 bytes). Cost:
// 32 table steps (a shift, two table reads, three XORs) per 16-byte block, several times an AES
// block's; no carry-less multiply instruction is used.
#ifndef FULCRUM_KERNELS_COMMON_GHASH_H
#define FULCRUM_KERNELS_COMMON_GHASH_H

#include "portable.h"
#include "sa_record.h"

#define GHASH_NIBBLE_BITS 4u
#define GHASH_NIBBLE_MASK 0xFu
#define GHASH_NIBBLES 32u
#define GHASH_HALF_BITS 64u
#define GHASH_REM_SHIFT 48u  // the reduction terms sit in the top 16 bits of the high half

// (r * x^128) mod (x^128 + x^7 + x^2 + x + 1) for the 4 bits r shifted out, as bits 63..48.
CONSTANT_MEM uint32_t ghash_rem4[IPSEC_GHASH_ENTRIES] = {
    0x0000u, 0x1C20u, 0x3840u, 0x2460u, 0x7080u, 0x6CA0u, 0x48C0u, 0x54E0u,
    0xE100u, 0xFD20u, 0xD940u, 0xC560u, 0x9180u, 0x8DA0u, 0xA9C0u, 0xB5E0u,
};

typedef struct GhashBlock {
  uint64_t hi;
  uint64_t lo;
} GhashBlock;

INLINE GhashBlock ghash_block(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  GhashBlock x;
  x.hi = ((uint64_t)a << 32) | b;
  x.lo = ((uint64_t)c << 32) | d;
  return x;
}

INLINE GhashBlock ghash_xor(GhashBlock x, GhashBlock y) {
  x.hi ^= y.hi;
  x.lo ^= y.lo;
  return x;
}

// x * H, with table the SA's GHASH table: the nibbles of x from the last (coefficients of
// x^124..x^127) to the first.
INLINE GhashBlock ghash_mul(GhashBlock x, GLOBAL const uint32_t* table) {
  uint64_t zh = 0, zl = 0;
  for (uint32_t i = 0; i < GHASH_NIBBLES; ++i) {
    const uint32_t at = GHASH_NIBBLE_BITS * i;
    const uint32_t n =
        (uint32_t)((at < GHASH_HALF_BITS ? x.lo >> at : x.hi >> (at - GHASH_HALF_BITS)) &
                   GHASH_NIBBLE_MASK);
    const uint32_t rem = (uint32_t)(zl & GHASH_NIBBLE_MASK);
    zl = (zh << (GHASH_HALF_BITS - GHASH_NIBBLE_BITS)) | (zl >> GHASH_NIBBLE_BITS);
    zh = (zh >> GHASH_NIBBLE_BITS) ^ ((uint64_t)ghash_rem4[rem] << GHASH_REM_SHIFT);
    GLOBAL const uint32_t* e = table + IPSEC_GCM_BLOCK_WORDS * n;
    zh ^= ((uint64_t)LOAD_RO(&e[0]) << 32) | LOAD_RO(&e[1]);
    zl ^= ((uint64_t)LOAD_RO(&e[2]) << 32) | LOAD_RO(&e[3]);
  }
  GhashBlock z;
  z.hi = zh;
  z.lo = zl;
  return z;
}

#endif  // FULCRUM_KERNELS_COMMON_GHASH_H
