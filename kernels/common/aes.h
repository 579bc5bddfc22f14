// AES-128 and AES-256 block encryption (FIPS-197) in the T-table formulation, for the IPsec
// kernels: one 1 KiB table (Te0; Te1..Te3 are its rotations, and the S-box is its middle byte),
// which each work group first copies into local memory (aes_stage_table), so the rounds read it
// from there. State and round keys are big-endian words, as FIPS-197 defines them; the key
// schedule is expanded on the host (src/offload/ipsec_tables.cc).
#ifndef FULCRUM_KERNELS_COMMON_AES_H
#define FULCRUM_KERNELS_COMMON_AES_H

#include "portable.h"

#define AES_TABLE_ENTRIES 256u
#define AES128_ROUNDS 10u
#define AES256_ROUNDS 14u
#define AES_BLOCK_WORDS 4u
#define AES_BITS_PER_BYTE 8u

CONSTANT_MEM uint32_t aes_te0[AES_TABLE_ENTRIES] = {
    0xc66363a5u, 0xf87c7c84u, 0xee777799u, 0xf67b7b8du, 0xfff2f20du, 0xd66b6bbdu, 0xde6f6fb1u,
    0x91c5c554u, 0x60303050u, 0x02010103u, 0xce6767a9u, 0x562b2b7du, 0xe7fefe19u, 0xb5d7d762u,
    0x4dababe6u, 0xec76769au, 0x8fcaca45u, 0x1f82829du, 0x89c9c940u, 0xfa7d7d87u, 0xeffafa15u,
    0xb25959ebu, 0x8e4747c9u, 0xfbf0f00bu, 0x41adadecu, 0xb3d4d467u, 0x5fa2a2fdu, 0x45afafeau,
    0x239c9cbfu, 0x53a4a4f7u, 0xe4727296u, 0x9bc0c05bu, 0x75b7b7c2u, 0xe1fdfd1cu, 0x3d9393aeu,
    0x4c26266au, 0x6c36365au, 0x7e3f3f41u, 0xf5f7f702u, 0x83cccc4fu, 0x6834345cu, 0x51a5a5f4u,
    0xd1e5e534u, 0xf9f1f108u, 0xe2717193u, 0xabd8d873u, 0x62313153u, 0x2a15153fu, 0x0804040cu,
    0x95c7c752u, 0x46232365u, 0x9dc3c35eu, 0x30181828u, 0x379696a1u, 0x0a05050fu, 0x2f9a9ab5u,
    0x0e070709u, 0x24121236u, 0x1b80809bu, 0xdfe2e23du, 0xcdebeb26u, 0x4e272769u, 0x7fb2b2cdu,
    0xea75759fu, 0x1209091bu, 0x1d83839eu, 0x582c2c74u, 0x341a1a2eu, 0x361b1b2du, 0xdc6e6eb2u,
    0xb45a5aeeu, 0x5ba0a0fbu, 0xa45252f6u, 0x763b3b4du, 0xb7d6d661u, 0x7db3b3ceu, 0x5229297bu,
    0xdde3e33eu, 0x5e2f2f71u, 0x13848497u, 0xa65353f5u, 0xb9d1d168u, 0x00000000u, 0xc1eded2cu,
    0x40202060u, 0xe3fcfc1fu, 0x79b1b1c8u, 0xb65b5bedu, 0xd46a6abeu, 0x8dcbcb46u, 0x67bebed9u,
    0x7239394bu, 0x944a4adeu, 0x984c4cd4u, 0xb05858e8u, 0x85cfcf4au, 0xbbd0d06bu, 0xc5efef2au,
    0x4faaaae5u, 0xedfbfb16u, 0x864343c5u, 0x9a4d4dd7u, 0x66333355u, 0x11858594u, 0x8a4545cfu,
    0xe9f9f910u, 0x04020206u, 0xfe7f7f81u, 0xa05050f0u, 0x783c3c44u, 0x259f9fbau, 0x4ba8a8e3u,
    0xa25151f3u, 0x5da3a3feu, 0x804040c0u, 0x058f8f8au, 0x3f9292adu, 0x219d9dbcu, 0x70383848u,
    0xf1f5f504u, 0x63bcbcdfu, 0x77b6b6c1u, 0xafdada75u, 0x42212163u, 0x20101030u, 0xe5ffff1au,
    0xfdf3f30eu, 0xbfd2d26du, 0x81cdcd4cu, 0x180c0c14u, 0x26131335u, 0xc3ecec2fu, 0xbe5f5fe1u,
    0x359797a2u, 0x884444ccu, 0x2e171739u, 0x93c4c457u, 0x55a7a7f2u, 0xfc7e7e82u, 0x7a3d3d47u,
    0xc86464acu, 0xba5d5de7u, 0x3219192bu, 0xe6737395u, 0xc06060a0u, 0x19818198u, 0x9e4f4fd1u,
    0xa3dcdc7fu, 0x44222266u, 0x542a2a7eu, 0x3b9090abu, 0x0b888883u, 0x8c4646cau, 0xc7eeee29u,
    0x6bb8b8d3u, 0x2814143cu, 0xa7dede79u, 0xbc5e5ee2u, 0x160b0b1du, 0xaddbdb76u, 0xdbe0e03bu,
    0x64323256u, 0x743a3a4eu, 0x140a0a1eu, 0x924949dbu, 0x0c06060au, 0x4824246cu, 0xb85c5ce4u,
    0x9fc2c25du, 0xbdd3d36eu, 0x43acacefu, 0xc46262a6u, 0x399191a8u, 0x319595a4u, 0xd3e4e437u,
    0xf279798bu, 0xd5e7e732u, 0x8bc8c843u, 0x6e373759u, 0xda6d6db7u, 0x018d8d8cu, 0xb1d5d564u,
    0x9c4e4ed2u, 0x49a9a9e0u, 0xd86c6cb4u, 0xac5656fau, 0xf3f4f407u, 0xcfeaea25u, 0xca6565afu,
    0xf47a7a8eu, 0x47aeaee9u, 0x10080818u, 0x6fbabad5u, 0xf0787888u, 0x4a25256fu, 0x5c2e2e72u,
    0x381c1c24u, 0x57a6a6f1u, 0x73b4b4c7u, 0x97c6c651u, 0xcbe8e823u, 0xa1dddd7cu, 0xe874749cu,
    0x3e1f1f21u, 0x964b4bddu, 0x61bdbddcu, 0x0d8b8b86u, 0x0f8a8a85u, 0xe0707090u, 0x7c3e3e42u,
    0x71b5b5c4u, 0xcc6666aau, 0x904848d8u, 0x06030305u, 0xf7f6f601u, 0x1c0e0e12u, 0xc26161a3u,
    0x6a35355fu, 0xae5757f9u, 0x69b9b9d0u, 0x17868691u, 0x99c1c158u, 0x3a1d1d27u, 0x279e9eb9u,
    0xd9e1e138u, 0xebf8f813u, 0x2b9898b3u, 0x22111133u, 0xd26969bbu, 0xa9d9d970u, 0x078e8e89u,
    0x339494a7u, 0x2d9b9bb6u, 0x3c1e1e22u, 0x15878792u, 0xc9e9e920u, 0x87cece49u, 0xaa5555ffu,
    0x50282878u, 0xa5dfdf7au, 0x038c8c8fu, 0x59a1a1f8u, 0x09898980u, 0x1a0d0d17u, 0x65bfbfdau,
    0xd7e6e631u, 0x844242c6u, 0xd06868b8u, 0x824141c3u, 0x299999b0u, 0x5a2d2d77u, 0x1e0f0f11u,
    0x7bb0b0cbu, 0xa85454fcu, 0x6dbbbbd6u, 0x2c16163au,
};

// Copies Te0 into t (AES_TABLE_ENTRIES words of local memory); every work item of the group
// must call it, before any aes_encrypt.
INLINE void aes_stage_table(LOCAL uint32_t* t) {
  for (uint32_t k = LOCAL_ID(); k < AES_TABLE_ENTRIES; k += GROUP_SIZE()) t[k] = aes_te0[k];
  LOCAL_BARRIER();
}

// Te0 rotated right by 8 * k bits: Te1, Te2, Te3 of the usual formulation.
INLINE uint32_t aes_te(LOCAL const uint32_t* t, uint32_t x, uint32_t k) {
  return rotl32(t[x & 0xFFu], 32u - AES_BITS_PER_BYTE * k);
}

// The S-box is the middle byte of Te0 ({2S, S, S, 3S}).
INLINE uint32_t aes_sbox(LOCAL const uint32_t* t, uint32_t x) {
  return (t[x & 0xFFu] >> AES_BITS_PER_BYTE) & 0xFFu;
}

INLINE u32x4 aes_round(LOCAL const uint32_t* t, u32x4 s, GLOBAL const uint32_t* k) {
  return make_u32x4(aes_te(t, s.x >> 24, 0) ^ aes_te(t, s.y >> 16, 1) ^ aes_te(t, s.z >> 8, 2) ^
                        aes_te(t, s.w, 3) ^ LOAD_RO(&k[0]),
                    aes_te(t, s.y >> 24, 0) ^ aes_te(t, s.z >> 16, 1) ^ aes_te(t, s.w >> 8, 2) ^
                        aes_te(t, s.x, 3) ^ LOAD_RO(&k[1]),
                    aes_te(t, s.z >> 24, 0) ^ aes_te(t, s.w >> 16, 1) ^ aes_te(t, s.x >> 8, 2) ^
                        aes_te(t, s.y, 3) ^ LOAD_RO(&k[2]),
                    aes_te(t, s.w >> 24, 0) ^ aes_te(t, s.x >> 16, 1) ^ aes_te(t, s.y >> 8, 2) ^
                        aes_te(t, s.z, 3) ^ LOAD_RO(&k[3]));
}

// The last round (no MixColumns): S-box bytes of a, b, c, d, then the round key word k.
INLINE uint32_t aes_last_word(LOCAL const uint32_t* t, uint32_t a, uint32_t b, uint32_t c,
                              uint32_t d, GLOBAL const uint32_t* k) {
  return (aes_sbox(t, a >> 24) << 24 | aes_sbox(t, b >> 16) << 16 | aes_sbox(t, c >> 8) << 8 |
          aes_sbox(t, d)) ^
         LOAD_RO(k);
}

// One AES block encryption of s with the round keys rk[0 .. 4 * (rounds + 1)); rounds is
// AES128_ROUNDS or AES256_ROUNDS (the four extra rounds of a 256-bit key are the only branch).
INLINE u32x4 aes_encrypt(LOCAL const uint32_t* t, GLOBAL const uint32_t* rk, uint32_t rounds,
                         u32x4 s) {
  s = make_u32x4(s.x ^ LOAD_RO(&rk[0]), s.y ^ LOAD_RO(&rk[1]), s.z ^ LOAD_RO(&rk[2]),
                 s.w ^ LOAD_RO(&rk[3]));
  UNROLL
  for (uint32_t r = 1; r < AES128_ROUNDS; ++r) s = aes_round(t, s, rk + AES_BLOCK_WORDS * r);
  if (rounds == AES256_ROUNDS) {
    UNROLL
    for (uint32_t r = AES128_ROUNDS; r < AES256_ROUNDS; ++r)
      s = aes_round(t, s, rk + AES_BLOCK_WORDS * r);
  }
  GLOBAL const uint32_t* k = rk + AES_BLOCK_WORDS * rounds;
  return make_u32x4(
      aes_last_word(t, s.x, s.y, s.z, s.w, k), aes_last_word(t, s.y, s.z, s.w, s.x, k + 1),
      aes_last_word(t, s.z, s.w, s.x, s.y, k + 2), aes_last_word(t, s.w, s.x, s.y, s.z, k + 3));
}

// Decryption (FIPS-197 §5.3.5, the equivalent inverse cipher) in the same T-table formulation:
// Td0 (Td1..Td3 its rotations) and the inverse S-box, both derived in local memory from the
// S-box in Te0 (aes_stage_decrypt_tables), and the decryption round keys dw: the encryption key
// schedule w with InvMixColumns applied to the words of rounds 1 .. rounds - 1, in w's order
// (dw[0..3] = w[0..3], dw[4 * rounds ..] = w[4 * rounds ..]). New functions; the encryption ones
// above are unchanged.

// x * b in GF(2^8) for a constant b < 16 (the InvMixColumns coefficients 9, 11, 13, 14).
INLINE uint32_t aes_gf_mul(uint32_t x, uint32_t b) {
  uint32_t r = 0;
  for (uint32_t bit = 0; bit < 4u; ++bit) {
    if (b & (1u << bit)) r ^= x;
    x = ((x << 1) ^ (((x >> 7) & 1u) * 0x1Bu)) & 0xFFu;
  }
  return r;
}

// Fills td (AES_TABLE_ENTRIES words: Td0 = {14 S', 9 S', 13 S', 11 S'} with S' the inverse
// S-box) and isbox (AES_TABLE_ENTRIES bytes) in local memory; every work item of the group must
// call it, before any aes_decrypt.
INLINE void aes_stage_decrypt_tables(LOCAL uint32_t* td, LOCAL uint8_t* isbox) {
  for (uint32_t k = LOCAL_ID(); k < AES_TABLE_ENTRIES; k += GROUP_SIZE())
    isbox[(aes_te0[k] >> AES_BITS_PER_BYTE) & 0xFFu] = (uint8_t)k;
  LOCAL_BARRIER();
  for (uint32_t k = LOCAL_ID(); k < AES_TABLE_ENTRIES; k += GROUP_SIZE()) {
    const uint32_t s = isbox[k];
    td[k] = aes_gf_mul(s, 14u) << 24 | aes_gf_mul(s, 9u) << 16 | aes_gf_mul(s, 13u) << 8 |
            aes_gf_mul(s, 11u);
  }
  LOCAL_BARRIER();
}

INLINE u32x4 aes_inv_round(LOCAL const uint32_t* td, u32x4 s, GLOBAL const uint32_t* k) {
  return make_u32x4(aes_te(td, s.x >> 24, 0) ^ aes_te(td, s.w >> 16, 1) ^ aes_te(td, s.z >> 8, 2) ^
                        aes_te(td, s.y, 3) ^ LOAD_RO(&k[0]),
                    aes_te(td, s.y >> 24, 0) ^ aes_te(td, s.x >> 16, 1) ^ aes_te(td, s.w >> 8, 2) ^
                        aes_te(td, s.z, 3) ^ LOAD_RO(&k[1]),
                    aes_te(td, s.z >> 24, 0) ^ aes_te(td, s.y >> 16, 1) ^ aes_te(td, s.x >> 8, 2) ^
                        aes_te(td, s.w, 3) ^ LOAD_RO(&k[2]),
                    aes_te(td, s.w >> 24, 0) ^ aes_te(td, s.z >> 16, 1) ^ aes_te(td, s.y >> 8, 2) ^
                        aes_te(td, s.x, 3) ^ LOAD_RO(&k[3]));
}

// The last inverse round (no InvMixColumns): inverse S-box bytes of a, b, c, d, then k.
INLINE uint32_t aes_inv_last_word(LOCAL const uint8_t* isbox, uint32_t a, uint32_t b, uint32_t c,
                                  uint32_t d, GLOBAL const uint32_t* k) {
  return ((uint32_t)isbox[a >> 24] << 24 | (uint32_t)isbox[(b >> 16) & 0xFFu] << 16 |
          (uint32_t)isbox[(c >> 8) & 0xFFu] << 8 | (uint32_t)isbox[d & 0xFFu]) ^
         LOAD_RO(k);
}

// One AES block decryption of s with the decryption round keys dw[0 .. 4 * (rounds + 1)).
INLINE u32x4 aes_decrypt(LOCAL const uint32_t* td, LOCAL const uint8_t* isbox,
                         GLOBAL const uint32_t* dw, uint32_t rounds, u32x4 s) {
  GLOBAL const uint32_t* k = dw + AES_BLOCK_WORDS * rounds;
  s = make_u32x4(s.x ^ LOAD_RO(&k[0]), s.y ^ LOAD_RO(&k[1]), s.z ^ LOAD_RO(&k[2]),
                 s.w ^ LOAD_RO(&k[3]));
  for (uint32_t r = rounds - 1u; r >= 1u; --r) s = aes_inv_round(td, s, dw + AES_BLOCK_WORDS * r);
  return make_u32x4(aes_inv_last_word(isbox, s.x, s.w, s.z, s.y, dw),
                    aes_inv_last_word(isbox, s.y, s.x, s.w, s.z, dw + 1),
                    aes_inv_last_word(isbox, s.z, s.y, s.x, s.w, dw + 2),
                    aes_inv_last_word(isbox, s.w, s.z, s.y, s.x, dw + 3));
}

#endif  // FULCRUM_KERNELS_COMMON_AES_H
