// Worker: one core's run-to-completion loop. Polls its RX queues, runs each burst through its
// pipeline replica, and transmits through per-port buffers (it is the pipeline's PacketSink).
#pragma once

#include <atomic>
#include <memory>
#include <vector>

#include "core/graph.hh"
#include "core/table_slot.hh"
#include "io/port.hh"
#include "runtime/latency.hh"
#include "runtime/rcu.hh"
#include "runtime/snapshot.hh"
#include "runtime/stats.hh"

namespace fulcrum {

// The longest frame a worker linearises (DPDK's RTE_ETHER_MAX_JUMBO_FRAME_LEN, the longest the
// pcap driver reads): frames that arrive as mbuf chains are copied into one jumbo buffer of this
// size, longer ones dropped (runtime/multi-segment).
inline constexpr uint32_t kMaxLinearFrame = 16128;
// A jumbo buffer's data room: the frame plus the headroom elements prepend headers into.
inline constexpr uint16_t kJumboDataRoom = kMaxLinearFrame + RTE_PKTMBUF_HEADROOM;
inline constexpr unsigned kJumboPoolSize = 511;

// `m` (a chain of segments) copied into one buffer of `pool`, its chain freed; nullptr (`m` freed)
// when the frame is longer than kMaxLinearFrame or `pool` has no free buffer.
Packet* linearize(Packet* m, rte_mempool* pool);

struct RxQueue {
  uint16_t port;
  uint16_t queue;
};

class Worker final : public PacketSink {
 public:
  Worker(int id, std::vector<Port*> ports, std::vector<RxQueue> rx, uint32_t burst);

  void set_pipeline(std::unique_ptr<Pipeline> p) { pipeline_ = std::move(p); }
  // Buffers for frames that arrive in several segments (linearize).
  void set_jumbo_pool(rte_mempool* pool) { jumbo_pool_ = pool; }
  // The worker is reader (its worker index) of `rcu` (hot reload, runtime/reload.hh): online
  // while it runs, a quiescent point after every loop iteration.
  void set_rcu(Rcu* rcu) { rcu_ = rcu; }
  // Stamp packets at RX and record their RX-to-TX time (runtime/latency.hh).
  void enable_latency() { latency_ = std::make_unique<LatencyHistogram>(); }
  const LatencyHistogram* latency() const { return latency_.get(); }
  Pipeline& pipeline() { return *pipeline_; }

  // Runs until `stop` is set or the shared packet budget (if any) is spent.
  void run(const std::atomic<bool>& stop, std::atomic<int64_t>* budget);
  void transmit(PacketBatch& batch) override;

  const std::vector<PortCounters>& port_counters() const { return port_counters_; }
  uint64_t drops_no_such_port() const { return no_such_port_.get(); }
  uint64_t drops_tx_full() const { return tx_full_.get(); }
  uint64_t drops_multi_segment() const { return multi_segment_.get(); }
  // Beats once per loop (core/heartbeat.hh); the watchdog reads it.
  uint64_t heartbeat() const { return heartbeat_.load(std::memory_order_relaxed); }
  bool finished() const { return finished_.load(std::memory_order_acquire); }
  // What the worker has counted, copied into `out` (vectors reused). The worker calls it to answer
  // snapshot requests; any thread may call it once finished() is true.
  void fill_snapshot(WorkerSnapshot& out) const;
  // Where the control thread asks for snapshots while the worker runs (runtime/snapshot.hh).
  SnapshotSlot& snapshots() { return snapshots_; }
  // TSC at the start and end of run(), for exact rates.
  uint64_t start_tsc() const { return start_tsc_; }
  uint64_t end_tsc() const { return end_tsc_; }
  // CPU time this worker's thread got in run() (WorkerReport::cpu_s).
  double cpu_s() const { return cpu_s_; }
  // TSC cycles spent sending what was left in transmit buffers at the end of a loop iteration
  // (WorkerReport::tx_flush_cycles): transmit work outside every element's cycles.
  uint64_t tx_flush_cycles() const { return tx_flush_cycles_; }
  // TSC cycles of the loop iterations that received or dequeued packets, counted only on a
  // worker with deferred packets (a later stage of a pipelined placement, an offload's results;
  // WorkerReport::busy_cycles): its work per packet without its idle polls.
  uint64_t busy_cycles() const { return busy_cycles_; }

 private:
  struct TxBuffer {
    uint16_t queue = 0;
    uint32_t count = 0;
    uint64_t bytes = 0;
    bool stamped = false;  // a stamped packet (core/packet.hh) is buffered
    Packet* pkts[2 * kMaxBatch];
  };

  uint16_t receive(const RxQueue& rxq, PacketBatch& batch, std::atomic<int64_t>* budget);
  void flush(uint16_t port);
  // tx_burst of `pkts` (`bytes` in all; retried kTxRetries times, what the port refuses is freed
  // as tx-full), the per-port counters, and the RX-to-TX times of stamped packets.
  void send(uint16_t port, Packet** pkts, uint32_t n, bool stamped, uint64_t bytes);
  void flush_all();
  // Answers a waiting snapshot request (after flush_all: nothing sits in a transmit buffer).
  void answer_snapshot();
  // Between batches: no table pointer is held (RCU quiescent point).
  void quiescent() {
    ++t_table_epoch;
    if (rcu_ != nullptr) rcu_->quiescent(static_cast<unsigned>(id_));
  }

  int id_;
  std::vector<Port*> ports_;
  std::vector<RxQueue> rx_;
  uint32_t burst_;
  std::unique_ptr<Pipeline> pipeline_;
  std::vector<TxBuffer> tx_;
  std::vector<PortCounters> port_counters_;
  LiveCounter no_such_port_, tx_full_, multi_segment_;
  rte_mempool* jumbo_pool_ = nullptr;
  std::atomic<uint64_t> heartbeat_{0};
  uint64_t batch_seq_ = 0;
  std::unique_ptr<LatencyHistogram> latency_;
  LatencyTap tap_;  // sampled latency for a balancer on this worker (t_latency_tap)
  double ns_per_tsc_ = 0;
  uint64_t start_tsc_ = 0, end_tsc_ = 0;
  double cpu_s_ = 0;
  uint64_t tx_flush_cycles_ = 0, busy_cycles_ = 0;
  std::atomic<bool> finished_{false};
  SnapshotSlot snapshots_;
  Rcu* rcu_ = nullptr;
};

}  // namespace fulcrum
