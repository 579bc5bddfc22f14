// MD5 (RFC 1321) of each packet's region of the packed bytes buffer: one work item per packet.
// regions: per packet {uint offset into bytes, uint length}; digests: 16 bytes per packet, the
// digest in RFC 1321 byte order (what OpenSSL's MD5 writes). The message is read four bytes at
// a time (vload4, any alignment) where a word lies inside it, a byte at a time at its end;
// padding and the 64-bit bit length are made up on the fly, so no block is copied or padded in
// memory.
// trailers: per packet a uint; when not 0 the digest is also written right after the region, in
// the 16 bytes the task reserved there (PacketRegion::grow: MD5DigestOffload's TRAILER).

#define MD5_BLOCK_BYTES 64u
#define MD5_BLOCK_WORDS 16u
#define MD5_WORD_BYTES 4u
#define MD5_LENGTH_BYTES 8u
#define MD5_PAD_BYTE 0x80u
#define MD5_DIGEST_WORDS 4u
#define MD5_REGION_WORDS 2u

#define MD5_ROTL(x, c) rotate((uint)(x), (uint)(c))
#define MD5_F(x, y, z) (((x) & (y)) | (~(x) & (z)))
#define MD5_G(x, y, z) (((x) & (z)) | ((y) & ~(z)))
#define MD5_H(x, y, z) ((x) ^ (y) ^ (z))
#define MD5_I(x, y, z) ((y) ^ ((x) | ~(z)))
#define MD5_STEP(f, a, b, c, d, m, k, s) (a) = (b) + MD5_ROTL((a) + f((b), (c), (d)) + (m) + (k), (s))

// Byte `pos` of the padded message: the data, 0x80, zeros, then the bit length little-endian.
static uint md5_padded_byte(__global const uchar* msg, uint len, uint pos, uint total) {
  if (pos < len) return msg[pos];
  if (pos == len) return MD5_PAD_BYTE;
  const uint from_end = total - pos;
  if (from_end > MD5_LENGTH_BYTES) return 0;
  const ulong bits = (ulong)len * 8;
  return (uint)(bits >> (8 * (MD5_LENGTH_BYTES - from_end))) & 0xFFu;
}

static void md5_block(uint* h, const uint* m) {
  uint a = h[0], b = h[1], c = h[2], d = h[3];
  MD5_STEP(MD5_F, a, b, c, d, m[0], 0xd76aa478u, 7);
  MD5_STEP(MD5_F, d, a, b, c, m[1], 0xe8c7b756u, 12);
  MD5_STEP(MD5_F, c, d, a, b, m[2], 0x242070dbu, 17);
  MD5_STEP(MD5_F, b, c, d, a, m[3], 0xc1bdceeeu, 22);
  MD5_STEP(MD5_F, a, b, c, d, m[4], 0xf57c0fafu, 7);
  MD5_STEP(MD5_F, d, a, b, c, m[5], 0x4787c62au, 12);
  MD5_STEP(MD5_F, c, d, a, b, m[6], 0xa8304613u, 17);
  MD5_STEP(MD5_F, b, c, d, a, m[7], 0xfd469501u, 22);
  MD5_STEP(MD5_F, a, b, c, d, m[8], 0x698098d8u, 7);
  MD5_STEP(MD5_F, d, a, b, c, m[9], 0x8b44f7afu, 12);
  MD5_STEP(MD5_F, c, d, a, b, m[10], 0xffff5bb1u, 17);
  MD5_STEP(MD5_F, b, c, d, a, m[11], 0x895cd7beu, 22);
  MD5_STEP(MD5_F, a, b, c, d, m[12], 0x6b901122u, 7);
  MD5_STEP(MD5_F, d, a, b, c, m[13], 0xfd987193u, 12);
  MD5_STEP(MD5_F, c, d, a, b, m[14], 0xa679438eu, 17);
  MD5_STEP(MD5_F, b, c, d, a, m[15], 0x49b40821u, 22);
  MD5_STEP(MD5_G, a, b, c, d, m[1], 0xf61e2562u, 5);
  MD5_STEP(MD5_G, d, a, b, c, m[6], 0xc040b340u, 9);
  MD5_STEP(MD5_G, c, d, a, b, m[11], 0x265e5a51u, 14);
  MD5_STEP(MD5_G, b, c, d, a, m[0], 0xe9b6c7aau, 20);
  MD5_STEP(MD5_G, a, b, c, d, m[5], 0xd62f105du, 5);
  MD5_STEP(MD5_G, d, a, b, c, m[10], 0x02441453u, 9);
  MD5_STEP(MD5_G, c, d, a, b, m[15], 0xd8a1e681u, 14);
  MD5_STEP(MD5_G, b, c, d, a, m[4], 0xe7d3fbc8u, 20);
  MD5_STEP(MD5_G, a, b, c, d, m[9], 0x21e1cde6u, 5);
  MD5_STEP(MD5_G, d, a, b, c, m[14], 0xc33707d6u, 9);
  MD5_STEP(MD5_G, c, d, a, b, m[3], 0xf4d50d87u, 14);
  MD5_STEP(MD5_G, b, c, d, a, m[8], 0x455a14edu, 20);
  MD5_STEP(MD5_G, a, b, c, d, m[13], 0xa9e3e905u, 5);
  MD5_STEP(MD5_G, d, a, b, c, m[2], 0xfcefa3f8u, 9);
  MD5_STEP(MD5_G, c, d, a, b, m[7], 0x676f02d9u, 14);
  MD5_STEP(MD5_G, b, c, d, a, m[12], 0x8d2a4c8au, 20);
  MD5_STEP(MD5_H, a, b, c, d, m[5], 0xfffa3942u, 4);
  MD5_STEP(MD5_H, d, a, b, c, m[8], 0x8771f681u, 11);
  MD5_STEP(MD5_H, c, d, a, b, m[11], 0x6d9d6122u, 16);
  MD5_STEP(MD5_H, b, c, d, a, m[14], 0xfde5380cu, 23);
  MD5_STEP(MD5_H, a, b, c, d, m[1], 0xa4beea44u, 4);
  MD5_STEP(MD5_H, d, a, b, c, m[4], 0x4bdecfa9u, 11);
  MD5_STEP(MD5_H, c, d, a, b, m[7], 0xf6bb4b60u, 16);
  MD5_STEP(MD5_H, b, c, d, a, m[10], 0xbebfbc70u, 23);
  MD5_STEP(MD5_H, a, b, c, d, m[13], 0x289b7ec6u, 4);
  MD5_STEP(MD5_H, d, a, b, c, m[0], 0xeaa127fau, 11);
  MD5_STEP(MD5_H, c, d, a, b, m[3], 0xd4ef3085u, 16);
  MD5_STEP(MD5_H, b, c, d, a, m[6], 0x04881d05u, 23);
  MD5_STEP(MD5_H, a, b, c, d, m[9], 0xd9d4d039u, 4);
  MD5_STEP(MD5_H, d, a, b, c, m[12], 0xe6db99e5u, 11);
  MD5_STEP(MD5_H, c, d, a, b, m[15], 0x1fa27cf8u, 16);
  MD5_STEP(MD5_H, b, c, d, a, m[2], 0xc4ac5665u, 23);
  MD5_STEP(MD5_I, a, b, c, d, m[0], 0xf4292244u, 6);
  MD5_STEP(MD5_I, d, a, b, c, m[7], 0x432aff97u, 10);
  MD5_STEP(MD5_I, c, d, a, b, m[14], 0xab9423a7u, 15);
  MD5_STEP(MD5_I, b, c, d, a, m[5], 0xfc93a039u, 21);
  MD5_STEP(MD5_I, a, b, c, d, m[12], 0x655b59c3u, 6);
  MD5_STEP(MD5_I, d, a, b, c, m[3], 0x8f0ccc92u, 10);
  MD5_STEP(MD5_I, c, d, a, b, m[10], 0xffeff47du, 15);
  MD5_STEP(MD5_I, b, c, d, a, m[1], 0x85845dd1u, 21);
  MD5_STEP(MD5_I, a, b, c, d, m[8], 0x6fa87e4fu, 6);
  MD5_STEP(MD5_I, d, a, b, c, m[15], 0xfe2ce6e0u, 10);
  MD5_STEP(MD5_I, c, d, a, b, m[6], 0xa3014314u, 15);
  MD5_STEP(MD5_I, b, c, d, a, m[13], 0x4e0811a1u, 21);
  MD5_STEP(MD5_I, a, b, c, d, m[4], 0xf7537e82u, 6);
  MD5_STEP(MD5_I, d, a, b, c, m[11], 0xbd3af235u, 10);
  MD5_STEP(MD5_I, c, d, a, b, m[2], 0x2ad7d2bbu, 15);
  MD5_STEP(MD5_I, b, c, d, a, m[9], 0xeb86d391u, 21);
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
}

__kernel void md5_digest(__global uchar* bytes, __global const uint* regions,
                         __global const uint* trailers, __global uchar* digests, uint count) {
  const uint i = get_global_id(0);
  if (i >= count) return;
  const uint offset = regions[(size_t)i * MD5_REGION_WORDS];
  const uint len = regions[(size_t)i * MD5_REGION_WORDS + 1];
  __global const uchar* msg = bytes + offset;
  const uint blocks = (len + MD5_LENGTH_BYTES) / MD5_BLOCK_BYTES + 1;
  const uint total = blocks * MD5_BLOCK_BYTES;
  uint h[MD5_DIGEST_WORDS] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  uint m[MD5_BLOCK_WORDS];
  for (uint blk = 0; blk < blocks; ++blk) {
    const uint base = blk * MD5_BLOCK_BYTES;
    for (uint w = 0; w < MD5_BLOCK_WORDS; ++w) {
      const uint pos = base + w * MD5_WORD_BYTES;
      if (pos + MD5_WORD_BYTES <= len) {
        const uchar4 v = vload4(0, msg + pos);
        m[w] = (uint)v.x | ((uint)v.y << 8) | ((uint)v.z << 16) | ((uint)v.w << 24);
        continue;
      }
      uint word = 0;
      for (uint k = 0; k < MD5_WORD_BYTES; ++k)
        word |= md5_padded_byte(msg, len, pos + k, total) << (8 * k);
      m[w] = word;
    }
    md5_block(h, m);
  }
  __global uchar* out = digests + (size_t)i * MD5_DIGEST_WORDS * MD5_WORD_BYTES;
  for (uint w = 0; w < MD5_DIGEST_WORDS; ++w)
    for (uint k = 0; k < MD5_WORD_BYTES; ++k)
      out[w * MD5_WORD_BYTES + k] = (uchar)(h[w] >> (8 * k));
  if (trailers[i] == 0) return;
  __global uchar* trailer = bytes + offset + len;  // the room the task reserved (grow)
  for (uint k = 0; k < MD5_DIGEST_WORDS * MD5_WORD_BYTES; ++k) trailer[k] = out[k];
}
