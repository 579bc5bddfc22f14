// BoundedTable: a fixed-size, set-associative table for per-worker IDS state (thresholds per
// tracked address, flowbits per flow). Memory is allocated once: `capacity` slots (a power of two
// of at least kWays), kWays slots a bucket; when a key's bucket is full, its least recently used
// slot is taken over (an eviction, counted). No allocation and no locks on the hot path: each
// worker owns its tables.
#pragma once

#include <cstdint>
#include <vector>

namespace fulcrum::ids {

// A 64-bit mixer (the splitmix64 finalizer) for building keys' hashes.
inline uint64_t mix64(uint64_t x) {
  constexpr uint64_t kM1 = 0xbf58476d1ce4e5b9ULL, kM2 = 0x94d049bb133111ebULL;
  constexpr int kS1 = 30, kS2 = 27, kS3 = 31;
  x ^= x >> kS1;
  x *= kM1;
  x ^= x >> kS2;
  x *= kM2;
  return x ^ (x >> kS3);
}

template <class Key, class Value>
class BoundedTable {
 public:
  static constexpr uint32_t kWays = 4;

  explicit BoundedTable(uint32_t capacity) {
    uint32_t n = kWays;
    while (n < capacity) n <<= 1;
    slots_.resize(n);
    bucket_mask_ = n / kWays - 1;
  }

  // The slot holding `key`, or a fresh one (value default-constructed, `fresh` true) that takes
  // an empty slot of the key's bucket or, when it is full, its least recently used one. `index`
  // (when given) receives the slot's index in [0, capacity()), for state kept beside the table.
  Value& get(const Key& key, uint64_t hash, bool& fresh, uint32_t* index = nullptr) {
    Slot* bucket = &slots_[(hash & bucket_mask_) * kWays];
    Slot* victim = bucket;
    for (uint32_t w = 0; w < kWays; ++w) {
      Slot& s = bucket[w];
      if (s.live && s.key == key) {
        s.used = ++tick_;
        fresh = false;
        if (index != nullptr) *index = static_cast<uint32_t>(&s - slots_.data());
        return s.value;
      }
      if (!s.live) {
        if (victim->live) victim = &s;
      } else if (victim->live && s.used < victim->used) {
        victim = &s;
      }
    }
    if (victim->live) ++evictions_;
    victim->live = true;
    victim->key = key;
    victim->value = Value{};
    victim->used = ++tick_;
    fresh = true;
    if (index != nullptr) *index = static_cast<uint32_t>(victim - slots_.data());
    return victim->value;
  }

  // The slot holding `key`, or nullptr; `index` as for get. Does not count as a use.
  Value* find(const Key& key, uint64_t hash, uint32_t* index = nullptr) {
    Slot* bucket = &slots_[(hash & bucket_mask_) * kWays];
    for (uint32_t w = 0; w < kWays; ++w) {
      Slot& s = bucket[w];
      if (!s.live || !(s.key == key)) continue;
      if (index != nullptr) *index = static_cast<uint32_t>(&s - slots_.data());
      return &s.value;
    }
    return nullptr;
  }

  // Frees slot `index` (from get or find): its bucket has room again (not an eviction).
  void erase(uint32_t index) { slots_[index].live = false; }

  uint32_t capacity() const { return static_cast<uint32_t>(slots_.size()); }
  uint64_t evictions() const { return evictions_; }

 private:
  struct Slot {
    Key key{};
    Value value{};
    uint64_t used = 0;  // tick_ of the last get
    bool live = false;
  };
  std::vector<Slot> slots_;
  uint64_t bucket_mask_ = 0;
  uint64_t tick_ = 0;
  uint64_t evictions_ = 0;
};

}  // namespace fulcrum::ids
