// FingerprintTable: content fingerprints -> packet-store references, bounded, with FIFO
// replacement (the "fingerprint table" of packet caches, Anand et al. SIGCOMM'08).
//
// Layout: a power-of-two array of 64-byte buckets, each one cache line of 4 entries
//   key  u64  the fingerprint (the first 8 bytes of the chunk's MD5, little-endian)
//   ref  u64  packet-store position << 16 | chunk length; 0 marks an empty entry, so zeroed
//             memory is an empty table (a chunk is never empty).
// A key's bucket is its low bits (MD5 output is uniform). insert() refreshes an existing key to
// the newer reference, else fills an empty entry, else replaces the entry with the oldest
// position (FIFO within the bucket: older store bytes are overwritten first anyway).
// prefetch() fetches a key's bucket ahead of lookup/insert. One table per worker; not
// thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "core/result.hh"
#include "lib/table_memory.hh"

namespace fulcrum::re {

class FingerprintTable {
 public:
  static constexpr uint32_t kBucketEntries = 4;
  static constexpr size_t kMinCapacity = kBucketEntries;
  static constexpr size_t kMaxCapacity = size_t{1} << 30;
  static constexpr uint32_t kLenBits = 16;
  static constexpr uint64_t kLenMask = (uint64_t{1} << kLenBits) - 1;
  static constexpr uint64_t kMaxPos = (uint64_t{1} << (64 - kLenBits)) - 1;

  // A table of at least `capacity` entries (rounded up to a power of two).
  static Result<std::unique_ptr<FingerprintTable>> create(size_t capacity,
                                                          const char* name = "re_fingerprints");
  FingerprintTable(const FingerprintTable&) = delete;
  FingerprintTable& operator=(const FingerprintTable&) = delete;

  static uint64_t make_ref(uint64_t pos, uint32_t len) { return pos << kLenBits | len; }
  static uint64_t ref_pos(uint64_t ref) { return ref >> kLenBits; }
  static uint32_t ref_len(uint64_t ref) { return static_cast<uint32_t>(ref & kLenMask); }

  void prefetch(uint64_t key) const { __builtin_prefetch(&buckets_[key & mask_]); }

  // The reference stored for `key`, or 0.
  uint64_t lookup(uint64_t key) const {
    const Bucket& b = buckets_[key & mask_];
    for (uint32_t i = 0; i < kBucketEntries; ++i)
      if (b.key[i] == key && b.ref[i] != 0) return b.ref[i];
    return 0;
  }

  // Stores key -> ref (ref != 0). Returns true when an older entry of another key was evicted.
  bool insert(uint64_t key, uint64_t ref) {
    Bucket& b = buckets_[key & mask_];
    uint32_t victim = 0;
    for (uint32_t i = 0; i < kBucketEntries; ++i) {
      if (b.ref[i] == 0 || b.key[i] == key) {
        size_ += b.ref[i] == 0;
        b.key[i] = key;
        b.ref[i] = ref;
        return false;
      }
      if (b.ref[i] < b.ref[victim]) victim = i;
    }
    b.key[victim] = key;
    b.ref[victim] = ref;
    return true;
  }

  size_t size() const { return size_; }
  size_t capacity() const { return (mask_ + 1) * kBucketEntries; }

 private:
  struct alignas(64) Bucket {
    uint64_t key[kBucketEntries];
    uint64_t ref[kBucketEntries];
  };
  static_assert(sizeof(Bucket) == 64);

  FingerprintTable() = default;

  std::unique_ptr<TableMemory> mem_;
  Bucket* buckets_ = nullptr;
  uint64_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace fulcrum::re
