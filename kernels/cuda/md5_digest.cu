// MD5 (RFC 1321) of each packet's region of the packed bytes buffer: one thread per packet.
// regions: per packet {uint32 offset into bytes, uint32 length}; digests: 16 bytes per packet,
// the digest in RFC 1321 byte order (what OpenSSL's MD5 writes). The message is read a 32-bit
// word at a time where the region is word aligned (a whole-packet datablock's regions start on
// 16-byte boundaries), a byte at a time otherwise and at its end; padding and the 64-bit bit
// length are made up on the fly, so no block is copied or padded in memory.
// trailers: per packet a uint; when not 0 the digest is also written right after the region, in
// the 16 bytes the task reserved there (PacketRegion::grow: MD5DigestOffload's TRAILER).
#include <cstddef>
#include <cstdint>

#include "offload/cuda/cuda_kernels.hh"

namespace {

constexpr uint32_t kBlockBytes = 64;
constexpr uint32_t kBlockWords = 16;
constexpr uint32_t kWordBytes = 4;
constexpr uint32_t kLengthBytes = 8;
constexpr uint32_t kPadByte = 0x80;
constexpr uint32_t kDigestWords = 4;
constexpr uint32_t kRegionWords = 2;
constexpr uint32_t kWordAlignMask = kWordBytes - 1;

// Per round: the additive constants (RFC 1321 T[1..64]), shifts and message word order.
__constant__ uint32_t kT[64] = {
    0xd76aa478, 0xe8c7b756, 0x242070db, 0xc1bdceee, 0xf57c0faf, 0x4787c62a, 0xa8304613, 0xfd469501,
    0x698098d8, 0x8b44f7af, 0xffff5bb1, 0x895cd7be, 0x6b901122, 0xfd987193, 0xa679438e, 0x49b40821,
    0xf61e2562, 0xc040b340, 0x265e5a51, 0xe9b6c7aa, 0xd62f105d, 0x02441453, 0xd8a1e681, 0xe7d3fbc8,
    0x21e1cde6, 0xc33707d6, 0xf4d50d87, 0x455a14ed, 0xa9e3e905, 0xfcefa3f8, 0x676f02d9, 0x8d2a4c8a,
    0xfffa3942, 0x8771f681, 0x6d9d6122, 0xfde5380c, 0xa4beea44, 0x4bdecfa9, 0xf6bb4b60, 0xbebfbc70,
    0x289b7ec6, 0xeaa127fa, 0xd4ef3085, 0x04881d05, 0xd9d4d039, 0xe6db99e5, 0x1fa27cf8, 0xc4ac5665,
    0xf4292244, 0x432aff97, 0xab9423a7, 0xfc93a039, 0x655b59c3, 0x8f0ccc92, 0xffeff47d, 0x85845dd1,
    0x6fa87e4f, 0xfe2ce6e0, 0xa3014314, 0x4e0811a1, 0xf7537e82, 0xbd3af235, 0x2ad7d2bb, 0xeb86d391};
__constant__ uint32_t kShift[4][4] = {
    {7, 12, 17, 22}, {5, 9, 14, 20}, {4, 11, 16, 23}, {6, 10, 15, 21}};

__device__ uint32_t rotl(uint32_t x, uint32_t c) {
  return __funnelshift_l(x, x, c);
}

// Byte `pos` of the padded message: the data, 0x80, zeros, then the bit length little-endian.
__device__ uint32_t padded_byte(const uint8_t* msg, uint32_t len, uint32_t pos, uint32_t total) {
  if (pos < len) return msg[pos];
  if (pos == len) return kPadByte;
  const uint32_t from_end = total - pos;
  if (from_end > kLengthBytes) return 0;
  const uint64_t bits = static_cast<uint64_t>(len) * 8;
  return static_cast<uint32_t>(bits >> (8 * (kLengthBytes - from_end))) & 0xFF;
}

__device__ void md5_block(uint32_t* h, const uint32_t* m) {
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3];
#pragma unroll
  for (uint32_t j = 0; j < 64; ++j) {
    const uint32_t round = j / 16;
    uint32_t f, g;
    if (round == 0) {
      f = (b & c) | (~b & d);
      g = j;
    } else if (round == 1) {
      f = (b & d) | (c & ~d);
      g = (5 * j + 1) % 16;
    } else if (round == 2) {
      f = b ^ c ^ d;
      g = (3 * j + 5) % 16;
    } else {
      f = c ^ (b | ~d);
      g = (7 * j) % 16;
    }
    const uint32_t next = b + rotl(a + f + m[g] + kT[j], kShift[round][j % 4]);
    a = d;
    d = c;
    c = b;
    b = next;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

__global__ void md5_digest(uint8_t* __restrict__ bytes, const uint32_t* __restrict__ regions,
                           const uint32_t* __restrict__ trailers, uint8_t* __restrict__ digests,
                           uint32_t count) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint32_t offset = regions[static_cast<size_t>(i) * kRegionWords];
  const uint32_t len = regions[static_cast<size_t>(i) * kRegionWords + 1];
  const uint8_t* msg = bytes + offset;
  const bool aligned = (offset & kWordAlignMask) == 0;
  const uint32_t blocks = (len + kLengthBytes) / kBlockBytes + 1;
  const uint32_t total = blocks * kBlockBytes;
  uint32_t h[kDigestWords] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476};
  uint32_t m[kBlockWords];
  for (uint32_t blk = 0; blk < blocks; ++blk) {
    const uint32_t base = blk * kBlockBytes;
#pragma unroll
    for (uint32_t w = 0; w < kBlockWords; ++w) {
      const uint32_t pos = base + w * kWordBytes;
      if (aligned && pos + kWordBytes <= len) {
        m[w] = __ldg(reinterpret_cast<const uint32_t*>(msg + pos));  // little-endian, as MD5
        continue;
      }
      uint32_t word = 0;
      for (uint32_t k = 0; k < kWordBytes; ++k)
        word |= padded_byte(msg, len, pos + k, total) << (8 * k);
      m[w] = word;
    }
    md5_block(h, m);
  }
  uint8_t* out = digests + static_cast<size_t>(i) * kDigestWords * kWordBytes;
  for (uint32_t w = 0; w < kDigestWords; ++w)
    for (uint32_t k = 0; k < kWordBytes; ++k)
      out[w * kWordBytes + k] = static_cast<uint8_t>(h[w] >> (8 * k));
  if (trailers[i] == 0) return;
  uint8_t* trailer = bytes + offset + len;  // the room the task reserved (grow)
  for (uint32_t k = 0; k < kDigestWords * kWordBytes; ++k) trailer[k] = out[k];
}

const fulcrum::offload::CudaKernelRegistration kRegistration{
    {"md5_digest", "bbbbu", reinterpret_cast<const void*>(&md5_digest)}};

}  // namespace
