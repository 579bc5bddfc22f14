// IPsec ESP outbound crypto (src/offload/ipsec_tables.hh has the task layout; common/sa_record.h
// the SA table records). A region is the ESP part of a frame from the SPI through the ICV's room
// (12 bytes for HMAC-SHA1-96, 16 for GCM): SPI, sequence number, IV (region[8, 16)), then the
// ciphertext up to the ICV's room. Per SA:
//
//   AES-CTR (RFC 3686), 128- or 256-bit keys: the ciphertext encrypted in place, counter block
//     nonce | IV | counter from 1;
//   HMAC-SHA1-96 (RFC 2404) over region[0, ICV) after encryption, with ESN (RFC 4303 §2.2.1)
//     followed by the sequence number's high half, which IPsecESPEncap left in the ICV's room;
//     the 12 bytes go to icv_out (the element stores them in the frame);
//   AES-GCM (RFC 4106, SP 800-38D), 128- or 256-bit keys: counter block salt | IV | counter
//     from 2, GHASH (common/ghash.h) over the AAD (SPI | sequence number, or SPI | high half |
//     low half with ESN) and the ciphertext, and the 16-byte tag E(K, salt | IV | 1) ^ GHASH
//     written into the ICV's room in place;
//   AES-CBC: left alone (the elements keep CBC SAs on the CPU: each block chains on the last).
//
// ipsec_aes runs the ciphers (CTR, or GCM with its tag); ipsec_hmac_sha1 the HMAC (GCM SAs pass
// untouched, with a zero ICV); ipsec_aes_hmac_fused both in one pass over each packet. One work
// item per packet. Words are handled big-endian, as AES (FIPS-197), SHA-1 (FIPS 180-4) and GHASH
// define them; AES is common/aes.h (T-tables staged in local memory), SHA-1 common/sha1.h.
// Regions start at multiples of 16 in `bytes`, so every 16-byte chunk of a region is aligned
// (the ICV's room need not be: the tag is stored byte by byte).
#include "common/aes.h"
#include "common/ghash.h"
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
#define IPSEC_GCM_ICV_BYTES 16u
#define IPSEC_SEQ_HI_BYTES 4u  // the ESN high half after the trailer
#define IPSEC_BITS_PER_BYTE 8u
#define IPSEC_REGION_WORDS 2u
#define IPSEC_CTR_FIRST_COUNTER 1u  // RFC 3686 §4
#define IPSEC_GCM_J0_COUNTER 1u     // SP 800-38D §7.1: J0 = salt | IV | 1 masks the tag
#define IPSEC_GCM_FIRST_COUNTER 2u  // and the text runs from inc32(J0)
#define IPSEC_GCM_AAD_BYTES 8u      // SPI | sequence number (RFC 4106 §5)
#define IPSEC_GCM_ESN_AAD_BYTES 12u

STATIC_ASSERT(IPSEC_AES128_ROUNDS == AES128_ROUNDS && IPSEC_AES256_ROUNDS == AES256_ROUNDS,
              "the SA record's rounds are common/aes.h's");

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

INLINE void ipsec_store_bytes(GLOBAL uint8_t* p, uint32_t n, u32x4 v) {
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t w = k < 4u ? v.x : k < 8u ? v.y : k < 12u ? v.z : v.w;
    p[k] = (uint8_t)ipsec_byte_at(w, k);
  }
}

// n (1..16) bytes of v at p; 16 of them with one aligned store.
INLINE void ipsec_store_chunk(GLOBAL uint8_t* p, uint32_t n, u32x4 v) {
  if (n >= IPSEC_CHUNK_BYTES) {
    store_u32x4_aligned(p, make_u32x4(bswap32(v.x), bswap32(v.y), bswap32(v.z), bswap32(v.w)));
    return;
  }
  ipsec_store_bytes(p, n, v);
}

// The big-endian word at p, any alignment.
INLINE uint32_t ipsec_load_be32(GLOBAL const uint8_t* p) {
  return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | (uint32_t)p[3];
}

// How many of the 16 bytes from pos lie below end.
INLINE uint32_t ipsec_span(uint32_t pos, uint32_t end) {
  return pos < end ? (end - pos < IPSEC_CHUNK_BYTES ? end - pos : IPSEC_CHUNK_BYTES) : 0u;
}

// What a packet's crypto needs of its SA and region: the AES rounds, the counter block's first
// three words (nonce or salt, then the IV), where the ciphertext ends (the ICV's room starts)
// and where the authenticated bytes end (4 bytes later with ESN: the high half).
typedef struct IpsecPacket {
  uint32_t rounds;
  uint32_t nonce, iv0, iv1;
  uint32_t cipher_end, hash_end;
  bool esn;
} IpsecPacket;

// The packet of region r (len bytes) under sa of cipher `mode`; false when the region cannot
// hold the ICV (nothing is done to it then).
INLINE bool ipsec_packet(GLOBAL const uint8_t* r, uint32_t len, GLOBAL const IpsecSaRecord* sa,
                         uint32_t mode, IpsecPacket* k) {
  const uint32_t icv = mode == IPSEC_MODE_GCM ? IPSEC_GCM_ICV_BYTES : IPSEC_ICV_BYTES;
  if (len < icv) return false;
  k->rounds = LOAD_RO(&sa->rounds) == AES256_ROUNDS ? AES256_ROUNDS : AES128_ROUNDS;
  k->nonce = LOAD_RO(&sa->nonce);
  k->esn = LOAD_RO(&sa->esn) != 0u;
  k->cipher_end = len - icv;
  k->hash_end = k->cipher_end + (k->esn ? IPSEC_SEQ_HI_BYTES : 0u);
  const u32x4 head = ipsec_load_chunk(r, len < IPSEC_CHUNK_BYTES ? len : IPSEC_CHUNK_BYTES);
  k->iv0 = head.z;
  k->iv1 = head.w;
  return true;
}

// The 16-byte chunk of region r at pos as big-endian words, zeros past the last of its bytes
// that is hashed (sha: below hash_end) or encrypted (aes: from 16 on, below cipher_end); with
// aes those are encrypted in place first, counter block nonce | IV | pos / 16 + first - 1.
INLINE u32x4 ipsec_chunk(LOCAL const uint32_t* te, GLOBAL uint8_t* r, uint32_t pos,
                         GLOBAL const IpsecSaRecord* sa, const IpsecPacket* k, uint32_t first,
                         bool aes, bool sha) {
  const uint32_t nc = aes && pos >= IPSEC_CHUNK_BYTES ? ipsec_span(pos, k->cipher_end) : 0u;
  const uint32_t nh = sha ? ipsec_span(pos, k->hash_end) : 0u;
  const uint32_t n = nc > nh ? nc : nh;
  u32x4 v = make_u32x4(0u, 0u, 0u, 0u);
  if (n > 0u) v = ipsec_load_chunk(r + pos, n);
  if (nc > 0u) {
    const u32x4 ks =
        aes_encrypt(te, sa->round_keys, k->rounds,
                    make_u32x4(k->nonce, k->iv0, k->iv1, pos / IPSEC_CHUNK_BYTES + first - 1u));
    v = make_u32x4(v.x ^ (ks.x & ipsec_keep_mask(nc, 0)), v.y ^ (ks.y & ipsec_keep_mask(nc, 1)),
                   v.z ^ (ks.z & ipsec_keep_mask(nc, 2)), v.w ^ (ks.w & ipsec_keep_mask(nc, 3)));
    ipsec_store_chunk(r + pos, nc, v);
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

// AES-CTR of region[16, cipher_end) in place (aes) and/or HMAC-SHA1-96 of region[0, hash_end)
// after encryption into icv (sha), one 64-byte SHA-1 block (four AES blocks) at a time.
INLINE void ipsec_ctr_hmac(LOCAL const uint32_t* te, GLOBAL uint8_t* r,
                           GLOBAL const IpsecSaRecord* sa, const IpsecPacket* k, bool aes, bool sha,
                           uint32_t* icv) {
  uint32_t h[SHA1_STATE_WORDS];
  UNROLL
  for (uint32_t j = 0; j < SHA1_STATE_WORDS; ++j) h[j] = LOAD_RO(&sa->ipad_state[j]);
  const uint32_t len = k->hash_end;
  const uint32_t first = IPSEC_CTR_FIRST_COUNTER;
  for (uint32_t base = 0; base <= len; base += SHA1_BLOCK_BYTES) {
    const u32x4 c0 = ipsec_chunk(te, r, base, sa, k, first, aes, sha);
    const u32x4 c1 = ipsec_chunk(te, r, base + IPSEC_CHUNK_BYTES, sa, k, first, aes, sha);
    const u32x4 c2 = ipsec_chunk(te, r, base + 2u * IPSEC_CHUNK_BYTES, sa, k, first, aes, sha);
    const u32x4 c3 = ipsec_chunk(te, r, base + 3u * IPSEC_CHUNK_BYTES, sa, k, first, aes, sha);
    uint32_t w[SHA1_BLOCK_WORDS] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w,
                                    c2.x, c2.y, c2.z, c2.w, c3.x, c3.y, c3.z, c3.w};
    if (!sha) continue;
    if (base + SHA1_BLOCK_BYTES <= len) {
      sha1_block(h, w);
      continue;
    }
    // The last block: 0x80 after the data, then the length in bits of key block + message.
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

// AES-GCM: region[16, cipher_end) encrypted in place from counter 2, GHASH over the AAD and the
// ciphertext, the tag into region[cipher_end, cipher_end + 16). A region without room for the
// SPI, sequence number and IV is left alone.
INLINE void ipsec_gcm(LOCAL const uint32_t* te, GLOBAL uint8_t* r, GLOBAL const IpsecSaRecord* sa,
                      const IpsecPacket* k) {
  if (k->cipher_end < IPSEC_CHUNK_BYTES) return;
  GLOBAL const uint32_t* table = sa->ghash_table;
  const u32x4 head = ipsec_load_chunk(r, IPSEC_CHUNK_BYTES);
  // The ESN high half is read before the tag takes its place.
  GhashBlock x = k->esn ? ghash_block(head.x, ipsec_load_be32(r + k->cipher_end), head.y, 0u)
                        : ghash_block(head.x, head.y, 0u, 0u);
  x = ghash_mul(x, table);
  for (uint32_t pos = IPSEC_CHUNK_BYTES; pos < k->cipher_end; pos += IPSEC_CHUNK_BYTES) {
    const u32x4 c = ipsec_chunk(te, r, pos, sa, k, IPSEC_GCM_FIRST_COUNTER, true, false);
    x = ghash_mul(ghash_xor(x, ghash_block(c.x, c.y, c.z, c.w)), table);
  }
  const uint32_t aad = k->esn ? IPSEC_GCM_ESN_AAD_BYTES : IPSEC_GCM_AAD_BYTES;
  const uint32_t text = k->cipher_end - IPSEC_CHUNK_BYTES;
  x = ghash_mul(
      ghash_xor(x, ghash_block(0u, aad * IPSEC_BITS_PER_BYTE, 0u, text * IPSEC_BITS_PER_BYTE)),
      table);
  const u32x4 j0 = aes_encrypt(te, sa->round_keys, k->rounds,
                               make_u32x4(k->nonce, k->iv0, k->iv1, IPSEC_GCM_J0_COUNTER));
  ipsec_store_bytes(r + k->cipher_end, IPSEC_GCM_ICV_BYTES,
                    make_u32x4(j0.x ^ (uint32_t)(x.hi >> 32), j0.y ^ (uint32_t)x.hi,
                               j0.z ^ (uint32_t)(x.lo >> 32), j0.w ^ (uint32_t)x.lo));
}

// One packet: its SA (skipped, with a zero ICV, when its index is not below the table's SA
// count), the cipher (aes: CTR, or GCM with its tag) and the HMAC (sha, not for GCM SAs), and
// with sha its ICV into icv_out.
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
    GLOBAL uint8_t* r = bytes + LOAD_RO(&regions[IPSEC_REGION_WORDS * i]);
    const uint32_t mode = LOAD_RO(&sa->mode);
    IpsecPacket k;
    if (ipsec_packet(r, LOAD_RO(&regions[IPSEC_REGION_WORDS * i + 1u]), sa, mode, &k)) {
      if (mode == IPSEC_MODE_GCM) {
        if (aes) ipsec_gcm(te, r, sa, &k);
      } else {
        ipsec_ctr_hmac(te, r, sa, &k, aes && mode == IPSEC_MODE_CTR, sha, icv);
      }
    }
  }
  if (!sha) return;
  GLOBAL uint8_t* o = icv_out + (size_t)i * IPSEC_ICV_BYTES;
  UNROLL
  for (uint32_t k = 0; k < IPSEC_ICV_BYTES; ++k) o[k] = (uint8_t)ipsec_byte_at(icv[k / 4u], k);
}

KERNEL void ipsec_aes(GLOBAL uint8_t* bytes, GLOBAL const uint32_t* RESTRICT regions,
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
