// Chunking of payloads for redundancy elimination: fixed-size chunks, or content-defined chunk
// boundaries chosen by a rolling hash (as packet caches, Anand et al. SIGCOMM'08, and EndRE,
// NSDI'10, select fingerprinted regions by content so that an insertion does not shift every
// later boundary).
//
// Fixed (mode kFixed, size S): chunks [0,S), [S,2S), ...; a tail shorter than S is not a chunk.
//
// Content-defined (mode kContent, size S a power of two, 32..1024): a polynomial rolling hash
// over the last kWindow = 16 bytes, mod 2^64,
//   h(e) = sum over j in [e-16, e) of data[j] * kBase^(e-1-j),
// is evaluated after every byte. A chunk that starts at s ends at the first e with
//   e - s >= S/2  and  the top log2(S) bits of (h(e) * kMix mod 2^64) are zero,
// or at e = s + 4*S, whichever comes first. A tail shorter than S/2 is not a chunk. Chunks thus
// average about S/2 + S bytes and are at most 4*S. (The window never reaches before the
// payload: S/2 >= 16.)
#pragma once

#include <bit>
#include <cstdint>

namespace fulcrum::re {

struct Chunk {
  uint32_t offset;  // from the start of the payload
  uint32_t len;
};

struct ChunkParams {
  enum class Mode : uint8_t { kFixed, kContent };
  Mode mode = Mode::kFixed;
  uint32_t size = 64;

  static constexpr uint32_t kMinFixed = 8;
  static constexpr uint32_t kMaxFixed = 4096;
  static constexpr uint32_t kMinContent = 32;
  static constexpr uint32_t kMaxContent = 1024;
  static constexpr uint32_t kContentMinDiv = 2;  // shortest chunk: S / 2
  static constexpr uint32_t kContentMaxMul = 4;  // longest chunk: 4 * S

  bool valid() const {
    if (mode == Mode::kFixed) return size >= kMinFixed && size <= kMaxFixed;
    return std::has_single_bit(size) && size >= kMinContent && size <= kMaxContent;
  }
  uint32_t min_len() const { return mode == Mode::kFixed ? size : size / kContentMinDiv; }
  uint32_t max_len() const { return mode == Mode::kFixed ? size : size * kContentMaxMul; }
  // At most this many chunks in a payload of `len` bytes.
  uint32_t max_chunks(uint32_t len) const { return len / min_len(); }
};

inline constexpr uint32_t kWindow = 16;
inline constexpr uint64_t kBase = 0x100000001b3ULL;
inline constexpr uint64_t kMix = 0x9E3779B97F4A7C15ULL;

inline constexpr uint64_t base_pow_window() {
  uint64_t p = 1;
  for (uint32_t i = 0; i < kWindow; ++i) p *= kBase;
  return p;
}

// Splits `len` bytes at `data` into chunks written to out[0..n); returns n (at most
// p.max_chunks(len)).
inline uint32_t chunk_payload(const uint8_t* data, uint32_t len, const ChunkParams& p, Chunk* out) {
  uint32_t n = 0;
  if (p.mode == ChunkParams::Mode::kFixed) {
    for (uint32_t off = 0; off + p.size <= len; off += p.size) out[n++] = {off, p.size};
    return n;
  }
  constexpr uint64_t kOut = base_pow_window();
  const uint32_t min = p.min_len(), max = p.max_len();
  const uint32_t shift = 64 - static_cast<uint32_t>(std::countr_zero(p.size));
  uint64_t h = 0;
  uint32_t start = 0;
  for (uint32_t e = 1; e <= len; ++e) {
    h = h * kBase + data[e - 1];
    if (e > kWindow) h -= data[e - 1 - kWindow] * kOut;
    const uint32_t run = e - start;
    if (run >= max || (run >= min && ((h * kMix) >> shift) == 0)) {
      out[n++] = {start, run};
      start = e;
    }
  }
  if (len - start >= min) out[n++] = {start, len - start};
  return n;
}

}  // namespace fulcrum::re
