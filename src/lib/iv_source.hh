// IvSource: unpredictable IVs for AES-CBC ESP (RFC 3602 §3: "the IV MUST be chosen at random,
// and MUST be unpredictable"), generated in bulk instead of one RAND_bytes call per packet.
//
// A per-worker AES-128-CTR keystream (the CTR_DRBG construction of NIST SP 800-90A without its
// derivation function) keyed from OpenSSL's RAND_bytes: 4 KiB of keystream a refill (256 IVs),
// a fresh key and counter from RAND_bytes every 2^16 refills (256 MiB of output, far inside
// SP 800-90A's 2^48 requests per seed). Not thread-safe: one per element replica.
//
//   auto ivs = IvSource::create();    // fails only when RAND_bytes or OpenSSL's AES fails
//   if (!(*ivs)->fill(iv, 16)) ...    // false: a reseed failed; nothing was written
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/result.hh"

struct evp_cipher_ctx_st;

namespace fulcrum {

class IvSource {
 public:
  static constexpr size_t kBufferLen = 4096;
  static constexpr uint32_t kRefillsPerKey = 1u << 16;

  static Result<std::unique_ptr<IvSource>> create();
  ~IvSource();
  IvSource(const IvSource&) = delete;
  IvSource& operator=(const IvSource&) = delete;

  // `len` (at most kBufferLen) fresh bytes into `out`.
  bool fill(uint8_t* out, size_t len) {
    if (len > kBufferLen - used_ && !refill()) return false;
    for (size_t i = 0; i < len; ++i) out[i] = buffer_[used_ + i];
    used_ += len;
    return true;
  }

  uint64_t reseeds() const { return reseeds_; }

 private:
  IvSource() = default;
  bool refill();
  bool reseed();

  evp_cipher_ctx_st* ctx_ = nullptr;
  alignas(64) uint8_t buffer_[kBufferLen];
  size_t used_ = kBufferLen;
  uint32_t refills_ = 0;
  uint64_t reseeds_ = 0;
};

}  // namespace fulcrum
