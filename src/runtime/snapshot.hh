// Worker snapshots: what a worker has counted, copied by the worker itself at a point where its
// counters agree (after a loop iteration, transmit buffers flushed), so that a reader on another
// thread sees a consistent picture without the worker ever taking a lock.
//
// The handshake (SnapshotSlot): the control thread asks (request()), the worker answers at the
// end of its next loop iteration (serve()), writing the buffer the reader is not reading. Only
// one reader (the run's control thread) asks, and it asks again only after the last answer, so
// the worker writes buffer k % 2 while the reader may still read buffer (k - 1) % 2.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <vector>

#include "core/element.hh"
#include "core/graph.hh"

namespace fulcrum {

struct PortSnapshot {
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
};

struct NodeSnapshot {
  NodeStats stats;
  std::vector<Counter> counters;  // Element::counters
};

struct WorkerSnapshot {
  uint64_t tsc = 0;  // when it was taken
  std::vector<PortSnapshot> ports;
  uint64_t no_such_port = 0, tx_full = 0, multi_segment = 0;  // the runtime's own drops
  uint64_t pipeline_dropped = 0;                              // Pipeline::dropped
  uint64_t created = 0;                                       // Pipeline::created
  uint64_t held = 0;  // Pipeline::held: on a device, neither out nor dropped yet
  std::vector<NodeSnapshot> nodes;
};

class SnapshotSlot {
 public:
  // Reader: asks for a new snapshot; false while the last request is unanswered.
  bool request() {
    const uint64_t asked = asked_.load(std::memory_order_relaxed);
    if (served_.load(std::memory_order_acquire) != asked) return false;
    asked_.store(asked + 1, std::memory_order_release);
    return true;
  }
  // Worker: whether a request waits (one relaxed load per loop iteration).
  bool wanted() const {
    return asked_.load(std::memory_order_relaxed) != served_.load(std::memory_order_relaxed);
  }
  // Worker: the buffer to fill for the waiting request, then serve() publishes it.
  WorkerSnapshot& to_fill() { return buffers_[(served_.load(std::memory_order_relaxed) + 1) % 2]; }
  void serve() { served_.store(asked_.load(std::memory_order_acquire), std::memory_order_release); }
  // Reader: the latest answered snapshot (empty before the first answer); stays valid until
  // the reader's next request() is served.
  const WorkerSnapshot& latest() const {
    return buffers_[served_.load(std::memory_order_acquire) % 2];
  }
  // Reader: no request is outstanding (latest() is the answer to the last one).
  bool answered() const {
    return served_.load(std::memory_order_acquire) == asked_.load(std::memory_order_relaxed);
  }

 private:
  alignas(64) std::atomic<uint64_t> asked_{0};
  alignas(64) std::atomic<uint64_t> served_{0};
  std::array<WorkerSnapshot, 2> buffers_;
};

}  // namespace fulcrum
