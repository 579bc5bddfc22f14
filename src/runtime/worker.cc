#include "runtime/worker.hh"

#include <rte_cycles.h>
#include <rte_pause.h>

#include <cstring>
#include <thread>

#include "core/heartbeat.hh"
#include "core/thread_clock.hh"

namespace fulcrum {
namespace {

constexpr int kTxRetries = 8;

}  // namespace

Packet* linearize(Packet* m, rte_mempool* pool) {
  Packet* j = pool == nullptr || m->pkt_len > kMaxLinearFrame ? nullptr : rte_pktmbuf_alloc(pool);
  char* dst = j == nullptr ? nullptr : rte_pktmbuf_append(j, static_cast<uint16_t>(m->pkt_len));
  if (dst == nullptr) {
    if (j != nullptr) rte_pktmbuf_free(j);
    rte_pktmbuf_free(m);
    return nullptr;
  }
  const void* src = rte_pktmbuf_read(m, 0, m->pkt_len, dst);
  if (src != dst) std::memcpy(dst, src, m->pkt_len);
  j->port = m->port;
  j->hash = m->hash;
  j->ol_flags = m->ol_flags & RTE_MBUF_F_RX_RSS_HASH;
  j->packet_type = m->packet_type;
  rte_pktmbuf_free(m);
  return j;
}

Worker::Worker(int id, std::vector<Port*> ports, std::vector<RxQueue> rx, uint32_t burst)
    : id_(id),
      ports_(std::move(ports)),
      rx_(std::move(rx)),
      burst_(burst),
      tx_(ports_.size()),
      port_counters_(ports_.size()),
      ns_per_tsc_(1e9 / static_cast<double>(rte_get_tsc_hz())) {
  for (size_t p = 0; p < ports_.size(); ++p) {
    const uint16_t txq = ports_[p]->tx_queues();
    tx_[p].queue = txq == 0 ? 0 : static_cast<uint16_t>(id_ % txq);
  }
}

uint16_t Worker::receive(const RxQueue& rxq, PacketBatch& batch, std::atomic<int64_t>* budget) {
  uint16_t want = static_cast<uint16_t>(burst_);
  if (budget != nullptr) {
    const int64_t left = budget->fetch_sub(want, std::memory_order_relaxed);
    if (left <= 0) {
      budget->fetch_add(want, std::memory_order_relaxed);
      return 0;
    }
    if (left < want) {
      budget->fetch_add(want - left, std::memory_order_relaxed);
      want = static_cast<uint16_t>(left);
    }
  }
  Packet** pkts = batch.data();
  const uint16_t n = ports_[rxq.port]->rx_burst(rxq.queue, pkts, want);
  if (budget != nullptr && n < want) budget->fetch_add(want - n, std::memory_order_relaxed);
  if (n == 0) return 0;
  // The batch's RX time is the clock read that starts its first element's cycles
  // (Pipeline::inject): one read a batch, not two (rdtsc alone was ~3 % of an echo's time). With
  // RunOptions::latency the packets are stamped here, with a read of their own.
  const uint64_t rx_tsc = latency_ ? rte_rdtsc() : 0;
  const uint64_t rx_ns =
      latency_ ? static_cast<uint64_t>(static_cast<double>(rx_tsc) * ns_per_tsc_) : 0;
  // One pass: bytes and the annotations (two stores into the mbuf's first line). Frames larger
  // than one mbuf arrive as chains: elements see one contiguous frame, copied into a jumbo
  // buffer (which takes the annotations with it), or the frame is dropped (multi-segment) when
  // it cannot be; that second pass runs only when a chain came in.
  uint64_t bytes = 0;
  uint16_t segs = 0;  // the segment counts ORed: above 1 when any packet is a chain
  for (uint16_t i = 0; i < n; ++i) {
    Packet* m = pkts[i];
    bytes += m->pkt_len;
    segs |= m->nb_segs;
    set_rx_anno(m, rxq.port, (m->ol_flags & RTE_MBUF_F_RX_RSS_HASH) != 0 ? m->hash.rss : 0);
  }
  uint16_t kept = n;
  if (segs > 1) [[unlikely]] {
    kept = 0;
    for (uint16_t i = 0; i < n; ++i) {
      Packet* m = pkts[i];
      if (m->nb_segs > 1 && (m = linearize(m, jumbo_pool_)) == nullptr) {
        multi_segment_.add(1);
        continue;
      }
      pkts[kept++] = m;
    }
  }
  if (rx_ns != 0) [[unlikely]]
    for (uint16_t i = 0; i < kept; ++i) set_timestamp_ns(pkts[i], rx_ns);
  PortCounters& c = port_counters_[rxq.port];
  c.rx_packets.add(n);
  c.rx_bytes.add(bytes);
  if (kept == 0) return 0;
  batch.set_count(kept);
  BatchAnno& a = batch.anno();
  a = BatchAnno{};
  a.in_port = rxq.port;
  a.in_queue = rxq.queue;
  a.batch_id = batch_seq_++;
  a.rx_tsc = rx_tsc;
  return kept;
}

void Worker::transmit(PacketBatch& batch) {
  // Most batches leave through one port (an echo, any pipeline that does not route): the batch
  // then goes to the port whole, from the batch's own array when the port's buffer is empty. Per
  // packet, the buffer's count and byte total live in memory, and the load-add-store chain
  // through them was most of the transmit path's time (perf annotate, L2 echo). Whether the batch
  // has one port, and its bytes, come from the element before (TxSummary, learnt in its own
  // pass), or from one pass here without a branch per packet.
  const auto nports = static_cast<uint16_t>(ports_.size());
  const auto put = [&](uint16_t port, Packet* p) {
    if (port >= nports) {
      rte_pktmbuf_free(p);
      no_such_port_.add(1);
      return;
    }
    TxBuffer& tb = tx_[port];
    tb.stamped |= stamped(p);
    tb.pkts[tb.count++] = p;
    tb.bytes += p->pkt_len;
    if (tb.count >= burst_) flush(port);
  };
  const uint32_t n = batch.count();
  if (n > 0 && !batch.has_mask()) {
    Packet** pkts = batch.data();
    TxSummary sum;
    if (const TxSummary* s = batch.tx_summary())
      sum = *s;
    else
      for (uint32_t i = 0; i < n; ++i) sum.add(pkts[i]);
    // Only latency measurement reads the stamps (send); without it no pass looks for them.
    bool stamps = false;
    if (latency_ || tap_.wanted) [[unlikely]]
      for (uint32_t i = 0; i < n; ++i) stamps |= stamped(pkts[i]);
    const uint16_t port = sum.port_or;
    TxBuffer* tb = sum.one_port() && port < nports ? &tx_[port] : nullptr;
    if (tb != nullptr && tb->count + n <= burst_) {
      if (tb->count == 0 && n == burst_) {
        send(port, pkts, n, stamps, sum.bytes);
      } else {
        std::memcpy(tb->pkts + tb->count, pkts, n * sizeof(Packet*));
        tb->count += n;
        tb->bytes += sum.bytes;
        tb->stamped |= stamps;
        if (tb->count == burst_) flush(port);
      }
    } else {
      // Several ports, or more than the port's buffer holds: packet by packet.
      for (uint32_t k = 0; k < n; ++k) put(effective_out_port(pkts[k]), pkts[k]);
    }
    batch.set_count(0);
    return;
  }
  batch.for_each([&](uint32_t, Packet* p) { put(effective_out_port(p), p); });
  batch.set_count(0);
}

void Worker::flush(uint16_t port) {
  TxBuffer& tb = tx_[port];
  if (tb.count == 0) return;
  send(port, tb.pkts, tb.count, tb.stamped, tb.bytes);
  tb.stamped = false;
  tb.count = 0;
  tb.bytes = 0;
}

void Worker::send(uint16_t port, Packet** pkts, uint32_t n, bool stamped, uint64_t bytes) {
  if (stamped && (latency_ || tap_.wanted)) {
    const auto now_ns = static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc_);
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t rx_ns = timestamp_ns(pkts[i]);
      if (rx_ns == 0 || rx_ns > now_ns) continue;
      if (latency_) latency_->record(now_ns - rx_ns);
      if (tap_.wanted) tap_.record(now_ns - rx_ns);
    }
  }
  const uint16_t queue = tx_[port].queue;
  uint32_t sent = 0;
  for (int attempt = 0; attempt < kTxRetries && sent < n; ++attempt)
    sent += ports_[port]->tx_burst(queue, pkts + sent, static_cast<uint16_t>(n - sent));
  if (sent < n) {
    for (uint32_t i = sent; i < n; ++i) bytes -= pkts[i]->pkt_len;
    rte_pktmbuf_free_bulk(pkts + sent, n - sent);
    tx_full_.add(n - sent);
  }
  PortCounters& c = port_counters_[port];
  c.tx_packets.add(sent);
  c.tx_bytes.add(bytes);
}

void Worker::flush_all() {
  const auto nports = static_cast<uint16_t>(ports_.size());
  uint16_t first = 0;
  while (first < nports && tx_[first].count == 0) ++first;
  if (first == nports) return;
  const uint64_t t0 = rte_rdtsc();
  for (uint16_t p = first; p < nports; ++p) flush(p);
  tx_flush_cycles_ += rte_rdtsc() - t0;
}

void Worker::fill_snapshot(WorkerSnapshot& out) const {
  out.tsc = rte_rdtsc();
  out.ports.resize(port_counters_.size());
  for (size_t p = 0; p < port_counters_.size(); ++p) {
    const PortCounters& c = port_counters_[p];
    out.ports[p] =
        PortSnapshot{c.rx_packets.get(), c.rx_bytes.get(), c.tx_packets.get(), c.tx_bytes.get()};
  }
  out.no_such_port = no_such_port_.get();
  out.tx_full = tx_full_.get();
  out.multi_segment = multi_segment_.get();
  out.pipeline_dropped = pipeline_->dropped();
  out.created = pipeline_->created();
  out.held = pipeline_->held();
  const std::vector<Node>& nodes = pipeline_->nodes();
  out.nodes.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    out.nodes[i].stats = nodes[i].stats;
    out.nodes[i].counters.clear();
    nodes[i].element->counters(out.nodes[i].counters);
  }
}

void Worker::answer_snapshot() {
  if (!snapshots_.wanted()) [[likely]]
    return;
  fill_snapshot(snapshots_.to_fill());
  snapshots_.serve();
}

void Worker::run(const std::atomic<bool>& stop, std::atomic<int64_t>* budget) {
  PacketBatch batch;
  Pipeline& pipe = *pipeline_;
  const bool poll = pipe.has_input();
  const bool tasks = pipe.has_tasks();
  const bool deferring = pipe.has_deferring();
  const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
  start_tsc_ = rte_rdtsc();
  const double cpu_start = thread_cpu_seconds();
  t_heartbeat = &heartbeat_;
  tap_.ns_per_tsc = ns_per_tsc_;
  t_latency_tap = &tap_;
  if (rcu_ != nullptr) rcu_->online(static_cast<unsigned>(id_));
  while (!stop.load(std::memory_order_relaxed)) {
    fulcrum::heartbeat();
    bool spent = budget != nullptr && budget->load(std::memory_order_relaxed) <= 0;
    // A worker with deferred packets (a later stage's rings, a device's results) times the
    // iterations that handed packets on: its busy cycles, without the idle polls.
    const uint64_t t0 = deferring ? rte_rdtsc() : 0;
    bool worked = false;
    if (poll && !spent) {
      for (const RxQueue& q : rx_) {
        if (receive(q, batch, budget) == 0) continue;
        worked = true;
        pipe.inject(batch);
      }
    }
    if (tasks) pipe.run_tasks(static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc));
    if (deferring)
      worked |= pipe.poll_deferred(
                    static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc)) > 0;
    flush_all();
    answer_snapshot();
    quiescent();
    if (deferring && worked) busy_cycles_ += rte_rdtsc() - t0;
    if (spent) break;
  }
  // Packets still on a device come back (or are re-run on the CPU) before the run ends; what
  // waits for input that will not come (fragments) is given up.
  pipe.drain();
  while (pipe.held() > 0) {
    fulcrum::heartbeat();
    if (pipe.poll_deferred(static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc)) ==
        0)
      std::this_thread::yield();  // a device thread may share this core
    flush_all();
    answer_snapshot();
    quiescent();
  }
  flush_all();
  pipe.finish();
  if (rcu_ != nullptr) rcu_->offline(static_cast<unsigned>(id_));
  t_heartbeat = nullptr;
  t_latency_tap = nullptr;
  end_tsc_ = rte_rdtsc();
  cpu_s_ = thread_cpu_seconds() - cpu_start;
  finished_.store(true, std::memory_order_release);
}

}  // namespace fulcrum
