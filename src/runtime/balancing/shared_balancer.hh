// SharedBalancer: the decision that the workers feeding one device share (NBA §3.4; paper 001
// §5.2), and the system-inspector figures it is steered by: packets per second through the
// balancer, summed over the workers, the share of batches that arrived full (the input is
// backlogged: the pipeline is at its capacity) and, where the element counts bytes, the mean
// packet length. Each worker adds to its own counters (no shared
// cache line per batch); once per window, the first worker to notice the window has ended takes
// the update (try_lock: the others never wait), feeds the window to the Controller and publishes
// its choice. A worker may see a new fraction with the old device for one batch: harmless.
//
// Controller: `BalanceChoice observe(const BalanceWindow&)` and `BalanceChoice choice() const`.
#pragma once

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "runtime/balancing/own_counter.hh"
#include "runtime/balancing/sampled_latency.hh"

namespace fulcrum {

struct BalanceChoice {
  double fraction = 0;     // share of batches to the device
  int32_t device = -1;     // -1: the balancer's own DEVICE
  uint32_t aggregate = 0;  // batches per device task; 0: the offloadable elements' own
  int32_t config = -1;     // the controller's configuration (PolicyScheduler: profile point)
};

struct BalanceWindow {
  double rate_pps = 0;    // packets through the balancer per second, all workers
  double full_share = 0;  // share of the window's batches that arrived full
  // Mean length of the window's packets, bytes (count_bytes); 0 when not counted or no packet.
  double frame_bytes = 0;
  // RX-to-TX p99 of the packets sampled since the last estimate (enable_latency), 0 when the
  // balancer does not sample or too few samples have arrived yet.
  double p99_us = 0;
  uint64_t latency_samples = 0;
};

template <class Controller>
class SharedBalancer {
 public:
  static constexpr uint32_t kMaxWorkers = 64;
  static constexpr double kScale = 4294967296.0;  // thresholds are out of 2^32

  template <class... A>
  explicit SharedBalancer(uint64_t window_ns, A&&... args)
      : window_ns_(window_ns), controller_(std::forward<A>(args)...) {
    publish(controller_.choice());
  }

  // A counter slot for one worker. Up to kMaxWorkers workers, each has its own, written without
  // a locked instruction (add_own); past that, slots are shared (slot % kMaxWorkers) and every
  // worker adds with one, still exact. (A replica attaching while others count, as the 65th,
  // switches them on their next count; a count racing that switch may be lost: a window's
  // statistics, never a packet.)
  uint32_t attach() const { return next_slot_.fetch_add(1, std::memory_order_relaxed); }
  // No two workers share a slot (at most kMaxWorkers attached).
  bool own_slots() const { return next_slot_.load(std::memory_order_relaxed) <= kMaxWorkers; }
  void count(uint32_t slot, uint64_t packets, uint64_t bytes, bool full) const {
    Slot& s = slots_[slot % kMaxWorkers];
    const bool own = own_slots();
    add_own(s.packets, packets, own);
    if (bytes != 0) add_own(s.bytes, bytes, own);
    add_own(s.batches, 1, own);
    if (full) add_own(s.full, 1, own);
  }
  // Sampled latency (SampledLatency), before any worker runs: each worker samples one packet in
  // every `every` of its batches, and a window's p99 needs at least `min_samples` samples (fewer:
  // they count toward the next window's). With `target_samples`, each window sets the interval
  // instead (from 1 before the first) so that the next gets about that many: one packet in every
  // (the window's batches, all workers / target) batches per worker.
  void enable_latency(uint64_t min_samples, uint32_t every, uint64_t target_samples = 0) {
    latency_ = std::make_unique<SampledLatency>(kMaxWorkers);
    min_latency_samples_ = min_samples;
    target_latency_samples_ = target_samples;
    sample_every_.store(target_samples != 0 ? 1 : std::max(every, 1u), std::memory_order_relaxed);
  }
  bool samples_latency() const { return latency_ != nullptr; }
  // Batches per sampled packet on each worker (enable_latency); the replicas read it with the
  // clock.
  uint32_t sample_every() const { return sample_every_.load(std::memory_order_relaxed); }
  // One sampled packet's RX-to-TX time, from worker `slot`.
  void record_latency(uint32_t slot, uint64_t ns) const {
    if (latency_) latency_->record(slot, ns, own_slots());
  }
  // Draw threshold for the device, out of 2^32.
  uint64_t threshold() const { return threshold_.load(std::memory_order_relaxed); }
  int32_t device() const { return device_.load(std::memory_order_relaxed); }
  uint32_t aggregate() const { return aggregate_.load(std::memory_order_relaxed); }
  // Call now and then with the time; updates when a window has ended.
  void tick(uint64_t now_ns) const {
    if (now_ns >= next_ns_.load(std::memory_order_relaxed)) update(now_ns);
  }

  // Keeps every window from now on (the balancers' TRACE).
  void enable_trace() const {
    std::lock_guard lock(mu_);
    tracing_ = true;
  }
  struct TracePoint {
    double t_s = 0;  // since the first window began
    BalanceWindow window;
    BalanceChoice choice;  // made at the end of the window
  };
  std::vector<TracePoint> trace() const {
    std::lock_guard lock(mu_);
    return trace_;
  }

  // f(controller, last window, windows so far), under the lock (counters, reports).
  template <class F>
  auto inspect(F&& f) const {
    std::lock_guard lock(mu_);
    return f(static_cast<const Controller&>(controller_), last_, windows_);
  }

 private:
  void publish(const BalanceChoice& c) const {
    threshold_.store(
        c.fraction >= 1 ? uint64_t{1} << 32 : static_cast<uint64_t>(c.fraction * kScale),
        std::memory_order_relaxed);
    device_.store(c.device, std::memory_order_relaxed);
    aggregate_.store(c.aggregate, std::memory_order_relaxed);
  }

  void update(uint64_t now_ns) const {
    std::unique_lock lock(mu_, std::try_to_lock);
    if (!lock.owns_lock() || now_ns < next_ns_.load(std::memory_order_relaxed)) return;
    uint64_t packets = 0, batches = 0, full = 0, bytes = 0;
    for (const Slot& s : slots_) {
      packets += s.packets.load(std::memory_order_relaxed);
      bytes += s.bytes.load(std::memory_order_relaxed);
      batches += s.batches.load(std::memory_order_relaxed);
      full += s.full.load(std::memory_order_relaxed);
    }
    if (last_ns_ != 0 && now_ns > last_ns_) {
      const uint64_t window_batches = batches - last_batches_;
      const uint64_t window_packets = packets - last_packets_;
      last_.frame_bytes = window_packets > 0 ? static_cast<double>(bytes - last_bytes_) /
                                                   static_cast<double>(window_packets)
                                             : 0;
      last_.rate_pps = static_cast<double>(packets - last_packets_) * 1e9 /
                       static_cast<double>(now_ns - last_ns_);
      last_.full_share = window_batches > 0 ? static_cast<double>(full - last_full_) /
                                                  static_cast<double>(window_batches)
                                            : 0;
      if (latency_) {
        const SampledLatency::Estimate e = latency_->take(min_latency_samples_);
        last_.p99_us = e.p99_us;
        last_.latency_samples = e.samples;
        if (target_latency_samples_ != 0)
          sample_every_.store(static_cast<uint32_t>(std::clamp<uint64_t>(
                                  window_batches / target_latency_samples_, 1, kMaxSampleEvery)),
                              std::memory_order_relaxed);
      }
      ++windows_;
      const BalanceChoice c = controller_.observe(last_);
      publish(c);
      if (tracing_) trace_.push_back({static_cast<double>(now_ns - first_ns_) / 1e9, last_, c});
    } else {
      first_ns_ = now_ns;
    }
    last_ns_ = now_ns;
    last_packets_ = packets;
    last_batches_ = batches;
    last_full_ = full;
    last_bytes_ = bytes;
    next_ns_.store(now_ns + window_ns_, std::memory_order_relaxed);
  }

  // Shared by the workers through SharedStorage (which hands out const objects): every member is
  // an atomic or guarded by mu_.
  struct alignas(64) Slot {
    std::atomic<uint64_t> packets{0}, batches{0}, full{0}, bytes{0};
  };
  mutable std::array<Slot, kMaxWorkers> slots_;
  mutable std::atomic<uint32_t> next_slot_{0};
  alignas(64) mutable std::atomic<uint64_t> threshold_{0};
  mutable std::atomic<int32_t> device_{-1};
  mutable std::atomic<uint32_t> aggregate_{0};
  mutable std::atomic<uint64_t> next_ns_{0};
  mutable std::atomic<uint32_t> sample_every_{1};
  static constexpr uint64_t kMaxSampleEvery = 1u << 16;
  const uint64_t window_ns_;
  mutable std::mutex mu_;  // the fields below
  mutable Controller controller_;
  mutable uint64_t last_ns_ = 0, last_packets_ = 0, last_batches_ = 0, last_full_ = 0,
                   last_bytes_ = 0;
  mutable BalanceWindow last_;
  mutable uint64_t windows_ = 0;
  mutable uint64_t first_ns_ = 0;
  mutable bool tracing_ = false;
  mutable std::vector<TracePoint> trace_;
  std::unique_ptr<SampledLatency> latency_;  // counts: relaxed atomics; estimates: under mu_
  uint64_t min_latency_samples_ = 0;
  uint64_t target_latency_samples_ = 0;  // 0: the interval stays enable_latency's `every`
};

}  // namespace fulcrum
