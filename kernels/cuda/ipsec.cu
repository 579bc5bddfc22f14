// IPsec ESP outbound crypto (src/offload/ipsec_tables.hh has the task layout and the SA table
// records): AES-128-CTR (RFC 3686) of region[16, len), HMAC-SHA1-96 (RFC 2404) over the whole
// region after encryption, or both fused in one pass. One thread per packet. Words are handled
// big-endian, as AES (FIPS-197) and SHA-1 (FIPS 180-4) define them; the AES round is the
// T-table formulation, one 1 KiB table copied into shared memory per block (rotated for the
// other three). Regions start at multiples of 16 in `bytes`, so 16-byte chunks load as uint4.
#include <cstddef>
#include <cstdint>

#include "offload/cuda/cuda_kernels.hh"

namespace {

constexpr uint32_t kRecordWords = 56;
constexpr uint32_t kNonceWord = 44;
constexpr uint32_t kIpadWord = 45;
constexpr uint32_t kOpadWord = 50;
constexpr uint32_t kChunkBytes = 16;
constexpr uint32_t kWordsPerChunk = 4;
constexpr uint32_t kSha1BlockBytes = 64;
constexpr uint32_t kSha1BlockWords = 16;
constexpr uint32_t kSha1Rounds = 80;
constexpr uint32_t kSha1LengthAt = 56;
constexpr uint32_t kSha1LengthWord = 15;
constexpr uint32_t kSha1Pad = 0x80;
constexpr uint32_t kSha1DigestBytes = 20;
constexpr uint32_t kSha1StateWords = 5;
constexpr uint32_t kIcvWords = 3;
constexpr uint32_t kIcvBytes = 12;
constexpr uint32_t kAesRounds = 10;
constexpr uint32_t kBitsPerByte = 8;
constexpr uint32_t kTableEntries = 256;

__constant__ uint32_t kTe0[kTableEntries] = {
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
__device__ __forceinline__ uint32_t te(const uint32_t* t, uint32_t x, uint32_t k) {
  const uint32_t v = t[x & 0xFFu];
  return k == 0 ? v : __funnelshift_r(v, v, kBitsPerByte * k);
}

// The S-box is the middle byte of Te0 ({2S, S, S, 3S}).
__device__ __forceinline__ uint32_t sbox(const uint32_t* t, uint32_t x) {
  return (t[x & 0xFFu] >> kBitsPerByte) & 0xFFu;
}

__device__ __forceinline__ uint32_t rotl(uint32_t x, uint32_t n) {
  return __funnelshift_l(x, x, n);
}

__device__ __forceinline__ uint32_t bswap(uint32_t x) {
  return __byte_perm(x, 0, 0x0123);
}

__device__ __forceinline__ uint4 aes_round(const uint32_t* t, uint4 s, const uint32_t* k) {
  return make_uint4(
      te(t, s.x >> 24, 0) ^ te(t, s.y >> 16, 1) ^ te(t, s.z >> 8, 2) ^ te(t, s.w, 3) ^ __ldg(&k[0]),
      te(t, s.y >> 24, 0) ^ te(t, s.z >> 16, 1) ^ te(t, s.w >> 8, 2) ^ te(t, s.x, 3) ^ __ldg(&k[1]),
      te(t, s.z >> 24, 0) ^ te(t, s.w >> 16, 1) ^ te(t, s.x >> 8, 2) ^ te(t, s.y, 3) ^ __ldg(&k[2]),
      te(t, s.w >> 24, 0) ^ te(t, s.x >> 16, 1) ^ te(t, s.y >> 8, 2) ^ te(t, s.z, 3) ^
          __ldg(&k[3]));
}

__device__ __forceinline__ uint32_t last_word(const uint32_t* t, uint32_t a, uint32_t b, uint32_t c,
                                              uint32_t d, const uint32_t* k) {
  return (sbox(t, a >> 24) << 24 | sbox(t, b >> 16) << 16 | sbox(t, c >> 8) << 8 | sbox(t, d)) ^
         __ldg(k);
}

// One AES-128 block encryption with the round keys rk[0..43].
__device__ __forceinline__ uint4 aes128(const uint32_t* t, const uint32_t* rk, uint4 s) {
  s.x ^= __ldg(&rk[0]);
  s.y ^= __ldg(&rk[1]);
  s.z ^= __ldg(&rk[2]);
  s.w ^= __ldg(&rk[3]);
#pragma unroll
  for (uint32_t r = 1; r < kAesRounds; ++r) s = aes_round(t, s, rk + kWordsPerChunk * r);
  const uint32_t* k = rk + kWordsPerChunk * kAesRounds;
  return make_uint4(last_word(t, s.x, s.y, s.z, s.w, k), last_word(t, s.y, s.z, s.w, s.x, k + 1),
                    last_word(t, s.z, s.w, s.x, s.y, k + 2),
                    last_word(t, s.w, s.x, s.y, s.z, k + 3));
}

// The bits of word j that hold the first n bytes of a chunk (big-endian words).
__device__ __forceinline__ uint32_t keep_mask(uint32_t n, uint32_t j) {
  const uint32_t first = kWordsPerChunk * j;
  if (n >= first + kWordsPerChunk) return 0xFFFFFFFFu;
  if (n <= first) return 0;
  return 0xFFFFFFFFu << (kBitsPerByte * (first + kWordsPerChunk - n));
}

__device__ __forceinline__ uint32_t byte_at(uint32_t w, uint32_t k) {
  return (w >> (24u - kBitsPerByte * (k % 4u))) & 0xFFu;
}

// The first n (1..16) bytes at p as big-endian words, zeros after them.
__device__ __forceinline__ uint4 load_chunk(const uint8_t* p, uint32_t n) {
  if (n >= kChunkBytes) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    return make_uint4(bswap(v.x), bswap(v.y), bswap(v.z), bswap(v.w));
  }
  uint4 v = make_uint4(0, 0, 0, 0);
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t b = static_cast<uint32_t>(p[k]) << (24u - kBitsPerByte * (k % 4u));
    if (k < 4u) {
      v.x |= b;
    } else if (k < 8u) {
      v.y |= b;
    } else if (k < 12u) {
      v.z |= b;
    } else {
      v.w |= b;
    }
  }
  return v;
}

__device__ __forceinline__ void store_chunk(uint8_t* p, uint32_t n, uint4 v) {
  if (n >= kChunkBytes) {
    *reinterpret_cast<uint4*>(p) = make_uint4(bswap(v.x), bswap(v.y), bswap(v.z), bswap(v.w));
    return;
  }
  for (uint32_t k = 0; k < n; ++k) {
    const uint32_t w = k < 4u ? v.x : k < 8u ? v.y : k < 12u ? v.z : v.w;
    p[k] = static_cast<uint8_t>(byte_at(w, k));
  }
}

// One SHA-1 compression of w[0..15] into h[0..4] (w is used as the rolling schedule).
__device__ __forceinline__ void sha1_block(uint32_t* h, uint32_t* w) {
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
#pragma unroll
  for (uint32_t t = 0; t < kSha1Rounds; ++t) {
    if (t >= kSha1BlockWords)
      w[t % 16u] = rotl(w[(t - 3u) % 16u] ^ w[(t - 8u) % 16u] ^ w[(t - 14u) % 16u] ^ w[t % 16u], 1);
    uint32_t f, k;
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
    const uint32_t tmp = rotl(a, 5) + f + e + k + w[t % 16u];
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = tmp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

// The 16-byte chunk of region r at pos as big-endian words, zeros past len; with Aes, chunks
// from 16 on are encrypted in place first (counter block nonce | IV | pos / 16).
template <bool Aes, bool Sha>
__device__ __forceinline__ uint4 chunk(const uint32_t* t, uint8_t* r, uint32_t len, uint32_t pos,
                                       const uint32_t* sa, uint32_t nonce, uint32_t iv0,
                                       uint32_t iv1) {
  const uint32_t n = pos < len ? min(kChunkBytes, len - pos) : 0u;
  uint4 v = make_uint4(0, 0, 0, 0);
  if (n > 0 && (Sha || pos >= kChunkBytes)) v = load_chunk(r + pos, n);
  if (Aes && n > 0 && pos >= kChunkBytes) {
    const uint4 ks = aes128(t, sa, make_uint4(nonce, iv0, iv1, pos / kChunkBytes));
    v.x = (v.x ^ ks.x) & keep_mask(n, 0);
    v.y = (v.y ^ ks.y) & keep_mask(n, 1);
    v.z = (v.z ^ ks.z) & keep_mask(n, 2);
    v.w = (v.w ^ ks.w) & keep_mask(n, 3);
    store_chunk(r + pos, n, v);
  }
  return v;
}

// HMAC's outer hash: the opad state, then the 20-byte inner digest h in one padded block; the
// first 96 bits into icv.
__device__ __forceinline__ void hmac_outer(uint32_t* h, const uint32_t* sa, uint32_t* icv) {
  uint32_t w[kSha1BlockWords];
#pragma unroll
  for (uint32_t j = 0; j < kSha1BlockWords; ++j) w[j] = j < kSha1StateWords ? h[j] : 0u;
  w[kSha1StateWords] = kSha1Pad << 24;
  w[kSha1LengthWord] = (kSha1BlockBytes + kSha1DigestBytes) * kBitsPerByte;
#pragma unroll
  for (uint32_t k = 0; k < kSha1StateWords; ++k) h[k] = __ldg(&sa[kOpadWord + k]);
  sha1_block(h, w);
#pragma unroll
  for (uint32_t k = 0; k < kIcvWords; ++k) icv[k] = h[k];
}

// Encrypts region[16, len) in place (Aes) and/or writes HMAC-SHA1-96 of region[0, len) after
// encryption into icv (Sha), one 64-byte SHA-1 block (four AES blocks) at a time.
template <bool Aes, bool Sha>
__device__ void esp(const uint32_t* t, uint8_t* r, uint32_t len, const uint32_t* sa,
                    uint32_t* icv) {
  uint32_t h[kSha1StateWords];
#pragma unroll
  for (uint32_t k = 0; k < kSha1StateWords; ++k) h[k] = __ldg(&sa[kIpadWord + k]);
  const uint32_t nonce = __ldg(&sa[kNonceWord]);
  uint32_t iv0 = 0, iv1 = 0;
  if (Aes && len > kChunkBytes) {
    const uint4 head = load_chunk(r, kChunkBytes);
    iv0 = head.z;
    iv1 = head.w;
  }
  for (uint32_t base = 0; base <= len; base += kSha1BlockBytes) {
    const uint4 c0 = chunk<Aes, Sha>(t, r, len, base, sa, nonce, iv0, iv1);
    const uint4 c1 = chunk<Aes, Sha>(t, r, len, base + kChunkBytes, sa, nonce, iv0, iv1);
    const uint4 c2 = chunk<Aes, Sha>(t, r, len, base + 2 * kChunkBytes, sa, nonce, iv0, iv1);
    const uint4 c3 = chunk<Aes, Sha>(t, r, len, base + 3 * kChunkBytes, sa, nonce, iv0, iv1);
    uint32_t w[kSha1BlockWords] = {c0.x, c0.y, c0.z, c0.w, c1.x, c1.y, c1.z, c1.w,
                                   c2.x, c2.y, c2.z, c2.w, c3.x, c3.y, c3.z, c3.w};
    if constexpr (!Sha) continue;
    if (base + kSha1BlockBytes <= len) {
      sha1_block(h, w);
      continue;
    }
    // The last block: 0x80 after the data, then the length in bits of key block + region.
    const uint32_t rem = len - base;
#pragma unroll
    for (uint32_t j = 0; j < kSha1BlockWords; ++j)
      if (j == rem / 4u) w[j] |= kSha1Pad << (24u - kBitsPerByte * (rem % 4u));
    if (rem >= kSha1LengthAt) {
      sha1_block(h, w);
#pragma unroll
      for (uint32_t j = 0; j < kSha1BlockWords; ++j) w[j] = 0;
    }
    w[kSha1LengthWord] = (kSha1BlockBytes + len) * kBitsPerByte;
    sha1_block(h, w);
  }
  if constexpr (Sha) hmac_outer(h, sa, icv);
}

template <bool Aes, bool Sha>
__device__ void run(uint8_t* bytes, const uint32_t* regions, const uint32_t* items,
                    const uint32_t* sa_table, uint8_t* icv_out, uint32_t count) {
  __shared__ uint32_t table[kTableEntries];
  if constexpr (Aes) {
    for (uint32_t k = threadIdx.x; k < kTableEntries; k += blockDim.x) table[k] = kTe0[k];
    __syncthreads();
  }
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  uint32_t icv[kIcvWords] = {0, 0, 0};
  const uint32_t index = __ldg(&items[i]);
  if (index < __ldg(&sa_table[0])) {
    const uint32_t* sa = sa_table + static_cast<size_t>(index + 1) * kRecordWords;
    esp<Aes, Sha>(table, bytes + __ldg(&regions[2 * i]), __ldg(&regions[2 * i + 1]), sa, icv);
  }
  if constexpr (!Sha) return;
  uint8_t* o = icv_out + static_cast<size_t>(i) * kIcvBytes;
#pragma unroll
  for (uint32_t k = 0; k < kIcvBytes; ++k) o[k] = static_cast<uint8_t>(byte_at(icv[k / 4u], k));
}

__global__ void ipsec_aes_ctr(uint8_t* bytes, const uint32_t* __restrict__ regions,
                              const uint32_t* __restrict__ items,
                              const uint32_t* __restrict__ sa_table, uint32_t count) {
  run<true, false>(bytes, regions, items, sa_table, nullptr, count);
}

__global__ void ipsec_hmac_sha1(uint8_t* bytes, const uint32_t* __restrict__ regions,
                                const uint32_t* __restrict__ items,
                                const uint32_t* __restrict__ sa_table, uint8_t* icv_out,
                                uint32_t count) {
  run<false, true>(bytes, regions, items, sa_table, icv_out, count);
}

__global__ void ipsec_aes_hmac_fused(uint8_t* bytes, const uint32_t* __restrict__ regions,
                                     const uint32_t* __restrict__ items,
                                     const uint32_t* __restrict__ sa_table, uint8_t* icv_out,
                                     uint32_t count) {
  run<true, true>(bytes, regions, items, sa_table, icv_out, count);
}

const fulcrum::offload::CudaKernelRegistration kAesRegistration{
    {"ipsec_aes_ctr", "bbbbu", reinterpret_cast<const void*>(&ipsec_aes_ctr)}};
const fulcrum::offload::CudaKernelRegistration kHmacRegistration{
    {"ipsec_hmac_sha1", "bbbbbu", reinterpret_cast<const void*>(&ipsec_hmac_sha1)}};
const fulcrum::offload::CudaKernelRegistration kFusedRegistration{
    {"ipsec_aes_hmac_fused", "bbbbbu", reinterpret_cast<const void*>(&ipsec_aes_hmac_fused)}};

}  // namespace
