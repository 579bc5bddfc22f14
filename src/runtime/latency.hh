// Per-packet latency, for benchmarks: RunOptions::latency makes the worker stamp every received
// packet's timestamp_ns annotation with the batch's RX time and, when the packet reaches the
// port's tx_burst, record now - timestamp_ns in a LatencyHistogram. Off by default: the RX path
// then writes nothing more than without the hook (no stamp, no private-area line).
//
// The histogram is log-linear (HDR-style): exact below 64 ns, then 32 buckets per power of two,
// so a percentile read from it is within 1/32 (3.1 %) of the true value. Recording is one
// count-leading-zeros and one increment.
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstdint>

namespace fulcrum {

// Log-linear buckets (HDR-style): exact below 2 * 2^SubBits ns, then 2^SubBits buckets per power
// of two, so a value read back as its bucket's midpoint is within 2^-SubBits of the true one.
template <uint32_t SubBits>
struct LogLinearBuckets {
  static constexpr uint64_t kSub = uint64_t{1} << SubBits;  // buckets per power of two
  static constexpr uint64_t kLinear = 2 * kSub;             // exact buckets: 0 .. kLinear - 1
  static constexpr uint32_t kMaxShift = 64 - SubBits - 1;
  static constexpr size_t kBuckets = kLinear + kMaxShift * kSub;

  static constexpr size_t bucket(uint64_t ns) {
    if (ns < kLinear) return static_cast<size_t>(ns);
    const uint32_t msb = 63 - static_cast<uint32_t>(std::countl_zero(ns));
    const uint32_t shift = msb - SubBits;
    return static_cast<size_t>(kLinear + (shift - 1) * kSub + ((ns >> shift) - kSub));
  }
  // The smallest value that falls into bucket `b`.
  static constexpr uint64_t lower_bound(size_t b) {
    if (b < kLinear) return b;
    const uint64_t shift = (b - kLinear) / kSub + 1;
    return ((b - kLinear) % kSub + kSub) << shift;
  }
  // The middle of bucket `b` (what a percentile reports).
  static constexpr double midpoint(size_t b) {
    if (b < kLinear) return static_cast<double>(b);
    const uint64_t lo = lower_bound(b);
    const uint64_t width = uint64_t{1} << ((b - kLinear) / kSub + 1);
    return static_cast<double>(lo) + static_cast<double>(width - 1) / 2;
  }
};

class LatencyHistogram {
 public:
  static constexpr uint32_t kSubBits = 5;
  using Buckets = LogLinearBuckets<kSubBits>;
  static constexpr uint64_t kSub = Buckets::kSub;
  static constexpr uint64_t kLinear = Buckets::kLinear;
  static constexpr uint32_t kMaxShift = Buckets::kMaxShift;
  static constexpr size_t kBuckets = Buckets::kBuckets;

  static size_t bucket(uint64_t ns) { return Buckets::bucket(ns); }
  static uint64_t lower_bound(size_t b) { return Buckets::lower_bound(b); }
  static double midpoint(size_t b) { return Buckets::midpoint(b); }

  void record(uint64_t ns) {
    ++counts_[bucket(ns)];
    ++samples_;
    max_ = std::max(max_, ns);
  }
  void merge(const LatencyHistogram& o) {
    for (size_t b = 0; b < kBuckets; ++b) counts_[b] += o.counts_[b];
    samples_ += o.samples_;
    max_ = std::max(max_, o.max_);
  }
  uint64_t samples() const { return samples_; }
  uint64_t max() const { return max_; }
  // The value below which a share `q` (0..1) of the samples lie, in ns; 0 without samples.
  double percentile(double q) const {
    if (samples_ == 0) return 0;
    const double want = q * static_cast<double>(samples_);
    uint64_t seen = 0;
    for (size_t b = 0; b < kBuckets; ++b) {
      seen += counts_[b];
      if (counts_[b] != 0 && static_cast<double>(seen) >= want) return midpoint(b);
    }
    return static_cast<double>(max_);
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t samples_ = 0;
  uint64_t max_ = 0;
};

// Sampled latency for a balancer (PolicyBalancer's online p99): the balancer stamps one packet of
// every few batches with its batch's RX time (timestamp_ns); when a stamped packet reaches the
// worker's transmit path, the worker records its RX-to-TX time here, and the balancer's replica
// on the same worker drains the samples on its next batch. One thread writes and reads it: no
// atomics. The worker publishes its tap in t_latency_tap while it runs and records into it only
// once a consumer has set `wanted`; the RX path clears the stamp (core/packet.hh, stamped()), so
// only stamped packets (and, with RunOptions::latency, every packet) are recorded.
struct LatencyTap {
  static constexpr uint32_t kCapacity = 256;  // samples between two drains; more are dropped
  bool wanted = false;
  double ns_per_tsc = 0;  // for stamping: timestamp_ns = rx_tsc * ns_per_tsc
  uint32_t count = 0;
  uint64_t samples[kCapacity];

  void record(uint64_t ns) {
    if (count < kCapacity) samples[count++] = ns;
  }
};

// The running worker's tap on this thread; null elsewhere (tests, the control thread).
inline thread_local LatencyTap* t_latency_tap = nullptr;

}  // namespace fulcrum
