// SampledLatency: the p99 a shared balancer steers by (PolicyBalancer's online latency). Each
// worker adds the RX-to-TX times of the packets its replica sampled (runtime/latency.hh,
// LatencyTap) to its own slot of cumulative bucket counts (relaxed atomics that only it writes; a
// slot is shared only past 64 workers); once per window the balancer's update merges the slots and
// reads the p99 of what arrived since its last estimate. A window with too few samples for a p99
// gives none and its samples count toward the next: the estimate then spans several windows.
//
// Buckets: 16 per power of two (LogLinearBuckets<4>), so the p99 is within 1/16 (6.25 %) of
// the true value, inside the scheduler's 10 % band; times up to 2^32 ns (4.3 s), longer ones in
// the last bucket. Counts are 32-bit and read as differences: they may wrap.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/balancing/own_counter.hh"
#include "runtime/latency.hh"

namespace fulcrum {

class SampledLatency {
 public:
  using Buckets = LogLinearBuckets<4>;
  static constexpr size_t kBuckets = Buckets::bucket(UINT32_MAX) + 1;

  struct Estimate {
    double p99_us = 0;     // 0: no estimate this window
    uint64_t samples = 0;  // behind the estimate
  };

  explicit SampledLatency(uint32_t slots)
      : slots_(slots),
        counts_(new std::atomic<uint32_t>[size_t{slots} * kBuckets]()),
        taken_(kBuckets, 0) {}

  // From worker `slot` (slot % slots); `own`: no other worker records into that slot, so the
  // count is added without a locked instruction (add_own).
  void record(uint32_t slot, uint64_t ns, bool own = false) const {
    std::atomic<uint32_t>& c = counts_[size_t{slot % slots_} * kBuckets +
                                       Buckets::bucket(std::min<uint64_t>(ns, UINT32_MAX))];
    add_own(c, 1, own);
  }

  // The p99 of the samples since the last estimate, once there are at least `min_samples`; the
  // caller serializes calls.
  Estimate take(uint64_t min_samples) {
    std::vector<uint32_t> now(kBuckets, 0);
    for (uint32_t s = 0; s < slots_; ++s)
      for (size_t b = 0; b < kBuckets; ++b)
        now[b] += counts_[size_t{s} * kBuckets + b].load(std::memory_order_relaxed);
    uint64_t samples = 0;
    for (size_t b = 0; b < kBuckets; ++b) samples += static_cast<uint32_t>(now[b] - taken_[b]);
    if (samples == 0 || samples < min_samples) return {};
    constexpr double kQuantile = 0.99, kNsPerUs = 1e3;
    const double want = kQuantile * static_cast<double>(samples);
    uint64_t seen = 0;
    double p99_ns = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      const uint32_t n = now[b] - taken_[b];
      seen += n;
      if (n != 0 && static_cast<double>(seen) >= want) {
        p99_ns = Buckets::midpoint(b);
        break;
      }
    }
    taken_ = std::move(now);
    return {p99_ns / kNsPerUs, samples};
  }

 private:
  const uint32_t slots_;
  std::unique_ptr<std::atomic<uint32_t>[]> counts_;  // [slot][bucket], cumulative
  std::vector<uint32_t> taken_;                      // merged counts at the last estimate
};

}  // namespace fulcrum
