#include "runtime/worker.hh"

#include <rte_cycles.h>
#include <rte_pause.h>

#include <thread>

namespace fulcrum {
namespace {

constexpr int kTxRetries = 8;

}  // namespace

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
  const uint16_t n = ports_[rxq.port]->rx_burst(rxq.queue, batch.data(), want);
  if (budget != nullptr && n < want) budget->fetch_add(want - n, std::memory_order_relaxed);
  if (n == 0) return 0;
  batch.set_count(n);
  BatchAnno& a = batch.anno();
  a = BatchAnno{};
  a.in_port = rxq.port;
  a.in_queue = rxq.queue;
  a.batch_id = batch_seq_++;
  a.rx_tsc = rte_rdtsc();
  uint64_t bytes = 0;
  Packet** pkts = batch.data();
  // Start loading every packet's first data line now; the elements read headers next.
  for (uint16_t i = 0; i < n; ++i) {
    Packet* m = pkts[i];
    set_rx_anno(m, rxq.port, m->hash.rss);
    bytes += m->pkt_len;
  }
  if (latency_) {
    const auto rx_ns = static_cast<uint64_t>(static_cast<double>(a.rx_tsc) * ns_per_tsc_);
    for (uint16_t i = 0; i < n; ++i) anno(pkts[i]).timestamp_ns = rx_ns;
  }
  PortCounters& c = port_counters_[rxq.port];
  c.rx_packets.add(n);
  c.rx_bytes.add(bytes);
  return n;
}

void Worker::transmit(PacketBatch& batch) {
  const auto nports = static_cast<uint16_t>(ports_.size());
  batch.for_each([&](uint32_t, Packet* p) {
    const uint16_t port = effective_out_port(p);
    if (port >= nports) {
      rte_pktmbuf_free(p);
      no_such_port_.add(1);
      return;
    }
    TxBuffer& tb = tx_[port];
    tb.pkts[tb.count++] = p;
    tb.bytes += p->pkt_len;
    if (tb.count >= burst_) flush(port);
  });
  batch.set_count(0);
}

void Worker::flush(uint16_t port) {
  TxBuffer& tb = tx_[port];
  if (tb.count == 0) return;
  if (latency_) {
    const auto now_ns = static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc_);
    for (uint32_t i = 0; i < tb.count; ++i) {
      const uint64_t rx_ns = anno(tb.pkts[i]).timestamp_ns;
      if (rx_ns != 0 && rx_ns <= now_ns) latency_->record(now_ns - rx_ns);
    }
  }
  uint32_t sent = 0;
  for (int attempt = 0; attempt < kTxRetries && sent < tb.count; ++attempt)
    sent +=
        ports_[port]->tx_burst(tb.queue, tb.pkts + sent, static_cast<uint16_t>(tb.count - sent));
  uint64_t unsent_bytes = 0;
  if (sent < tb.count) {
    for (uint32_t i = sent; i < tb.count; ++i) unsent_bytes += tb.pkts[i]->pkt_len;
    rte_pktmbuf_free_bulk(tb.pkts + sent, tb.count - sent);
    tx_full_.add(tb.count - sent);
  }
  PortCounters& c = port_counters_[port];
  c.tx_packets.add(sent);
  c.tx_bytes.add(tb.bytes - unsent_bytes);
  tb.count = 0;
  tb.bytes = 0;
}

void Worker::flush_all() {
  const auto nports = static_cast<uint16_t>(ports_.size());
  for (uint16_t p = 0; p < nports; ++p) flush(p);
}

void Worker::run(const std::atomic<bool>& stop, std::atomic<int64_t>* budget) {
  PacketBatch batch;
  Pipeline& pipe = *pipeline_;
  const bool poll = pipe.has_input();
  const bool tasks = pipe.has_tasks();
  const bool deferring = pipe.has_deferring();
  const double ns_per_tsc = 1e9 / static_cast<double>(rte_get_tsc_hz());
  start_tsc_ = rte_rdtsc();
  while (!stop.load(std::memory_order_relaxed)) {
    bool spent = budget != nullptr && budget->load(std::memory_order_relaxed) <= 0;
    if (poll && !spent) {
      for (const RxQueue& q : rx_) {
        if (receive(q, batch, budget) == 0) continue;
        pipe.inject(batch);
      }
    }
    if (tasks) pipe.run_tasks(static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc));
    if (deferring)
      pipe.poll_deferred(static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc));
    flush_all();
    if (spent) break;
  }
  // Packets still on a device come back (or are re-run on the CPU) before the run ends.
  while (pipe.held() > 0) {
    if (pipe.poll_deferred(static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * ns_per_tsc)) ==
        0)
      std::this_thread::yield();  // a device thread may share this core
    flush_all();
  }
  flush_all();
  end_tsc_ = rte_rdtsc();
  finished_.store(true, std::memory_order_release);
}

}  // namespace fulcrum
