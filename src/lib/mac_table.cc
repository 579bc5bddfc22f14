#include "lib/mac_table.hh"

#include <cmath>
#include <cstdint>
#include <string>

namespace fulcrum {
namespace {

constexpr size_t kNoSlot = SIZE_MAX;
constexpr uint32_t kMinBuckets = 2;

}  // namespace

Result<std::unique_ptr<MacTable>> MacTable::create(size_t capacity, bool track_last_seen,
                                                   const char* name) {
  if (capacity == 0 || capacity > kMaxCapacity)
    return make_error("MAC table capacity must be 1.." + std::to_string(kMaxCapacity) + ", got " +
                      std::to_string(capacity));
  std::unique_ptr<MacTable> t(new MacTable());
  const double per_bucket = kBucketEntries * kMaxLoad;
  t->nbuckets_ = std::max(kMinBuckets, static_cast<uint32_t>(std::ceil(capacity / per_bucket)));
  t->capacity_ = capacity;
  const size_t slots = size_t{t->nbuckets_} * kBucketEntries;
  t->bucket_mem_ = TableMemory::allocate(size_t{t->nbuckets_} * sizeof(Bucket), name);
  if (t->bucket_mem_ == nullptr)
    return make_error("out of memory for a MAC table of " + std::to_string(capacity) + " entries");
  t->buckets_ = static_cast<Bucket*>(t->bucket_mem_->data());
  if (track_last_seen) {
    t->seen_mem_ = TableMemory::allocate(slots * sizeof(uint32_t), name);
    if (t->seen_mem_ == nullptr)
      return make_error("out of memory for the last-seen times of a MAC table");
    t->seen_ = static_cast<uint32_t*>(t->seen_mem_->data());
  }
  return t;
}

size_t MacTable::memory_bytes() const {
  return (bucket_mem_ ? bucket_mem_->size() : 0) + (seen_mem_ ? seen_mem_->size() : 0);
}

bool MacTable::lookup(uint64_t key, uint16_t& port, uint32_t& last_seen) const {
  const uint64_t k = key & kKeyMask;
  const uint64_t* e = find(k, hash_pair(k));
  if (e == nullptr) return false;
  port = entry_port(*e);
  last_seen = seen_ != nullptr ? seen_[slot_index(e)] : 0;
  return true;
}

// Two passes per group: the primary buckets of the next group are prefetched while this group
// is resolved from its primary buckets; the keys not found there prefetch their secondary
// bucket, which the second pass reads. One cache line per lookup when the key sits in its
// primary bucket (most do), instead of two.
void MacTable::lookup_bulk(const uint64_t* keys, uint16_t* out, size_t n,
                           uint32_t* last_seen) const {
  lookup_grouped<kPrefetchGroup>(keys, out, n, last_seen);
}

void MacTable::lookup_bulk(const uint64_t* keys, uint16_t* out, size_t n, uint32_t* last_seen,
                           unsigned group) const {
  with_prefetch_group<kPrefetchGroup>(
      group, [&](auto g) { lookup_grouped<decltype(g)::value>(keys, out, n, last_seen); });
}

template <size_t G>
void MacTable::lookup_grouped(const uint64_t* keys, uint16_t* out, size_t n,
                              uint32_t* last_seen) const {
  constexpr size_t kPrefetchGroup = G;
  HashPair hp[2][kPrefetchGroup];
  auto stage = [&](HashPair* dst, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) {
      dst[j - begin] = hash_pair(keys[j] & kKeyMask);
      __builtin_prefetch(&buckets_[dst[j - begin].b1]);
    }
  };
  auto resolve = [&](size_t j, const uint64_t* e) {
    out[j] = e == nullptr ? kNotFound : entry_port(*e);
    if (last_seen != nullptr && seen_ != nullptr && e != nullptr)
      last_seen[j] = seen_[slot_index(e)];
  };
  stage(hp[0], 0, std::min(n, kPrefetchGroup));
  for (size_t i = 0, g = 0; i < n; i += kPrefetchGroup, g ^= 1) {
    const size_t end = std::min(n, i + kPrefetchGroup);
    stage(hp[g ^ 1], end, std::min(n, end + kPrefetchGroup));
    uint8_t missed[kPrefetchGroup];
    size_t nmissed = 0;
    for (size_t j = i; j < end; ++j) {
      const Bucket& p = buckets_[hp[g][j - i].b1];
      const uint32_t m = match_mask(p, keys[j] & kKeyMask);
      if (m != 0) {
        resolve(j, &p.e[__builtin_ctz(m)]);
      } else {
        __builtin_prefetch(&buckets_[hp[g][j - i].b2]);
        missed[nmissed++] = static_cast<uint8_t>(j - i);
      }
    }
    for (size_t k = 0; k < nmissed; ++k) {
      const size_t j = i + missed[k];
      const Bucket& s = buckets_[hp[g][missed[k]].b2];
      const uint32_t m = match_mask(s, keys[j] & kKeyMask);
      resolve(j, m != 0 ? &s.e[__builtin_ctz(m)] : nullptr);
    }
  }
}

size_t MacTable::insert_bulk(const uint64_t* keys, const uint16_t* ports, size_t n, uint32_t now) {
  return insert_grouped<kPrefetchGroup>(keys, ports, n, now);
}

size_t MacTable::insert_bulk(const uint64_t* keys, const uint16_t* ports, size_t n, uint32_t now,
                             unsigned group) {
  return with_prefetch_group<kPrefetchGroup>(
      group, [&](auto g) { return insert_grouped<decltype(g)::value>(keys, ports, n, now); });
}

template <size_t G>
size_t MacTable::insert_grouped(const uint64_t* keys, const uint16_t* ports, size_t n,
                                uint32_t now) {
  constexpr size_t kPrefetchGroup = G;
  HashPair hp[2][kPrefetchGroup];
  auto stage = [&](HashPair* dst, size_t begin, size_t end) {
    for (size_t j = begin; j < end; ++j) {
      dst[j - begin] = hash_pair(keys[j] & kKeyMask);
      prefetch(dst[j - begin]);
    }
  };
  stage(hp[0], 0, std::min(n, kPrefetchGroup));
  size_t failed = 0;
  for (size_t i = 0, g = 0; i < n; i += kPrefetchGroup, g ^= 1) {
    const size_t end = std::min(n, i + kPrefetchGroup);
    stage(hp[g ^ 1], end, std::min(n, end + kPrefetchGroup));
    for (size_t j = i; j < end; ++j)
      failed +=
          insert_hashed(keys[j] & kKeyMask, ports[j], now, hp[g][j - i]) == InsertResult::kFull;
  }
  return failed;
}

MacTable::InsertResult MacTable::insert_hashed(uint64_t k, uint16_t port, uint32_t now,
                                               HashPair h) {
  if (port > kMaxPort) return InsertResult::kFull;
  if (const uint64_t* found = find(k, h); found != nullptr) {
    uint64_t* e = const_cast<uint64_t*>(found);
    InsertResult r = InsertResult::kUnchanged;
    if (entry_port(*e) != port) {
      *e = make_entry(k, port);
      r = InsertResult::kUpdated;
    }
    if (seen_ != nullptr) seen_[slot_index(e)] = now;
    return r;
  }
  if (size_ >= capacity_) return InsertResult::kFull;
  const uint32_t free1 = free_mask(buckets_[h.b1]);
  const uint32_t free2 = free_mask(buckets_[h.b2]);
  size_t slot = kNoSlot;
  // The emptier bucket: keeps the two candidates balanced, so cuckoo moves stay rare.
  if (free1 != 0 && __builtin_popcount(free1) >= __builtin_popcount(free2))
    slot = size_t{h.b1} * kBucketEntries + __builtin_ctz(free1);
  else if (free2 != 0)
    slot = size_t{h.b2} * kBucketEntries + __builtin_ctz(free2);
  else
    slot = make_room(h);
  if (slot == kNoSlot) return InsertResult::kFull;
  buckets_[slot / kBucketEntries].e[slot % kBucketEntries] = make_entry(k, port);
  if (seen_ != nullptr) seen_[slot] = now;
  ++size_;
  return InsertResult::kInserted;
}

size_t MacTable::make_room(HashPair h) {
  uint32_t path_bucket[kMaxKicks];
  uint32_t path_slot[kMaxKicks];
  auto on_path = [&](uint32_t depth, uint32_t b, uint32_t s) {
    for (uint32_t i = 0; i < depth; ++i)
      if (path_bucket[i] == b && path_slot[i] == s) return true;
    return false;
  };
  uint32_t cur = (rng_() & 1) != 0 ? h.b1 : h.b2;
  for (uint32_t depth = 0; depth < kMaxKicks; ++depth) {
    uint32_t slot = static_cast<uint32_t>(rng_() % kBucketEntries);
    uint32_t tries = 0;
    while (on_path(depth, cur, slot) && tries < kBucketEntries) {
      slot = (slot + 1) % kBucketEntries;
      ++tries;
    }
    if (tries == kBucketEntries) return kNoSlot;
    path_bucket[depth] = cur;
    path_slot[depth] = slot;
    const HashPair vh = hash_pair(buckets_[cur].e[slot] & kKeyMask);
    const uint32_t alt = vh.b1 == cur ? vh.b2 : vh.b1;
    const uint32_t free_alt = free_mask(buckets_[alt]);
    if (free_alt == 0) {
      cur = alt;
      continue;
    }
    // Apply the path from its end: each entry moves into the slot its successor vacated.
    size_t to = size_t{alt} * kBucketEntries + __builtin_ctz(free_alt);
    for (uint32_t i = depth + 1; i-- > 0;) {
      const size_t from = size_t{path_bucket[i]} * kBucketEntries + path_slot[i];
      buckets_[to / kBucketEntries].e[to % kBucketEntries] =
          buckets_[from / kBucketEntries].e[from % kBucketEntries];
      if (seen_ != nullptr) seen_[to] = seen_[from];
      to = from;
    }
    buckets_[to / kBucketEntries].e[to % kBucketEntries] = 0;
    return to;
  }
  return kNoSlot;
}

bool MacTable::erase(uint64_t key) {
  const uint64_t k = key & kKeyMask;
  const uint64_t* e = find(k, hash_pair(k));
  if (e == nullptr) return false;
  *const_cast<uint64_t*>(e) = 0;
  --size_;
  return true;
}

size_t MacTable::expire(uint32_t before) {
  if (seen_ == nullptr) return 0;
  size_t erased = 0;
  for (uint32_t b = 0; b < nbuckets_; ++b) {
    for (uint32_t i = 0; i < kBucketEntries; ++i) {
      uint64_t& e = buckets_[b].e[i];
      if (occupied(e) && seen_[size_t{b} * kBucketEntries + i] < before) {
        e = 0;
        ++erased;
      }
    }
  }
  size_ -= erased;
  return erased;
}

}  // namespace fulcrum
