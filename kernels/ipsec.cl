// IPsec ESP outbound crypto (src/offload/ipsec_tables.hh has the task layout; common/sa_record.h
// the SA table records): AES-128-CTR (RFC 3686) of region[16, len), HMAC-SHA1-96 (RFC 2404) over
// the whole region after encryption, or both fused in one pass. One work item per packet. Words
// are handled big-endian, as AES (FIPS-197) and SHA-1 (FIPS 180-4) define them; AES is
// common/aes128.h (T-tables staged in local memory), SHA-1 common/sha1.h. Regions start at
// multiples of 16 in `bytes`, so every 16-byte chunk of a region is aligned.
#include "common/aes128.h"
#include "common/portable.h"
#include "common/sa_record.h"
#include "common/sha1.h"

#define IPSEC_CHUNK_BYTES 16u
#define IPSEC_WORDS_PER_CHUNK 4u
#define IPSEC_SHA1_LENGTH_AT 56u
#define IPSEC_SHA1_LENGTH_WORD 15u
#define IPSEC_SHA1_PAD 0x80u
#define IPSEC_ICV_WORDS 3u
#define IPSEC_ICV_BYTES 12u
#define IPSEC_BITS_PER_BYTE 8u
#define IPSEC_REGION_WORDS 2u

// The bits of word j that hold the first n bytes of a chunk (big-endian words).
INLINE uint32_t ipsec_keep_mask(uint32_t n, uint32_t j) {
  const uint32_t first = IPSEC_WORDS_PER_CHUNK * j;
  if (n >= first + IPSEC_WORDS_PER_CHUNK) return 0xFFFFFFFFu;
  if (n <= first) return 0u;
  return 0xFFFFFFFFu << (IPSEC_BITS_PER_BYTE * (first + IPSEC_WORDS_PER_CHUNK - n));
}

// Byte k (0..3) of a big-endian word.
INLINE uint32_t ipsec_byte_at(uint32_t w, uint32_t k) {
  return (w >> (24u - IPSEC_BITS_PER_BYTE * (k % 4u))) & 0xFFu;
}

// The first n (1..16) bytes at p as big-endian words, zeros after them.
INLINE u32x4 ipsec_load_chunk(GLOBAL const uint8_t* p, uint32_t n) {
  if (n >= IPSEC_CHUNK_BYTES) {
    const u32x4 v = load_u32x4_aligned(p);
    return make_u32x4(bswap32(v.x), bswap32(v.y), bswap32(v.z), bswap32(v.w));
  }
  u32x4 v = make_u32x4(0u, 0u, 0u, 0u);
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t b = (uint32_t)p[k] << (24u - IPSEC_BITS_PER_BYTE * (k % 4u));
    if (k < 4u)
      v.x |= b;
    else if (k < 8u)
      v.y |= b;
    else if (k < 12u)
      v.z |= b;
    else
      v.w |= b;
  }
  return v;
}

INLINE void ipsec_store_chunk(GLOBAL uint8_t* p, uint32_t n, u32x4 v) {
  if (n >= IPSEC_CHUNK_BYTES) {
    store_u32x4_aligned(p, make_u32x4(bswap32(v.x), bswap32(v.y), bswap32(v.z), bswap32(v.w)));
    return;
  }
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t w = k < 4u ? v.x : k < 8u ? v.y : k < 12u ? v.z : v.w;
    p[k] = (uint8_t)ipsec_byte_at(w, k);
  }
}

// The 16-byte chunk of region r at pos as big-endian words, zeros past len; with aes, chunks
// from 16 on are encrypted in place first (counter block nonce | IV | pos / 16).
INLINE u32x4 ipsec_chunk(LOCAL const uint32_t* te, GLOBAL uint8_t* r, uint32_t len, uint32_t pos,
                         GLOBAL const IpsecSaRecord* sa, uint32_t nonce, uint32_t iv0, uint32_t iv1,
                         bool aes, bool sha) {
  const uint32_t n =
      pos < len ? (len - pos < IPSEC_CHUNK_BYTES ? len - pos : IPSEC_CHUNK_BYTES) : 0u;
  u32x4 v = make_u32x4(0u, 0u, 0u, 0u);
  if (n > 0u && (sha || pos >= IPSEC_CHUNK_BYTES)) v = ipsec_load_chunk(r + pos, n);
  if (aes && n > 0u && pos >= IPSEC_CHUNK_BYTES) {
    const u32x4 ks =
        aes128_encrypt(te, sa->round_keys, make_u32x4(nonce, iv0, iv1, pos / IPSEC_CHUNK_BYTES));
    v = make_u32x4((v.x ^ ks.x) & ipsec_keep_mask(n, 0), (v.y ^ ks.y) & ipsec_keep_mask(n, 1),
                   (v.z ^ ks.z) & ipsec_keep_mask(n, 2), (v.w ^ ks.w) & ipsec_keep_mask(n, 3));
    ipsec_store_chunk(r + pos, n, v);
  }
  return v;
}

// HMAC's outer hash: the opad state, then the 20-byte inner digest h in one padded block; the
// first 96 bits into icv.
INLINE void ipsec_hmac_outer(uint32_t* h, GLOBAL const IpsecSaRecord* sa, uint32_t* icv) {
  uint32_t w[SHA1_BLOCK_WORDS];
  UNROLL
  for (uint32_t j = 0; j < SHA1_BLOCK_WORDS; ++j) w[j] = j < SHA1_STATE_WORDS ? h[j] : 0u;
  w[SHA1_STATE_WORDS] = IPSEC_SHA1_PAD << 24;
  w[IPSEC_SHA1_LENGTH_WORD] = (SHA1_BLOCK_BYTES + SHA1_DIGEST_BYTES) * IPSEC_BITS_PER_BYTE;
  UNROLL
  for (uint32_t k = 0; k < SHA1_STATE_WORDS; ++k) h[k] = LOAD_RO(&sa->opad_state[k]);
  sha1_block(h, w);
  UNROLL
  for (uint32_t k = 0; k < IPSEC_ICV_WORDS; ++k) icv[k] = h[k];
}

// Encrypts region[16, len) in place (aes) and/or writes HMAC-SHA1-96 of region[0, len) after
// encryption into icv (sha), one 64-byte SHA-1 block (four AES blocks) at a time.
INLINE void ipsec_esp(LOCAL const uint32_t* te, GLOBAL uint8_t* r, uint32_t len,
                      GLOBAL const IpsecSaRecord* sa, bool aes, bool sha, uint32_t* icv) {
  uint32_t h[SHA1_STATE_WORDS];
  UNROLL
  for (uint32_t k = 0; k < SHA1_STATE_WORDS; ++k) h[k] = LOAD_RO(&sa->ipad_state[k]);
  const uint32_t nonce = LOAD_RO(&sa->nonce);
  uint32_t iv0 = 0, iv1 = 0;
  if (aes && len > IPSEC_CHUNK_BYTES) {
    const u32x4 head = ipsec_load_chunk(r, IPSEC_CHUNK_BYTES);
    iv0 = head.z;
    iv1 = head.w;
  }
  for (uint32_t base = 0; base <= len; base += SHA1_BLOCK_BYTES) {
    const u32x4 c0 = ipsec_chunk(te, r, len, base, sa, nonce, iv0, iv1, aes, sha);
    const u32x4 c1 =
        ipsec_chunk(te, r, len, base + IPSEC_CHUNK_BYTES, sa, nonce, iv0, iv1, aes, sha);
    const u32x4 c2 =
        ipsec_chunk(te, r, len, base + 2u * IPSEC_CHUNK_BYTES, sa, nonce, iv0, iv1, aes, sha);
    const u32x4 c3 =
        ipsec_chunk(te, r, len, base + 3u * IPSEC_CHUNK_BYTES, sa, nonce, iv0, iv1, aes, sha);
    uint32_t w[SHA1_BLOCK_WORDS] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w,
                                    c2.x, c2.y, c2.z, c2.w, c3.x, c3.y, c3.z, c3.w};
    if (!sha) continue;
    if (base + SHA1_BLOCK_BYTES <= len) {
      sha1_block(h, w);
      continue;
    }
    // The last block: 0x80 after the data, then the length in bits of key block + region.
    const uint32_t rem = len - base;
    UNROLL
    for (uint32_t j = 0; j < SHA1_BLOCK_WORDS; ++j)
      if (j == rem / 4u) w[j] |= IPSEC_SHA1_PAD << (24u - IPSEC_BITS_PER_BYTE * (rem % 4u));
    if (rem >= IPSEC_SHA1_LENGTH_AT) {
      sha1_block(h, w);
      UNROLL
      for (uint32_t j = 0; j < SHA1_BLOCK_WORDS; ++j) w[j] = 0u;
    }
    w[IPSEC_SHA1_LENGTH_WORD] = (SHA1_BLOCK_BYTES + len) * IPSEC_BITS_PER_BYTE;
    sha1_block(h, w);
  }
  if (sha) ipsec_hmac_outer(h, sa, icv);
}

// One packet: its SA (skipped, with a zero ICV, when its index is not below the table's SA
// count), the crypto, and with sha its ICV into icv_out.
INLINE void ipsec_run(LOCAL const uint32_t* te, GLOBAL uint8_t* bytes,
                      GLOBAL const uint32_t* regions, GLOBAL const uint32_t* items,
                      GLOBAL const uint32_t* sa_table, GLOBAL uint8_t* icv_out, uint32_t count,
                      bool aes, bool sha) {
  const uint32_t i = GLOBAL_ID();
  if (i >= count) return;
  uint32_t icv[IPSEC_ICV_WORDS] = {0u, 0u, 0u};
  const uint32_t index = LOAD_RO(&items[i]);
  if (index < LOAD_RO(&sa_table[IPSEC_SA_COUNT_WORD])) {
    GLOBAL const IpsecSaRecord* sa = (GLOBAL const IpsecSaRecord*)sa_table + (size_t)index + 1u;
    ipsec_esp(te, bytes + LOAD_RO(&regions[IPSEC_REGION_WORDS * i]),
              LOAD_RO(&regions[IPSEC_REGION_WORDS * i + 1u]), sa, aes, sha, icv);
  }
  if (!sha) return;
  GLOBAL uint8_t* o = icv_out + (size_t)i * IPSEC_ICV_BYTES;
  UNROLL
  for (uint32_t k = 0; k < IPSEC_ICV_BYTES; ++k) o[k] = (uint8_t)ipsec_byte_at(icv[k / 4u], k);
}

KERNEL void ipsec_aes_ctr(GLOBAL uint8_t* bytes, GLOBAL const uint32_t* RESTRICT regions,
                          GLOBAL const uint32_t* RESTRICT items,
                          GLOBAL const uint32_t* RESTRICT sa_table, uint32_t count) {
  LOCAL_MEM uint32_t te[AES_TABLE_ENTRIES];
  aes_stage_table(te);
  ipsec_run(te, bytes, regions, items, sa_table, 0, count, true, false);
}

KERNEL void ipsec_hmac_sha1(GLOBAL uint8_t* bytes, GLOBAL const uint32_t* RESTRICT regions,
                            GLOBAL const uint32_t* RESTRICT items,
                            GLOBAL const uint32_t* RESTRICT sa_table, GLOBAL uint8_t* icv_out,
                            uint32_t count) {
  ipsec_run(0, bytes, regions, items, sa_table, icv_out, count, false, true);
}

KERNEL void ipsec_aes_hmac_fused(GLOBAL uint8_t* bytes, GLOBAL const uint32_t* RESTRICT regions,
                                 GLOBAL const uint32_t* RESTRICT items,
                                 GLOBAL const uint32_t* RESTRICT sa_table, GLOBAL uint8_t* icv_out,
                                 uint32_t count) {
  LOCAL_MEM uint32_t te[AES_TABLE_ENTRIES];
  aes_stage_table(te);
  ipsec_run(te, bytes, regions, items, sa_table, icv_out, count, true, true);
}
