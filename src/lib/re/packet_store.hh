// PacketStore: a ring buffer of the most recent payload bytes (the "packet store" of packet
// caches), so that a fingerprint hit can be verified byte for byte.
//
// Bytes are addressed by their position in the stream of everything ever appended (a 48-bit
// count, as the fingerprint table stores it); the ring keeps the last size() of them, so a
// position is still readable while pos >= head() - size(). One store per worker; not
// thread-safe.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>

#include "core/result.hh"
#include "lib/table_memory.hh"

namespace fulcrum::re {

class PacketStore {
 public:
  static constexpr size_t kMinSize = size_t{1} << 17;  // above any single mbuf segment
  static constexpr size_t kMaxSize = size_t{1} << 36;

  // A store of at least `bytes` (rounded up to a power of two).
  static Result<std::unique_ptr<PacketStore>> create(size_t bytes, const char* name = "re_store");
  PacketStore(const PacketStore&) = delete;
  PacketStore& operator=(const PacketStore&) = delete;

  // Appends `len` bytes (len <= size()); returns the position of the first.
  uint64_t append(const uint8_t* src, uint32_t len) {
    const uint64_t pos = head_;
    if (len == 0) return pos;  // src may be null then
    const size_t at = pos & mask_;
    const size_t first = std::min<size_t>(len, size() - at);
    std::memcpy(ring_ + at, src, first);
    std::memcpy(ring_, src + first, len - first);
    head_ += len;
    return pos;
  }

  // Whether [pos, pos + len) is still held (appended and not overwritten).
  bool holds(uint64_t pos, uint32_t len) const {
    return pos + len <= head_ && head_ - pos <= size();
  }

  // Whether the held bytes at `pos` equal `len` bytes at `bytes` (false when not held).
  bool matches(uint64_t pos, const uint8_t* bytes, uint32_t len) const {
    if (!holds(pos, len)) return false;
    const size_t at = pos & mask_;
    const size_t first = std::min<size_t>(len, size() - at);
    return std::memcmp(ring_ + at, bytes, first) == 0 &&
           std::memcmp(ring_, bytes + first, len - first) == 0;
  }

  uint64_t head() const { return head_; }
  size_t size() const { return mask_ + 1; }

 private:
  PacketStore() = default;

  std::unique_ptr<TableMemory> mem_;
  uint8_t* ring_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t head_ = 0;
};

}  // namespace fulcrum::re
