#include "runtime/runtime.hh"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>

#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "io/mempool.hh"
#include "runtime/worker.hh"

namespace fulcrum {
namespace {

constexpr auto kControlPeriod = std::chrono::milliseconds(20);
constexpr double kProgressPeriodS = 0.5;
constexpr unsigned kSourcePoolSize = 2047;

bool is_class(std::string_view name) {
  return Registry::instance().find(name) != nullptr;
}

// The sink of the replica built only to check the configuration; it never sees a packet.
class NullSink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    batch.for_each([](uint32_t, Packet* p) { rte_pktmbuf_free(p); });
    batch.set_count(0);
  }
};

int worker_main(void* arg) {
  auto* ctx =
      static_cast<std::tuple<Worker*, const std::atomic<bool>*, std::atomic<int64_t>*>*>(arg);
  std::get<0>(*ctx)->run(*std::get<1>(*ctx), std::get<2>(*ctx));
  return 0;
}

struct Totals {
  uint64_t rx = 0, tx = 0, rx_bytes = 0, tx_bytes = 0, drops = 0;
};

Totals totals(const std::vector<std::unique_ptr<Worker>>& workers) {
  Totals t;
  for (const auto& w : workers) {
    for (const PortCounters& c : w->port_counters()) {
      t.rx += c.rx_packets.get();
      t.rx_bytes += c.rx_bytes.get();
      t.tx += c.tx_packets.get();
      t.tx_bytes += c.tx_bytes.get();
    }
    t.drops += w->drops_no_such_port() + w->drops_tx_full() + w->pipeline().dropped();
  }
  return t;
}

RunReport build_report(const std::vector<std::unique_ptr<Worker>>& workers,
                       const std::vector<std::unique_ptr<Port>>& ports, double duration,
                       const RunOptions& options) {
  RunReport r;
  r.duration_s = duration;
  r.workers = options.workers;
  r.batch = options.batch;
  r.ports.resize(ports.size());
  for (size_t p = 0; p < ports.size(); ++p) r.ports[p].spec = ports[p]->spec();
  uint64_t no_such_port = 0, tx_full = 0;
  for (const auto& w : workers) {
    for (size_t p = 0; p < ports.size(); ++p) {
      const PortCounters& c = w->port_counters()[p];
      r.ports[p].rx_packets += c.rx_packets.get();
      r.ports[p].rx_bytes += c.rx_bytes.get();
      r.ports[p].tx_packets += c.tx_packets.get();
      r.ports[p].tx_bytes += c.tx_bytes.get();
    }
    no_such_port += w->drops_no_such_port();
    tx_full += w->drops_tx_full();
  }
  for (const PortReport& p : r.ports) {
    r.packets_in += p.rx_packets;
    r.bytes_in += p.rx_bytes;
    r.packets_out += p.tx_packets;
    r.bytes_out += p.tx_bytes;
  }

  const auto& first = workers.front()->pipeline().nodes();
  r.elements.resize(first.size());
  for (size_t i = 0; i < first.size(); ++i) {
    ElementReport& e = r.elements[i];
    e.name = first[i].element->name();
    e.class_name = first[i].class_name;
    e.out_packets.assign(first[i].stats.out_packets.size(), 0);
    std::vector<uint64_t> drops(first[i].stats.drops.size(), 0);
    uint64_t unconnected = 0;
    std::map<std::string, uint64_t> counters;
    for (const auto& w : workers) {
      const Node& n = w->pipeline().nodes()[i];
      e.in_packets += n.stats.in_packets;
      e.batches += n.stats.batches;
      for (size_t o = 0; o < e.out_packets.size(); ++o) e.out_packets[o] += n.stats.out_packets[o];
      for (size_t d = 0; d < drops.size(); ++d) drops[d] += n.stats.drops[d];
      unconnected += n.stats.unconnected_drops;
      std::vector<Counter> cs;
      n.element->counters(cs);
      for (const Counter& c : cs) counters[c.name] += c.value;
    }
    const auto& reasons = first[i].element->traits().drop_reasons;
    for (size_t d = 0; d < drops.size(); ++d) {
      if (drops[d] == 0) continue;
      std::string reason = d < reasons.size() ? std::string(reasons[d]) : "dropped";
      e.drops.emplace_back(reason, drops[d]);
    }
    if (unconnected > 0) e.drops.emplace_back(std::string(kUnconnectedOutput), unconnected);
    for (const auto& d : e.drops) {
      r.drops.emplace_back(e.name + "/" + d.first, d.second);
      r.dropped += d.second;
    }
    e.counters.assign(counters.begin(), counters.end());
  }
  if (no_such_port > 0)
    r.drops.emplace_back("runtime/" + std::string(kDropNoSuchPort), no_such_port);
  if (tx_full > 0) r.drops.emplace_back("runtime/" + std::string(kDropTxFull), tx_full);
  r.dropped += no_such_port + tx_full;
  for (const auto& w : workers) r.packets_created += w->pipeline().created();
  const uint64_t accounted = r.packets_out + r.dropped;
  const uint64_t entered = r.packets_in + r.packets_created;
  r.queued = entered > accounted ? entered - accounted : 0;
  if (options.latency) {
    LatencyHistogram h;
    for (const auto& w : workers) h.merge(*w->latency());
    constexpr double kNsPerUs = 1000;
    r.latency.samples = h.samples();
    r.latency.p50_us = h.percentile(0.5) / kNsPerUs;
    r.latency.p90_us = h.percentile(0.9) / kNsPerUs;
    r.latency.p99_us = h.percentile(0.99) / kNsPerUs;
    r.latency.p999_us = h.percentile(0.999) / kNsPerUs;
    r.latency.max_us = static_cast<double>(h.max()) / kNsPerUs;
  }
  return r;
}

}  // namespace

Result<PipelineConfig> load_pipeline(const RunOptions& options) {
  if (!options.pipeline_text.empty())
    return parse_pipeline(options.pipeline_text, options.pipeline_file, is_class);
  return parse_pipeline_file(options.pipeline_file, is_class);
}

Result<RunReport> run(const RunOptions& options) {
  if (options.batch == 0 || options.batch > kMaxBatch)
    return make_error("--batch must be 1.." + std::to_string(kMaxBatch));
  if (options.ports.empty()) return make_error("at least one --port is needed");
  if (static_cast<int>(rte_lcore_count()) < options.workers + 1)
    return make_error("not enough lcores for " + std::to_string(options.workers) + " workers");

  Result<PipelineConfig> config = load_pipeline(options);
  if (!config) return make_error(config.error());

  SharedStorage shared;
  // One small pool per worker for packets that source elements create.
  std::vector<PoolHandle> source_pools;
  for (int w = 0; w < options.workers; ++w) {
    Result<rte_mempool*> pool = create_packet_pool("src" + std::to_string(w), kSourcePoolSize);
    if (!pool) return make_error(pool.error());
    source_pools.emplace_back(pool.value());
  }
  // Build one replica before any device is opened, so every configuration error (ports,
  // arguments, route files) is reported with nothing started. Tables it loads stay in `shared`.
  {
    NullSink sink;
    InitContext ctx;
    ctx.workers = options.workers;
    ctx.ports = static_cast<int>(options.ports.size());
    ctx.shared = &shared;
    ctx.sink = &sink;
    ctx.pool = source_pools.front().get();
    Result<std::unique_ptr<Pipeline>> check = Pipeline::build(config.value(), ctx, options.branch);
    if (!check) return make_error(check.error());
  }

  std::vector<std::unique_ptr<Port>> ports;
  for (size_t i = 0; i < options.ports.size(); ++i) {
    PortConfig pc;
    pc.index = static_cast<uint16_t>(i);
    pc.workers = options.workers;
    pc.burst = options.batch;
    Result<std::unique_ptr<Port>> port = open_port(options.ports[i], pc);
    if (!port) return make_error(port.error());
    ports.push_back(std::move(port.value()));
  }
  std::vector<Port*> port_ptrs;
  for (auto& p : ports) port_ptrs.push_back(p.get());

  // RX queues are dealt to workers round-robin, queue q of every port to worker q % workers.
  std::vector<std::vector<RxQueue>> rx(static_cast<size_t>(options.workers));
  const auto nports = static_cast<uint16_t>(ports.size());
  for (uint16_t p = 0; p < nports; ++p)
    for (uint16_t q = 0; q < ports[p]->rx_queues(); ++q)
      rx[q % options.workers].push_back(RxQueue{p, q});

  std::vector<std::unique_ptr<Worker>> workers;
  for (int w = 0; w < options.workers; ++w) {
    auto worker = std::make_unique<Worker>(w, port_ptrs, rx[static_cast<size_t>(w)], options.batch);
    if (options.latency) worker->enable_latency();
    InitContext ctx;
    ctx.worker = w;
    ctx.workers = options.workers;
    ctx.ports = static_cast<int>(ports.size());
    ctx.shared = &shared;
    ctx.sink = worker.get();
    ctx.pool = source_pools[static_cast<size_t>(w)].get();
    Result<std::unique_ptr<Pipeline>> pipe = Pipeline::build(config.value(), ctx, options.branch);
    if (!pipe) return make_error(pipe.error());
    worker->set_pipeline(std::move(pipe.value()));
    workers.push_back(std::move(worker));
  }

  std::atomic<bool> stop{false};
  std::atomic<int64_t> budget{static_cast<int64_t>(options.packets)};
  std::atomic<int64_t>* budget_ptr = options.packets > 0 ? &budget : nullptr;
  std::vector<std::tuple<Worker*, const std::atomic<bool>*, std::atomic<int64_t>*>> args;
  args.reserve(workers.size());
  for (auto& w : workers) args.emplace_back(w.get(), &stop, budget_ptr);

  const auto start = std::chrono::steady_clock::now();
  std::vector<unsigned> lcores;
  unsigned lcore;
  size_t next = 0;
  RTE_LCORE_FOREACH_WORKER(lcore) {
    if (next == workers.size()) break;
    rte_eal_remote_launch(worker_main, &args[next++], lcore);
    lcores.push_back(lcore);
  }

  bool any_finite = false;
  for (auto& p : ports) any_finite |= p->finite_input();
  double last_progress = 0;
  Totals last{};
  while (true) {
    std::this_thread::sleep_for(kControlPeriod);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    bool all_finished = true;
    for (auto& w : workers) all_finished &= w->finished();
    if (all_finished) break;
    if (options.interrupt != nullptr && options.interrupt->load()) break;
    if (options.seconds > 0 && elapsed >= options.seconds) break;
    if (any_finite) {
      bool drained = true;
      for (size_t p = 0; p < ports.size(); ++p) {
        if (!ports[p]->finite_input()) continue;
        uint64_t received = 0;
        for (auto& w : workers) received += w->port_counters()[p].rx_packets.get();
        drained &= ports[p]->input_done(received);
      }
      if (drained) break;
    }
    if (options.progress && elapsed - last_progress >= kProgressPeriodS) {
      Totals t = totals(workers);
      const double dt = elapsed - last_progress;
      std::fprintf(stderr, "\r  %7.2f Mpps in  %7.2f Mpps out  %7.2f Gbps out  drops %llu     ",
                   static_cast<double>(t.rx - last.rx) / dt / 1e6,
                   static_cast<double>(t.tx - last.tx) / dt / 1e6,
                   static_cast<double>(t.tx_bytes - last.tx_bytes) * 8 / dt / 1e9,
                   static_cast<unsigned long long>(t.drops));
      last = t;
      last_progress = elapsed;
    }
  }
  stop.store(true);
  for (unsigned l : lcores) rte_eal_wait_lcore(l);
  uint64_t first_tsc = UINT64_MAX, last_tsc = 0;
  for (auto& w : workers) {
    first_tsc = std::min(first_tsc, w->start_tsc());
    last_tsc = std::max(last_tsc, w->end_tsc());
  }
  const double duration =
      static_cast<double>(last_tsc - first_tsc) / static_cast<double>(rte_get_tsc_hz());
  if (options.progress) std::fprintf(stderr, "\n");

  RunReport report = build_report(workers, ports, duration, options);
  workers.clear();
  for (auto& p : ports) p->stop();
  return report;
}

}  // namespace fulcrum
