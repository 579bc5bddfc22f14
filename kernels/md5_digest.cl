// MD5 (RFC 1321) of each packet's region of the packed bytes buffer: one work item per packet.
// regions: per packet {uint32 offset into bytes, uint32 length}; digests: 16 bytes per packet,
// the digest in RFC 1321 byte order (what OpenSSL's MD5 writes). The message is read a 32-bit
// word at a time (load_le32, any alignment) where a word lies inside it, a byte at a time at its
// end; padding and the 64-bit bit length are made up on the fly, so no block is copied or padded
// in memory.
// trailers: per packet a uint32; when not 0 the digest is also written right after the region,
// in the 16 bytes the task reserved there (PacketRegion::grow: MD5DigestOffload's TRAILER).
#include "common/md5.h"
#include "common/portable.h"

#define MD5_BLOCK_BYTES 64u
#define MD5_BLOCK_WORDS 16u
#define MD5_WORD_BYTES 4u
#define MD5_LENGTH_BYTES 8u
#define MD5_PAD_BYTE 0x80u
#define MD5_DIGEST_WORDS 4u
#define MD5_REGION_WORDS 2u

// Byte `pos` of the padded message: the data, 0x80, zeros, then the bit length little-endian.
INLINE uint32_t md5_padded_byte(GLOBAL const uint8_t* msg, uint32_t len, uint32_t pos,
                                uint32_t total) {
  if (pos < len) return msg[pos];
  if (pos == len) return MD5_PAD_BYTE;
  const uint32_t from_end = total - pos;
  if (from_end > MD5_LENGTH_BYTES) return 0;
  const uint64_t bits = (uint64_t)len * 8;
  return (uint32_t)(bits >> (8 * (MD5_LENGTH_BYTES - from_end))) & 0xFFu;
}

KERNEL void md5_digest(GLOBAL uint8_t* RESTRICT bytes, GLOBAL const uint32_t* RESTRICT regions,
                       GLOBAL const uint32_t* RESTRICT trailers, GLOBAL uint8_t* RESTRICT digests,
                       uint32_t count) {
  const uint32_t i = GLOBAL_ID();
  if (i >= count) return;
  const uint32_t offset = regions[(size_t)i * MD5_REGION_WORDS];
  const uint32_t len = regions[(size_t)i * MD5_REGION_WORDS + 1];
  GLOBAL const uint8_t* msg = bytes + offset;
  const uint32_t blocks = (len + MD5_LENGTH_BYTES) / MD5_BLOCK_BYTES + 1;
  const uint32_t total = blocks * MD5_BLOCK_BYTES;
  uint32_t h[MD5_DIGEST_WORDS] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u};
  uint32_t m[MD5_BLOCK_WORDS];
  for (uint32_t blk = 0; blk < blocks; ++blk) {
    const uint32_t base = blk * MD5_BLOCK_BYTES;
    UNROLL
    for (uint32_t w = 0; w < MD5_BLOCK_WORDS; ++w) {
      const uint32_t pos = base + w * MD5_WORD_BYTES;
      if (pos + MD5_WORD_BYTES <= len) {
        m[w] = load_le32(msg + pos);
        continue;
      }
      uint32_t word = 0;
      for (uint32_t k = 0; k < MD5_WORD_BYTES; ++k)
        word |= md5_padded_byte(msg, len, pos + k, total) << (8 * k);
      m[w] = word;
    }
    md5_block(h, m);
  }
  GLOBAL uint8_t* out = digests + (size_t)i * MD5_DIGEST_WORDS * MD5_WORD_BYTES;
  for (uint32_t w = 0; w < MD5_DIGEST_WORDS; ++w)
    for (uint32_t k = 0; k < MD5_WORD_BYTES; ++k)
      out[w * MD5_WORD_BYTES + k] = (uint8_t)(h[w] >> (8 * k));
  if (trailers[i] == 0) return;
  GLOBAL uint8_t* trailer = bytes + offset + len;  // the room the task reserved (grow)
  for (uint32_t k = 0; k < MD5_DIGEST_WORDS * MD5_WORD_BYTES; ++k) trailer[k] = out[k];
}
