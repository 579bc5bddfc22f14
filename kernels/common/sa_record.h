// The device IPsec SA table (src/offload/ipsec_tables.hh uploads it; kernels/ipsec.cl reads it):
// records of IPSEC_RECORD_WORDS 32-bit words in the device's byte order. Record 0 is a header
// (word 0: the number of SAs, the rest zero); SA i is record i + 1, an IpsecSaRecord:
//
//   words  0..43  AES-128 encryption round keys w[0..43] (FIPS-197 §5.2; w[i] holds key bytes
//                 4i..4i+3 big-endian, i.e. byte 4i in the top 8 bits)
//   word  44      the 4-byte RFC 3686 nonce, big-endian (its first byte in the top 8 bits)
//   words 45..49  HMAC-SHA1 inner chaining state H0..H4 after compressing key ^ ipad
//   words 50..54  HMAC-SHA1 outer chaining state H0..H4 after compressing key ^ opad
//   word  55      1 for an AES-CTR SA, 0 for an AES-CBC one (the elements keep those on the CPU)
//
// The host checks every field's offset against these word numbers (ipsec_tables.hh).
#ifndef FULCRUM_KERNELS_COMMON_SA_RECORD_H
#define FULCRUM_KERNELS_COMMON_SA_RECORD_H

#include "portable.h"

#define IPSEC_RECORD_WORDS 56u
#define IPSEC_ROUND_KEY_WORDS 44u
#define IPSEC_HMAC_STATE_WORDS 5u  // a SHA-1 chaining state
#define IPSEC_SA_COUNT_WORD 0u     // in record 0

typedef struct IpsecSaRecord {
  uint32_t round_keys[IPSEC_ROUND_KEY_WORDS];
  uint32_t nonce;
  uint32_t ipad_state[IPSEC_HMAC_STATE_WORDS];
  uint32_t opad_state[IPSEC_HMAC_STATE_WORDS];
  uint32_t ctr;
} IpsecSaRecord;

STATIC_ASSERT(sizeof(IpsecSaRecord) == IPSEC_RECORD_WORDS * sizeof(uint32_t),
              "an IPsec SA record is IPSEC_RECORD_WORDS words, no padding");

#endif  // FULCRUM_KERNELS_COMMON_SA_RECORD_H
