// The device IPsec SA table (src/offload/ipsec_tables.hh uploads it; kernels/ipsec.cl reads it):
// records of IPSEC_RECORD_WORDS 32-bit words in the device's byte order. Record 0 is a header
// (word 0: the number of SAs, the rest zero); SA i is record i + 1, an IpsecSaRecord:
//
//   words   0..59   AES encryption round keys w[0 .. 4 * (rounds + 1)) (FIPS-197 §5.2; w[i]
//                   holds key bytes 4i..4i+3 big-endian, i.e. byte 4i in the top 8 bits); an
//                   AES-128 key uses words 0..43, the rest are zero
//   word   60       the 4-byte RFC 3686 nonce or RFC 4106 salt, big-endian (its first byte in
//                   the top 8 bits)
//   words  61..65   HMAC-SHA1 inner chaining state H0..H4 after compressing key ^ ipad
//   words  66..70   HMAC-SHA1 outer chaining state H0..H4 after compressing key ^ opad
//   word   71       the cipher: IPSEC_MODE_CBC (the elements keep those on the CPU),
//                   IPSEC_MODE_CTR or IPSEC_MODE_GCM
//   word   72       AES rounds: 10 (128-bit key) or 14 (256-bit key)
//   word   73       1 with extended sequence numbers (RFC 4303 §2.2.1), else 0
//   words  74..77   GCM hash key H = E(K, 0^128) as four big-endian words (zero for CTR, CBC)
//   words  78..79   zero
//   words  80..143  GHASH table (SP 800-38D §6.4 multiplication by H, 4 bits at a time, as
//                   Shoup's method): entry n (words 80 + 4n .. 83 + 4n) is the product of H and
//                   the 4-bit polynomial whose x^0 coefficient is bit 3 of n (entry 8 is H);
//                   zero for CTR, CBC
//
// The host checks every field's offset against these word numbers (ipsec_tables.hh).
#ifndef FULCRUM_KERNELS_COMMON_SA_RECORD_H
#define FULCRUM_KERNELS_COMMON_SA_RECORD_H

#include "portable.h"

#define IPSEC_RECORD_WORDS 144u
#define IPSEC_ROUND_KEY_WORDS 60u  // AES-256: 4 * (14 + 1)
#define IPSEC_HMAC_STATE_WORDS 5u  // a SHA-1 chaining state
#define IPSEC_GCM_BLOCK_WORDS 4u   // a 128-bit GHASH block
#define IPSEC_GHASH_ENTRIES 16u    // one per 4-bit value
#define IPSEC_GHASH_TABLE_WORDS (IPSEC_GHASH_ENTRIES * IPSEC_GCM_BLOCK_WORDS)
#define IPSEC_RECORD_PAD_WORDS 2u
#define IPSEC_SA_COUNT_WORD 0u  // in record 0
#define IPSEC_MODE_CBC 0u
#define IPSEC_MODE_CTR 1u
#define IPSEC_MODE_GCM 2u
#define IPSEC_AES128_ROUNDS 10u
#define IPSEC_AES256_ROUNDS 14u

typedef struct IpsecSaRecord {
  uint32_t round_keys[IPSEC_ROUND_KEY_WORDS];
  uint32_t nonce;
  uint32_t ipad_state[IPSEC_HMAC_STATE_WORDS];
  uint32_t opad_state[IPSEC_HMAC_STATE_WORDS];
  uint32_t mode;
  uint32_t rounds;
  uint32_t esn;
  uint32_t hash_key[IPSEC_GCM_BLOCK_WORDS];
  uint32_t pad[IPSEC_RECORD_PAD_WORDS];
  uint32_t ghash_table[IPSEC_GHASH_TABLE_WORDS];
} IpsecSaRecord;

STATIC_ASSERT(sizeof(IpsecSaRecord) == IPSEC_RECORD_WORDS * sizeof(uint32_t),
              "an IPsec SA record is IPSEC_RECORD_WORDS words, no padding");

#endif  // FULCRUM_KERNELS_COMMON_SA_RECORD_H
