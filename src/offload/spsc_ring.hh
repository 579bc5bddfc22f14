// SpscRing: a bounded lock-free ring for one producer thread and one consumer thread (the
// channel between a worker and a device thread). Power-of-two capacity; head and tail live on
// their own cache lines, and each side caches the other's index so a push or pop touches the
// shared line only when the cached view says full or empty.
#pragma once

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace fulcrum::offload {

inline constexpr size_t kCacheLine = 64;

template <class T>
class SpscRing {
 public:
  // Holds up to `capacity` items (rounded up to a power of two).
  explicit SpscRing(size_t capacity)
      : mask_(std::bit_ceil(capacity < 2 ? size_t{2} : capacity) - 1),
        slots_(std::make_unique<T[]>(mask_ + 1)) {}

  size_t capacity() const { return mask_ + 1; }

  // Producer side. False when full.
  bool push(T v) {
    const uint64_t t = tail_.load(std::memory_order_relaxed);
    if (t - head_cache_ > mask_) {
      head_cache_ = head_.load(std::memory_order_acquire);
      if (t - head_cache_ > mask_) return false;
    }
    slots_[t & mask_] = v;
    tail_.store(t + 1, std::memory_order_release);
    return true;
  }

  // Consumer side. False when empty.
  bool pop(T& out) {
    const uint64_t h = head_.load(std::memory_order_relaxed);
    if (h == tail_cache_) {
      tail_cache_ = tail_.load(std::memory_order_acquire);
      if (h == tail_cache_) return false;
    }
    out = slots_[h & mask_];
    head_.store(h + 1, std::memory_order_release);
    return true;
  }

 private:
  const uint64_t mask_;
  std::unique_ptr<T[]> slots_;
  alignas(kCacheLine) std::atomic<uint64_t> tail_{0};
  uint64_t head_cache_ = 0;  // producer's view of head_
  alignas(kCacheLine) std::atomic<uint64_t> head_{0};
  uint64_t tail_cache_ = 0;  // consumer's view of tail_
};

}  // namespace fulcrum::offload
