// IPsec ESP outbound crypto (src/offload/ipsec_tables.hh has the task layout and the SA table
// records): AES-128-CTR (RFC 3686) of region[16, len), HMAC-SHA1-96 (RFC 2404) over the whole
// region after encryption, or both fused in one pass. One work item per packet. Words are
// handled big-endian, as AES (FIPS-197) and SHA-1 (FIPS 180-4) define them; the AES round is
// the T-table formulation (one 1 KiB table in constant memory, rotated for the other three).
// Regions start at multiples of 16 in `bytes`, so every 16-byte chunk of a region is aligned.

#define IPSEC_RECORD_WORDS 56u
#define IPSEC_NONCE_WORD 44u
#define IPSEC_IPAD_WORD 45u
#define IPSEC_OPAD_WORD 50u
#define IPSEC_CHUNK_BYTES 16u
#define IPSEC_WORDS_PER_CHUNK 4u
#define IPSEC_SHA1_BLOCK_BYTES 64u
#define IPSEC_SHA1_BLOCK_WORDS 16u
#define IPSEC_SHA1_ROUNDS 80u
#define IPSEC_SHA1_LENGTH_AT 56u
#define IPSEC_SHA1_LENGTH_WORD 15u
#define IPSEC_SHA1_PAD 0x80u
#define IPSEC_SHA1_DIGEST_BYTES 20u
#define IPSEC_SHA1_STATE_WORDS 5u
#define IPSEC_ICV_WORDS 3u
#define IPSEC_ICV_BYTES 12u
#define IPSEC_AES_ROUNDS 10u
#define IPSEC_BITS_PER_BYTE 8u

__constant uint ipsec_te0[256] = {
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

// Te0 rotated right by 8 * k bits: Te1, Te2, Te3 of the usual formulation.
static uint ipsec_te(uint x, uint k) {
  return rotate(ipsec_te0[x & 0xFFu], 32u - IPSEC_BITS_PER_BYTE * k);
}

// The S-box is the middle byte of Te0 ({2S, S, S, 3S}).
static uint ipsec_sbox(uint x) {
  return (ipsec_te0[x & 0xFFu] >> IPSEC_BITS_PER_BYTE) & 0xFFu;
}

static uint ipsec_bswap(uint x) {
  return as_uint(as_uchar4(x).wzyx);
}

static uint4 ipsec_aes_round(uint4 s, __global const uint* k) {
  return (uint4)(ipsec_te(s.x >> 24, 0) ^ ipsec_te(s.y >> 16, 1) ^ ipsec_te(s.z >> 8, 2) ^
                     ipsec_te(s.w, 3) ^ k[0],
                 ipsec_te(s.y >> 24, 0) ^ ipsec_te(s.z >> 16, 1) ^ ipsec_te(s.w >> 8, 2) ^
                     ipsec_te(s.x, 3) ^ k[1],
                 ipsec_te(s.z >> 24, 0) ^ ipsec_te(s.w >> 16, 1) ^ ipsec_te(s.x >> 8, 2) ^
                     ipsec_te(s.y, 3) ^ k[2],
                 ipsec_te(s.w >> 24, 0) ^ ipsec_te(s.x >> 16, 1) ^ ipsec_te(s.y >> 8, 2) ^
                     ipsec_te(s.z, 3) ^ k[3]);
}

static uint ipsec_last_word(uint a, uint b, uint c, uint d, uint k) {
  return (ipsec_sbox(a >> 24) << 24 | ipsec_sbox(b >> 16) << 16 | ipsec_sbox(c >> 8) << 8 |
          ipsec_sbox(d)) ^
         k;
}

// One AES-128 block encryption with the round keys rk[0..43].
static uint4 ipsec_aes128(__global const uint* rk, uint4 s) {
  s ^= (uint4)(rk[0], rk[1], rk[2], rk[3]);
  for (uint r = 1; r < IPSEC_AES_ROUNDS; ++r)
    s = ipsec_aes_round(s, rk + IPSEC_WORDS_PER_CHUNK * r);
  __global const uint* k = rk + IPSEC_WORDS_PER_CHUNK * IPSEC_AES_ROUNDS;
  return (
      uint4)(ipsec_last_word(s.x, s.y, s.z, s.w, k[0]), ipsec_last_word(s.y, s.z, s.w, s.x, k[1]),
             ipsec_last_word(s.z, s.w, s.x, s.y, k[2]), ipsec_last_word(s.w, s.x, s.y, s.z, k[3]));
}

// The bits of word j that hold the first n bytes of a chunk (big-endian words).
static uint ipsec_keep_mask(uint n, uint j) {
  const uint first = IPSEC_WORDS_PER_CHUNK * j;
  if (n >= first + IPSEC_WORDS_PER_CHUNK) return 0xFFFFFFFFu;
  if (n <= first) return 0u;
  return 0xFFFFFFFFu << (IPSEC_BITS_PER_BYTE * (first + IPSEC_WORDS_PER_CHUNK - n));
}

// The first n (1..16) bytes at p as big-endian words, zeros after them.
static uint4 ipsec_load_chunk(__global const uchar* p, uint n) {
  if (n >= IPSEC_CHUNK_BYTES) {
    const uint4 v = vload4(0, (__global const uint*)p);
    return (uint4)(ipsec_bswap(v.x), ipsec_bswap(v.y), ipsec_bswap(v.z), ipsec_bswap(v.w));
  }
  uint4 v = (uint4)(0u);
  for (uint k = 0; k < n; ++k) {
    const uint b = (uint)p[k] << (24u - IPSEC_BITS_PER_BYTE * (k % 4u));
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

static void ipsec_store_chunk(__global uchar* p, uint n, uint4 v) {
  if (n >= IPSEC_CHUNK_BYTES) {
    vstore4((uint4)(ipsec_bswap(v.x), ipsec_bswap(v.y), ipsec_bswap(v.z), ipsec_bswap(v.w)), 0,
            (__global uint*)p);
    return;
  }
  for (uint k = 0; k < n; ++k) {
    const uint w = k < 4u ? v.x : k < 8u ? v.y : k < 12u ? v.z : v.w;
    p[k] = (uchar)(w >> (24u - IPSEC_BITS_PER_BYTE * (k % 4u)));
  }
}

// One SHA-1 compression of w[0..15] into h[0..4] (w is used as the rolling schedule).
static void ipsec_sha1_block(uint* h, uint* w) {
  uint a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
#pragma unroll
  for (uint t = 0; t < IPSEC_SHA1_ROUNDS; ++t) {
    if (t >= IPSEC_SHA1_BLOCK_WORDS)
      w[t % 16u] =
          rotate(w[(t - 3u) % 16u] ^ w[(t - 8u) % 16u] ^ w[(t - 14u) % 16u] ^ w[t % 16u], 1u);
    uint f, k;
    if (t < 20u) {
      f = (b & c) | (~b & d);
      k = 0x5A827999u;
    } else if (t < 40u) {
      f = b ^ c ^ d;
      k = 0x6ED9EBA1u;
    } else if (t < 60u) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8F1BBCDCu;
    } else {
      f = b ^ c ^ d;
      k = 0xCA62C1D6u;
    }
    const uint tmp = rotate(a, 5u) + f + e + k + w[t % 16u];
    e = d;
    d = c;
    c = rotate(b, 30u);
    b = a;
    a = tmp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

// The 16-byte chunk of region r at pos as big-endian words, zeros past len; with aes, chunks
// from 16 on are encrypted in place first (counter block nonce | IV | pos / 16).
static uint4 ipsec_chunk(__global uchar* r, uint len, uint pos, __global const uint* sa, uint nonce,
                         uint iv0, uint iv1, bool aes, bool sha) {
  const uint n = pos < len ? min(IPSEC_CHUNK_BYTES, len - pos) : 0u;
  uint4 v = (uint4)(0u);
  if (n > 0u && (sha || pos >= IPSEC_CHUNK_BYTES)) v = ipsec_load_chunk(r + pos, n);
  if (aes && n > 0u && pos >= IPSEC_CHUNK_BYTES) {
    v ^= ipsec_aes128(sa, (uint4)(nonce, iv0, iv1, pos / IPSEC_CHUNK_BYTES));
    v &= (uint4)(ipsec_keep_mask(n, 0), ipsec_keep_mask(n, 1), ipsec_keep_mask(n, 2),
                 ipsec_keep_mask(n, 3));
    ipsec_store_chunk(r + pos, n, v);
  }
  return v;
}

// HMAC's outer hash: the opad state, then the 20-byte inner digest h in one padded block; the
// first 96 bits into icv.
static void ipsec_hmac_outer(uint* h, __global const uint* sa, uint* icv) {
  uint w[IPSEC_SHA1_BLOCK_WORDS];
  for (uint j = 0; j < IPSEC_SHA1_BLOCK_WORDS; ++j) w[j] = j < IPSEC_SHA1_STATE_WORDS ? h[j] : 0u;
  w[IPSEC_SHA1_STATE_WORDS] = IPSEC_SHA1_PAD << 24;
  w[IPSEC_SHA1_LENGTH_WORD] =
      (IPSEC_SHA1_BLOCK_BYTES + IPSEC_SHA1_DIGEST_BYTES) * IPSEC_BITS_PER_BYTE;
  for (uint k = 0; k < IPSEC_SHA1_STATE_WORDS; ++k) h[k] = sa[IPSEC_OPAD_WORD + k];
  ipsec_sha1_block(h, w);
  for (uint k = 0; k < IPSEC_ICV_WORDS; ++k) icv[k] = h[k];
}

// Encrypts region[16, len) in place (aes) and/or writes HMAC-SHA1-96 of region[0, len) after
// encryption into icv (sha), one 64-byte SHA-1 block (four AES blocks) at a time.
static void ipsec_esp(__global uchar* r, uint len, __global const uint* sa, bool aes, bool sha,
                      uint* icv) {
  uint h[IPSEC_SHA1_STATE_WORDS];
  for (uint k = 0; k < IPSEC_SHA1_STATE_WORDS; ++k) h[k] = sa[IPSEC_IPAD_WORD + k];
  const uint nonce = sa[IPSEC_NONCE_WORD];
  uint iv0 = 0, iv1 = 0;
  if (aes && len > IPSEC_CHUNK_BYTES) {
    const uint4 head = ipsec_load_chunk(r, IPSEC_CHUNK_BYTES);
    iv0 = head.z;
    iv1 = head.w;
  }
  for (uint base = 0; base <= len; base += IPSEC_SHA1_BLOCK_BYTES) {
    const uint4 c0 = ipsec_chunk(r, len, base, sa, nonce, iv0, iv1, aes, sha);
    const uint4 c1 = ipsec_chunk(r, len, base + IPSEC_CHUNK_BYTES, sa, nonce, iv0, iv1, aes, sha);
    const uint4 c2 =
        ipsec_chunk(r, len, base + 2u * IPSEC_CHUNK_BYTES, sa, nonce, iv0, iv1, aes, sha);
    const uint4 c3 =
        ipsec_chunk(r, len, base + 3u * IPSEC_CHUNK_BYTES, sa, nonce, iv0, iv1, aes, sha);
    uint w[IPSEC_SHA1_BLOCK_WORDS] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w,
                                      c2.x, c2.y, c2.z, c2.w, c3.x, c3.y, c3.z, c3.w};
    if (!sha) continue;
    if (base + IPSEC_SHA1_BLOCK_BYTES <= len) {
      ipsec_sha1_block(h, w);
      continue;
    }
    // The last block: 0x80 after the data, then the length in bits of key block + region.
    const uint rem = len - base;
#pragma unroll
    for (uint j = 0; j < IPSEC_SHA1_BLOCK_WORDS; ++j)
      if (j == rem / 4u) w[j] |= IPSEC_SHA1_PAD << (24u - IPSEC_BITS_PER_BYTE * (rem % 4u));
    if (rem >= IPSEC_SHA1_LENGTH_AT) {
      ipsec_sha1_block(h, w);
#pragma unroll
      for (uint j = 0; j < IPSEC_SHA1_BLOCK_WORDS; ++j) w[j] = 0u;
    }
    w[IPSEC_SHA1_LENGTH_WORD] = (IPSEC_SHA1_BLOCK_BYTES + len) * IPSEC_BITS_PER_BYTE;
    ipsec_sha1_block(h, w);
  }
  if (sha) ipsec_hmac_outer(h, sa, icv);
}

// The packet's SA record, or null when its index is not below the table's SA count.
static __global const uint* ipsec_sa(__global const uint* sa_table, __global const uint* items,
                                     uint i) {
  const uint index = items[i];
  if (index >= sa_table[0]) return 0;
  return sa_table + (size_t)(index + 1u) * IPSEC_RECORD_WORDS;
}

static void ipsec_store_icv(__global uchar* icv_out, uint i, const uint* icv) {
  __global uchar* o = icv_out + (size_t)i * IPSEC_ICV_BYTES;
  for (uint k = 0; k < IPSEC_ICV_BYTES; ++k)
    o[k] = (uchar)(icv[k / 4u] >> (24u - IPSEC_BITS_PER_BYTE * (k % 4u)));
}

static void ipsec_run(__global uchar* bytes, __global const uint* regions,
                      __global const uint* items, __global const uint* sa_table,
                      __global uchar* icv_out, uint count, bool aes, bool sha) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  uint icv[IPSEC_ICV_WORDS] = {0u, 0u, 0u};
  __global const uint* sa = ipsec_sa(sa_table, items, i);
  if (sa != 0) ipsec_esp(bytes + regions[2u * i], regions[2u * i + 1u], sa, aes, sha, icv);
  if (sha) ipsec_store_icv(icv_out, i, icv);
}

__kernel void ipsec_aes_ctr(__global uchar* bytes, __global const uint* regions,
                            __global const uint* items, __global const uint* sa_table, uint count) {
  ipsec_run(bytes, regions, items, sa_table, 0, count, true, false);
}

__kernel void ipsec_hmac_sha1(__global uchar* bytes, __global const uint* regions,
                              __global const uint* items, __global const uint* sa_table,
                              __global uchar* icv_out, uint count) {
  ipsec_run(bytes, regions, items, sa_table, icv_out, count, false, true);
}

__kernel void ipsec_aes_hmac_fused(__global uchar* bytes, __global const uint* regions,
                                   __global const uint* items, __global const uint* sa_table,
                                   __global uchar* icv_out, uint count) {
  ipsec_run(bytes, regions, items, sa_table, icv_out, count, true, true);
}
