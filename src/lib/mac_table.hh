// MacTable: a hash table from 48-bit Ethernet addresses to (port, last seen), for L2 learning
// and forwarding at up to 16M entries (bucketized cuckoo hashing, as CuckooSwitch).
//
// Layout: an array of 64-byte buckets, each one cache line of 8 packed 64-bit entries
//   bits 0..47   the MAC address (byte 0 of the address in bits 40..47, as mac_key() builds it)
//   bits 48..63  port + 1; 0 marks an empty slot, so zeroed memory is an empty table.
// Every key has two candidate buckets, from two CRC32 hashes (SSE4.2) reduced to the bucket
// count by multiply-shift (no power-of-two rounding, so 16M entries take 149 MB). A lookup
// reads both buckets: two cache lines, fetched in parallel. The optional last-seen times are a
// separate array of 32-bit values, one per slot, touched only when the table tracks them.
//
// Inserting into two full buckets moves entries to their other bucket along a random path of
// at most kMaxKicks moves (computed first, applied only when it ends at a free slot, so a failed
// insert changes nothing). The bucket count keeps the load at or below kMaxLoad when the table
// holds `capacity` entries; an insert beyond capacity fails.
//
// lookup_bulk() and insert_bulk() work in groups of kPrefetchGroup keys: the hashes of the next
// group are computed and its buckets prefetched before the current group is resolved.
// Not thread-safe for writers: a table belongs to one thread (or is read-only when shared).
#pragma once

#include <nmmintrin.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <random>

#include "core/result.hh"
#include "lib/prefetch_group.hh"
#include "lib/table_memory.hh"

namespace fulcrum {

class MacTable {
 public:
  static constexpr uint16_t kNotFound = 0xFFFF;
  static constexpr uint16_t kMaxPort = 0xFFFE;
  static constexpr uint32_t kBucketEntries = 8;
  static constexpr double kMaxLoad = 0.9;
  static constexpr size_t kMaxCapacity = size_t{1} << 28;
  static constexpr uint32_t kMaxKicks = 256;
  static constexpr size_t kPrefetchGroup = 16;
  static constexpr uint32_t kKeyBits = 48;
  static constexpr uint64_t kKeyMask = (uint64_t{1} << kKeyBits) - 1;

  enum class InsertResult : uint8_t { kInserted, kUpdated, kUnchanged, kFull };

  // A table for up to `capacity` entries (1..kMaxCapacity); `track_last_seen` adds the 4-byte
  // per-slot time array. Fails when the memory cannot be allocated.
  static Result<std::unique_ptr<MacTable>> create(size_t capacity, bool track_last_seen,
                                                  const char* name = "mac_table");
  MacTable(const MacTable&) = delete;
  MacTable& operator=(const MacTable&) = delete;

  // The 48-bit key of the address at `addr` (6 bytes, network order).
  static uint64_t mac_key(const uint8_t* addr) {
    uint64_t k = 0;
    for (uint32_t i = 0; i < kMacBytes; ++i) k = (k << kBitsPerByte) | addr[i];
    return k;
  }

  // Inserts `key` -> `port` (port <= kMaxPort), or updates the port of an existing key; sets its
  // last-seen time to `now` when tracked. kFull: capacity reached or no cuckoo path found.
  InsertResult insert(uint64_t key, uint16_t port, uint32_t now = 0) {
    return insert_hashed(key & kKeyMask, port, now, hash_pair(key & kKeyMask));
  }

  // insert() for n keys with group prefetch. Returns how many failed (kFull).
  size_t insert_bulk(const uint64_t* keys, const uint16_t* ports, size_t n, uint32_t now = 0);
  // The same in groups of `group` (valid_prefetch_group; another value: kPrefetchGroup).
  size_t insert_bulk(const uint64_t* keys, const uint16_t* ports, size_t n, uint32_t now,
                     unsigned group);

  // The port of `key`, or kNotFound.
  uint16_t lookup(uint64_t key) const {
    const uint64_t k = key & kKeyMask;
    const uint64_t* e = find(k, hash_pair(k));
    return e == nullptr ? kNotFound : entry_port(*e);
  }
  // lookup() that also reads the last-seen time (0 when not tracked); false when absent.
  bool lookup(uint64_t key, uint16_t& port, uint32_t& last_seen) const;

  // lookup() for n keys with group prefetch; out[i] = port or kNotFound. With `last_seen`
  // (tracked tables only), last_seen[i] is the time of each found key.
  void lookup_bulk(const uint64_t* keys, uint16_t* out, size_t n,
                   uint32_t* last_seen = nullptr) const;
  // The same in groups of `group` (valid_prefetch_group; another value: kPrefetchGroup).
  void lookup_bulk(const uint64_t* keys, uint16_t* out, size_t n, uint32_t* last_seen,
                   unsigned group) const;
  static constexpr unsigned kDefaultPrefetch = kPrefetchGroup;

  bool erase(uint64_t key);
  // Erases every entry last seen before `before` (tracked tables only); returns how many.
  size_t expire(uint32_t before);

  size_t size() const { return size_; }
  size_t capacity() const { return capacity_; }
  size_t buckets() const { return nbuckets_; }
  size_t memory_bytes() const;
  bool tracks_last_seen() const { return seen_ != nullptr; }

 private:
  static constexpr uint32_t kMacBytes = 6;
  static constexpr uint32_t kBitsPerByte = 8;
  static constexpr uint32_t kHashSeedA = 0x2f0e1eb9;
  static constexpr uint32_t kHashSeedB = 0x8b5d7c13;
  static constexpr uint64_t kHashMix = 0x9e3779b97f4a7c15;  // odd: a bijection on 64 bits
  static constexpr uint32_t kCacheLine = 64;
  static constexpr uint32_t kHashBits = 32;

  struct alignas(kCacheLine) Bucket {
    uint64_t e[kBucketEntries];
  };
  static_assert(sizeof(Bucket) == kCacheLine);

  struct HashPair {
    uint32_t b1;
    uint32_t b2;
  };

  MacTable() = default;

  static uint16_t entry_port(uint64_t e) { return static_cast<uint16_t>((e >> kKeyBits) - 1); }
  static uint64_t make_entry(uint64_t key, uint16_t port) {
    return key | (uint64_t{static_cast<uint16_t>(port + 1)} << kKeyBits);
  }
  static bool occupied(uint64_t e) { return (e >> kKeyBits) != 0; }

  uint32_t reduce(uint32_t h) const {
    return static_cast<uint32_t>((uint64_t{h} * nbuckets_) >> kHashBits);
  }
  // Two buckets from two hashes; CRC32 is linear, so the second hashes the key multiplied by an
  // odd constant rather than under another seed (which would be the first XOR a constant).
  HashPair hash_pair(uint64_t k) const {
    const uint32_t h1 = static_cast<uint32_t>(_mm_crc32_u64(kHashSeedA, k));
    const uint32_t h2 = static_cast<uint32_t>(_mm_crc32_u64(kHashSeedB, k * kHashMix));
    const uint32_t b1 = reduce(h1);
    uint32_t b2 = reduce(h2);
    if (b2 == b1) b2 = b1 + 1 == nbuckets_ ? 0 : b1 + 1;
    return {b1, b2};
  }
  void prefetch(HashPair h) const {
    __builtin_prefetch(&buckets_[h.b1]);
    __builtin_prefetch(&buckets_[h.b2]);
  }

  // Bit i set: slot i of bucket b holds k.
  static uint32_t match_mask(const Bucket& b, uint64_t k) {
    const uint64_t want = k | (uint64_t{1} << kKeyBits);
    uint32_t mask = 0;
    for (uint32_t i = 0; i < kBucketEntries; ++i) {
      const uint64_t e = b.e[i];
      mask |= static_cast<uint32_t>(((e & kKeyMask) | (uint64_t{occupied(e)} << kKeyBits)) == want)
              << i;
    }
    return mask;
  }
  static uint32_t free_mask(const Bucket& b) {
    uint32_t mask = 0;
    for (uint32_t i = 0; i < kBucketEntries; ++i)
      mask |= static_cast<uint32_t>(!occupied(b.e[i])) << i;
    return mask;
  }

  const uint64_t* find(uint64_t k, HashPair h) const {
    const Bucket& p = buckets_[h.b1];
    const Bucket& s = buckets_[h.b2];
    const uint32_t m1 = match_mask(p, k);
    const uint32_t m2 = match_mask(s, k);
    if (m1 != 0) return &p.e[__builtin_ctz(m1)];
    if (m2 != 0) return &s.e[__builtin_ctz(m2)];
    return nullptr;
  }
  size_t slot_index(const uint64_t* e) const { return static_cast<size_t>(e - &buckets_[0].e[0]); }

  template <size_t G>
  void lookup_grouped(const uint64_t* keys, uint16_t* out, size_t n, uint32_t* last_seen) const;
  template <size_t G>
  size_t insert_grouped(const uint64_t* keys, const uint16_t* ports, size_t n, uint32_t now);

  InsertResult insert_hashed(uint64_t k, uint16_t port, uint32_t now, HashPair h);
  // Frees a slot in bucket b1 or b2 by moving entries along a cuckoo path; returns the slot index
  // that became free, or SIZE_MAX.
  size_t make_room(HashPair h);

  size_t capacity_ = 0;
  size_t size_ = 0;
  uint32_t nbuckets_ = 0;
  Bucket* buckets_ = nullptr;
  uint32_t* seen_ = nullptr;
  std::unique_ptr<TableMemory> bucket_mem_;
  std::unique_ptr<TableMemory> seen_mem_;
  std::minstd_rand rng_;
};

}  // namespace fulcrum
