// MD5 (RFC 1321) of packet payloads and payload chunks, through OpenSSL's libcrypto.
//
// The low-level MD5_Init/MD5_Update/MD5_Final calls are used rather than the EVP interface or
// the MD5() one-shot (which OpenSSL 3 routes through EVP): for the short messages of packet
// processing (22 bytes of a 64-byte UDP frame, 64-byte chunks) EVP's provider dispatch adds
// 20-40 % to the hash itself (bench group "md5" measures MD5() and EVP next to it). The
// low-level calls are deprecated in OpenSSL 3 but kept by it; the deprecation warning is
// silenced around them only.
//
// md5_bulk() hashes a batch of byte ranges into a side array of digests: the data it reads (one
// pointer and length per message) and writes (16 bytes per message) are the datablocks a device
// kernel takes, so a GPU implementation can replace the loop without changing its callers. On
// CPUs with AVX2 it hashes eight messages at once (md5_mb.cc), 3-4x OpenSSL's rate on short
// messages; OpenSSL stays the reference and the fallback.
#pragma once

#include <openssl/md5.h>

#include <cstdint>
#include <cstring>

namespace fulcrum::re {

inline constexpr uint32_t kMd5Len = 16;

struct Md5Digest {
  uint8_t b[kMd5Len];

  // The first 8 bytes as a little-endian integer (the fingerprint table's key).
  uint64_t low64() const {
    uint64_t v;
    std::memcpy(&v, b, sizeof v);
    return v;
  }
  bool operator==(const Md5Digest&) const = default;
};
static_assert(sizeof(Md5Digest) == kMd5Len);

// One message.
inline Md5Digest md5(const uint8_t* data, size_t len) {
  Md5Digest d;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  MD5_CTX ctx;
  MD5_Init(&ctx);
  MD5_Update(&ctx, data, len);
  MD5_Final(d.b, &ctx);
#pragma GCC diagnostic pop
  return d;
}

// A message to hash: `len` bytes at `data`.
struct ByteRange {
  const uint8_t* data;
  uint32_t len;
};

// Whether this CPU runs md5_bulk_avx2.
bool md5_avx2_available();
// n messages into out[0..n), eight at a time in the lanes of AVX2 registers (multi-buffer MD5,
// src/lib/re/md5_mb.cc). Only where md5_avx2_available().
void md5_bulk_avx2(const ByteRange* in, Md5Digest* out, uint32_t n);

// Batches at least this long go through the multi-buffer path (below it most lanes would idle).
inline constexpr uint32_t kMd5MultiBufferMin = 4;

// n messages into out[0..n): multi-buffer on AVX2 CPUs, OpenSSL one message at a time
// elsewhere and for short batches.
inline void md5_bulk(const ByteRange* in, Md5Digest* out, uint32_t n) {
  if (n >= kMd5MultiBufferMin && md5_avx2_available()) {
    md5_bulk_avx2(in, out, n);
    return;
  }
  for (uint32_t i = 0; i < n; ++i) out[i] = md5(in[i].data, in[i].len);
}

}  // namespace fulcrum::re
