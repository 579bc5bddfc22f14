// SharedFraction: the offload fraction that the workers feeding one device share (NBA §3.4), and
// the system-inspector figure it is steered by: packets per second through the balancer, summed
// over the workers. Each worker adds to its own counter (no shared cache line per batch); once
// per window, the first worker to notice the window has ended takes the update (try_lock: the
// others never wait), feeds the window's rate to the HillClimber and publishes the new fraction.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "runtime/balancing/hill_climber.hh"

namespace fulcrum {

class SharedFraction {
 public:
  static constexpr uint32_t kMaxWorkers = 64;
  static constexpr double kScale = 4294967296.0;  // thresholds are out of 2^32

  SharedFraction(const HillClimbConfig& config, uint64_t window_ns);

  // A counter slot for one worker, kMaxWorkers at most (then slots are shared, still exact).
  uint32_t attach() const {
    return next_slot_.fetch_add(1, std::memory_order_relaxed) % kMaxWorkers;
  }
  void count(uint32_t slot, uint64_t packets) const {
    slots_[slot].packets.fetch_add(packets, std::memory_order_relaxed);
  }
  // Draw threshold for the device, out of 2^32.
  uint64_t threshold() const { return threshold_.load(std::memory_order_relaxed); }
  // Call now and then with the time; updates when a window has ended.
  void tick(uint64_t now_ns) const {
    if (now_ns >= next_ns_.load(std::memory_order_relaxed)) update(now_ns);
  }

  // Keeps every window's (time, w, rate) from now on (AdaptiveBalancer's TRACE).
  void enable_trace() const {
    std::lock_guard lock(mu_);
    tracing_ = true;
  }
  struct TracePoint {
    double t_s = 0;       // since the first window began
    double fraction = 0;  // w chosen at the end of the window
    double rate = 0;      // packets per second in the window
  };
  std::vector<TracePoint> trace() const {
    std::lock_guard lock(mu_);
    return trace_;
  }

  struct Snapshot {
    double fraction = 0;
    double last_rate = 0;  // packets per second in the last window
    uint64_t windows = 0, moves = 0, reversals = 0, reprobes = 0;
    uint32_t wait = 0;
  };
  Snapshot snapshot() const;

 private:
  void update(uint64_t now_ns) const;

  // Shared by the workers through SharedStorage (which hands out const objects): every member is
  // an atomic or guarded by mu_.
  struct alignas(64) Slot {
    std::atomic<uint64_t> packets{0};
  };
  mutable std::array<Slot, kMaxWorkers> slots_;
  mutable std::atomic<uint32_t> next_slot_{0};
  alignas(64) mutable std::atomic<uint64_t> threshold_{0};
  mutable std::atomic<uint64_t> next_ns_{0};
  const uint64_t window_ns_;
  mutable std::mutex mu_;  // the fields below
  mutable HillClimber climber_;
  mutable uint64_t last_ns_ = 0;
  mutable uint64_t last_packets_ = 0;
  mutable double last_rate_ = 0;
  mutable uint64_t windows_ = 0;
  mutable uint64_t first_ns_ = 0;
  mutable bool tracing_ = false;
  mutable std::vector<TracePoint> trace_;
};

}  // namespace fulcrum
