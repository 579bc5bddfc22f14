#include "runtime/runtime.hh"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mempool.h>

#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <thread>

#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "core/version.hh"
#include "io/eal.hh"
#include "io/mempool.hh"
#include "offload/service.hh"
#include "runtime/energy.hh"
#include "runtime/nvml.hh"
#include "runtime/reload.hh"
#include "runtime/stages.hh"
#include "runtime/worker.hh"

namespace fulcrum {
namespace {

constexpr auto kControlPeriod = std::chrono::milliseconds(20);
constexpr double kProgressPeriodS = 0.5;

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

// Runs `f` on EAL lcore `lcore` and waits for it; on this thread when the lcore is busy (a
// worker abandoned by an earlier run in this process).
void on_lcore(unsigned lcore, const std::function<void()>& f) {
  auto call = [](void* arg) {
    (*static_cast<const std::function<void()>*>(arg))();
    return 0;
  };
  if (rte_eal_remote_launch(call, const_cast<std::function<void()>*>(&f), lcore) != 0) {
    f();
    return;
  }
  rte_eal_wait_lcore(lcore);
}

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
    t.drops += w->drops_no_such_port() + w->drops_tx_full() + w->drops_multi_segment() +
               w->pipeline().dropped();
  }
  return t;
}

// The run's CUDA devices, for NVML: (index among the offload devices, PCI bus id).
std::vector<std::pair<size_t, std::string>> cuda_devices(const SharedStorage& shared) {
  std::vector<std::pair<size_t, std::string>> out;
  const auto service = shared.find<offload::OffloadService>(offload::OffloadService::kSharedKey);
  if (!service) return out;
  for (size_t i = 0; i < service->devices(); ++i)
    if (service->device(i).info().backend == offload::Backend::kCuda)
      out.emplace_back(i, service->device(i).info().pci_bus_id);
  return out;
}

EnergyReport energy_report(const RaplMeter& rapl, const std::vector<uint64_t>& from,
                           const std::vector<uint64_t>& to,
                           const std::vector<std::pair<size_t, std::string>>& cuda,
                           const std::vector<NvmlMeter::Reading>& gpu, const EnergyModel& model,
                           const RunReport& r) {
  EnergyInputs in;
  in.seconds = r.duration_s;
  in.bytes_out = r.bytes_out;
  in.packets = r.packets_in + r.packets_created;
  in.workers = r.workers;
  if (rapl.available() && !from.empty() && !to.empty()) {
    in.cpu_joules = rapl.joules(from, to);
    in.cpu_source = "RAPL " + rapl.zones();
  } else {
    in.cpu_source = rapl.available() ? "a RAPL counter read failed" : rapl.why_not();
  }
  for (size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceReport& d = r.devices[i];
    EnergyInputs::Device dev;
    dev.label = d.label;
    dev.backend = d.backend;
    dev.on_host = d.on_host;
    dev.on_s = d.on_s;
    dev.busy_s = d.busy_s;
    dev.packets = d.packets;
    dev.source = "not a CUDA device (NVML measures NVIDIA GPUs only)";
    for (size_t k = 0; k < cuda.size() && k < gpu.size(); ++k) {
      if (cuda[k].first != i) continue;
      if (gpu[k].ok) dev.joules = gpu[k].joules;
      dev.source = gpu[k].ok ? gpu[k].method : gpu[k].why_not;
    }
    in.devices.push_back(std::move(dev));
  }
  return energy_report(model, in);
}

std::vector<DeviceReport> device_reports(const SharedStorage& shared) {
  std::vector<DeviceReport> out;
  const auto service = shared.find<offload::OffloadService>(offload::OffloadService::kSharedKey);
  if (!service) return out;
  constexpr double kNsPerUs = 1e3;
  for (size_t i = 0; i < service->devices(); ++i) {
    const offload::DeviceStats& st = service->stats(i);
    DeviceReport d;
    d.label = service->device(i).label();
    d.emulated = service->device(i).info().backend == offload::Backend::kEmu;
    d.backend = offload::backend_name(service->device(i).info().backend);
    d.on_host = !d.emulated && service->device(i).info().kind == offload::DeviceKind::kCpu;
    d.batches = st.batches.load();
    d.packets = st.packets.load();
    d.tasks_ok = st.tasks_ok.load();
    d.on_s = static_cast<double>(st.on_windows.load()) *
             static_cast<double>(offload::DeviceStats::kOnWindowNs) / 1e9;
    d.tasks_failed = st.tasks_failed.load();
    const double n = d.tasks_ok > 0 ? static_cast<double>(d.tasks_ok) * kNsPerUs : 1;
    d.task_us = static_cast<double>(st.task_ns.load()) / n;
    d.queue_us = static_cast<double>(st.queue_ns.load()) / n;
    d.device_us = static_cast<double>(st.device_ns.load()) / n;
    d.return_us = static_cast<double>(st.return_ns.load()) / n;
    const offload::DeviceThread& t = service->thread(i);
    d.releases = t.releases();
    d.reacquires = t.reacquires();
    for (size_t k = 0; k < service->threads(i); ++k)
      d.busy_s += static_cast<double>(service->thread_at(i, k).busy_ns()) / 1e9;
    d.released_s = static_cast<double>(t.released_ns()) / 1e9;
    out.push_back(std::move(d));
  }
  return out;
}

// The report of what `snaps` (one per worker, in worker order) counted; `graph` is any worker's
// pipeline (names, classes and drop reasons are the same in every replica).
RunReport build_report(const std::vector<const WorkerSnapshot*>& snaps, const Pipeline& graph,
                       const std::vector<std::unique_ptr<Port>>& ports,
                       const std::vector<unsigned>& lcores, double duration,
                       const RunOptions& options) {
  RunReport r;
  r.duration_s = duration;
  r.tsc_hz = static_cast<double>(rte_get_tsc_hz());
  r.workers = options.workers;
  r.batch = options.batch;
  r.meta.version = version();
  r.meta.git_hash = git_hash();
  r.meta.hugepages = rte_eal_has_hugepages() != 0;
  r.meta.packet_pools = packet_pool_memory();
  r.meta.pipeline = options.pipeline_text.empty() ? options.pipeline_file : "";
  r.ports.resize(ports.size());
  for (size_t p = 0; p < ports.size(); ++p) r.ports[p].spec = ports[p]->spec();
  uint64_t no_such_port = 0, tx_full = 0, multi_segment = 0;
  for (const WorkerSnapshot* w : snaps) {
    WorkerReport& wr = r.per_worker.emplace_back();
    if (r.per_worker.size() <= lcores.size()) {
      wr.lcore = lcores[r.per_worker.size() - 1];
      wr.cpu = rte_lcore_to_cpu_id(static_cast<int>(wr.lcore));
    }
    for (size_t p = 0; p < w->ports.size() && p < ports.size(); ++p) {
      const PortSnapshot& c = w->ports[p];
      r.ports[p].rx_packets += c.rx_packets;
      r.ports[p].rx_bytes += c.rx_bytes;
      r.ports[p].tx_packets += c.tx_packets;
      r.ports[p].tx_bytes += c.tx_bytes;
      wr.rx_packets += c.rx_packets;
      wr.tx_packets += c.tx_packets;
    }
    no_such_port += w->no_such_port;
    tx_full += w->tx_full;
    multi_segment += w->multi_segment;
    wr.dropped = w->pipeline_dropped + w->no_such_port + w->tx_full + w->multi_segment;
  }
  for (const PortReport& p : r.ports) {
    r.packets_in += p.rx_packets;
    r.bytes_in += p.rx_bytes;
    r.packets_out += p.tx_packets;
    r.bytes_out += p.tx_bytes;
  }

  const auto& nodes = graph.nodes();
  r.elements.resize(nodes.size());
  for (size_t i = 0; i < nodes.size(); ++i) {
    ElementReport& e = r.elements[i];
    e.name = nodes[i].element->name();
    e.class_name = nodes[i].class_name;
    e.out_packets.assign(nodes[i].stats.out_packets.size(), 0);
    std::vector<uint64_t> drops(nodes[i].stats.drops.size(), 0);
    uint64_t unconnected = 0;
    std::map<std::string, uint64_t> counters;
    uint64_t sampled_bytes = 0, byte_samples = 0;
    for (const WorkerSnapshot* w : snaps) {
      if (i >= w->nodes.size()) continue;  // a worker that has not answered yet
      const NodeStats& st = w->nodes[i].stats;
      e.in_packets += st.in_packets;
      e.batches += st.batches;
      e.cycles += st.cycles;
      sampled_bytes += st.sampled_bytes;
      byte_samples += st.byte_samples;
      for (size_t o = 0; o < e.out_packets.size() && o < st.out_packets.size(); ++o)
        e.out_packets[o] += st.out_packets[o];
      for (size_t d = 0; d < drops.size() && d < st.drops.size(); ++d) drops[d] += st.drops[d];
      unconnected += st.unconnected_drops;
      for (const Counter& c : w->nodes[i].counters)
        counters[c.name] = c.shared ? c.value : counters[c.name] + c.value;
    }
    if (byte_samples > 0)
      e.frame_bytes = static_cast<double>(sampled_bytes) / static_cast<double>(byte_samples);
    const auto& reasons = nodes[i].element->traits().drop_reasons;
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
  if (multi_segment > 0)
    r.drops.emplace_back("runtime/" + std::string(kDropMultiSegment), multi_segment);
  r.dropped += no_such_port + tx_full + multi_segment;
  for (const WorkerSnapshot* w : snaps) r.packets_created += w->created;
  const uint64_t accounted = r.packets_out + r.dropped;
  const uint64_t entered = r.packets_in + r.packets_created;
  r.queued = entered > accounted ? entered - accounted : 0;
  return r;
}

// The final report: every worker has finished (their counters are still).
RunReport final_report(const std::vector<std::unique_ptr<Worker>>& workers,
                       const std::vector<std::unique_ptr<Port>>& ports,
                       const std::vector<unsigned>& lcores, double duration,
                       const RunOptions& options) {
  std::vector<WorkerSnapshot> snaps(workers.size());
  std::vector<const WorkerSnapshot*> ptrs;
  for (size_t w = 0; w < workers.size(); ++w) {
    workers[w]->fill_snapshot(snaps[w]);
    ptrs.push_back(&snaps[w]);
  }
  RunReport r = build_report(ptrs, workers.front()->pipeline(), ports, lcores, duration, options);
  for (size_t w = 0; w < workers.size() && w < r.per_worker.size(); ++w) {
    r.per_worker[w].cpu_s = workers[w]->cpu_s();
    r.per_worker[w].tx_flush_cycles = workers[w]->tx_flush_cycles();
    r.per_worker[w].busy_cycles = workers[w]->busy_cycles();
  }
  for (const auto& w : workers)
    for (OutputLoss& l : w->pipeline().output_losses()) r.output_losses.push_back(std::move(l));
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

LiveGraph live_graph(const Pipeline& p) {
  LiveGraph g;
  for (const Node& n : p.nodes()) {
    LiveGraph::Node& gn = g.nodes.emplace_back();
    gn.name = n.element->name();
    gn.class_name = n.class_name;
    gn.loc = n.loc.str();
    for (std::string_view r : n.element->traits().drop_reasons) gn.drop_reasons.emplace_back(r);
    for (const Node::Edge& e : n.next) gn.next.emplace_back(e.node, e.port);
  }
  return g;
}

std::vector<MempoolUse> mempool_use() {
  std::vector<MempoolUse> out;
  rte_mempool_walk(
      [](rte_mempool* mp, void* arg) {
        auto* v = static_cast<std::vector<MempoolUse>*>(arg);
        v->push_back(MempoolUse{mp->name, mp->size, rte_mempool_in_use_count(mp)});
      },
      &out);
  return out;
}

// Builds the live states on the control thread from the workers' snapshots: it asks every
// worker for one, and a live period later builds the state from the answers (a worker that has
// not answered yet, a stalled one, counts with its previous answer) and asks again.
class LiveSampler {
 public:
  LiveSampler(const std::vector<std::unique_ptr<Worker>>& workers,
              const std::vector<std::unique_ptr<Port>>& ports, const std::vector<unsigned>& lcores,
              const RunOptions& options, const SharedStorage& shared, const Reloader& reloader)
      : workers_(workers),
        ports_(ports),
        lcores_(lcores),
        options_(options),
        shared_(shared),
        reloader_(reloader),
        finished_(workers.size()) {}

  bool active() const { return options_.live != nullptr || options_.summary_signal != nullptr; }

  void tick(double elapsed) {
    const bool summary = options_.summary_signal != nullptr && options_.summary_signal->load();
    if (summary && !summary_pending_) {
      summary_pending_ = true;
      summary_asked_ = elapsed;
      ask();
    }
    if (summary_pending_ && (answered() || elapsed - summary_asked_ >= kSummaryWaitS)) {
      summary_pending_ = false;
      const RunReport r = report(elapsed);
      std::printf("fulcrum: summary so far (SIGUSR1, %.1f s into the run)\n%s", elapsed,
                  report_text(r).c_str());
      std::fflush(stdout);
      options_.summary_signal->store(false);
    }
    if (options_.live == nullptr || elapsed - last_publish_ < options_.live_period_s) return;
    last_publish_ = elapsed;
    publish(report(elapsed), elapsed, true);
    ask();
  }

  // The final state, from the final report.
  void publish_final(const RunReport& r, double elapsed) {
    if (options_.live != nullptr) publish(r, elapsed, false);
  }

 private:
  static constexpr double kSummaryWaitS = 1;
  static constexpr double kRateWindowS = 1;

  void ask() {
    for (const auto& w : workers_)
      if (!w->finished()) w->snapshots().request();
  }

  bool answered() const {
    for (const auto& w : workers_)
      if (!w->finished() && !w->snapshots().answered()) return false;
    return true;
  }

  RunReport report(double elapsed) {
    std::vector<const WorkerSnapshot*> snaps;
    for (size_t i = 0; i < workers_.size(); ++i) {
      if (workers_[i]->finished()) {
        workers_[i]->fill_snapshot(finished_[i]);
        snaps.push_back(&finished_[i]);
      } else {
        snaps.push_back(&workers_[i]->snapshots().latest());
      }
    }
    RunReport r =
        build_report(snaps, workers_.front()->pipeline(), ports_, lcores_, elapsed, options_);
    r.devices = device_reports(shared_);
    r.energy.source = "read at the end of the run";
    const ReloadCounts reloads = reloader_.counts();
    r.reloads = reloads.done;
    r.reload_failures = reloads.failed;
    return r;
  }

  void publish(const RunReport& r, double elapsed, bool running) {
    auto state = std::make_shared<LiveState>();
    state->seq = ++seq_;
    state->elapsed_s = elapsed;
    state->running = running;
    state->report = r;
    state->mempools = mempool_use();
    // Rates against the oldest state kept that is at least a window old (or the oldest one).
    while (history_.size() > 1 && elapsed - history_[1]->elapsed_s >= kRateWindowS)
      history_.erase(history_.begin());
    if (!history_.empty() && elapsed > history_.front()->elapsed_s)
      state->rates = live_rates(r, history_.front()->report, elapsed - history_.front()->elapsed_s);
    history_.push_back(state);
    options_.live->publish(state);
  }

  const std::vector<std::unique_ptr<Worker>>& workers_;
  const std::vector<std::unique_ptr<Port>>& ports_;
  const std::vector<unsigned>& lcores_;
  const RunOptions& options_;
  const SharedStorage& shared_;
  const Reloader& reloader_;
  std::vector<WorkerSnapshot> finished_;
  std::vector<std::shared_ptr<const LiveState>> history_;
  uint64_t seq_ = 0;
  double last_publish_ = 0;
  bool summary_pending_ = false;
  double summary_asked_ = 0;
};

// Transmitted packets a port's output lost (a capture file that could not be written) count as
// dropped with reason tx-write-failed, not as sent, and as lost output.
void account_port_losses(const std::vector<std::unique_ptr<Port>>& ports, RunReport& r) {
  uint64_t lost = 0;
  for (size_t p = 0; p < ports.size(); ++p) {
    std::vector<OutputLoss> losses;
    ports[p]->output_losses(r.ports[p].tx_packets, losses);
    for (OutputLoss& l : losses) {
      r.ports[p].tx_packets -= l.lost;
      lost += l.lost;
      r.output_losses.push_back(std::move(l));
    }
  }
  if (lost == 0) return;
  r.packets_out -= lost;
  r.dropped += lost;
  r.drops.emplace_back("runtime/" + std::string(kDropTxWriteFailed), lost);
}

// What every worker reads while it runs (worker_main's arguments).
struct WorkerShared {
  std::atomic<bool> stop{false};
  std::atomic<int64_t> budget{0};
  std::vector<std::tuple<Worker*, const std::atomic<bool>*, std::atomic<int64_t>*>> args;
};

// Reports a worker whose heartbeat has not moved for RunOptions::watchdog_s (stderr and
// RunOptions::on_stall), and when it moves again.
class Watchdog {
 public:
  Watchdog(size_t workers, const RunOptions& options) : options_(options), state_(workers) {}

  // Returns a worker stalled for watchdog_s after it was told to stop (-1 when none).
  int check(const std::vector<std::unique_ptr<Worker>>& workers, double now_s) {
    if (options_.watchdog_s <= 0) return -1;
    int stuck = -1;
    for (size_t i = 0; i < workers.size(); ++i) {
      State& s = state_[i];
      const uint64_t beat = workers[i]->heartbeat();
      if (beat != s.beat || workers[i]->finished()) {
        if (s.reported)
          std::fprintf(stderr,
                       "fulcrum: watchdog: worker %zu is making progress again after %.1f s\n", i,
                       now_s - s.since);
        s = State{beat, now_s, false, {}};
        continue;
      }
      if (now_s - s.since < options_.watchdog_s) continue;
      if (!s.reported) {
        s.reported = true;
        s.note = describe(*workers[i]);
        ++stalls_;
        std::fprintf(stderr, "fulcrum: watchdog: worker %zu has made no progress for %.1f s (%s)\n",
                     i, now_s - s.since, s.note.c_str());
        if (options_.on_stall) options_.on_stall(static_cast<int>(i), s.note);
        s.since_report = now_s;
      } else if (now_s - s.since_report >= options_.watchdog_s) {
        stuck = static_cast<int>(i);
      }
    }
    return stuck;
  }

  uint64_t stalls() const { return stalls_; }
  const std::string& note(size_t worker) const { return state_[worker].note; }

 private:
  struct State {
    uint64_t beat = 0;
    double since = 0;  // when the heartbeat last moved
    bool reported = false;
    std::string note;
    double since_report = 0;
  };

  static std::string describe(Worker& w) {
    const int node = w.pipeline().current_node();
    if (node < 0) return "outside any element";
    const Node& n = w.pipeline().nodes()[static_cast<size_t>(node)];
    return "in element '" + n.element->name() + "' (" + n.class_name + ") at " + n.loc.str();
  }

  const RunOptions& options_;
  std::vector<State> state_;
  uint64_t stalls_ = 0;
};

}  // namespace

Result<PipelineConfig> load_pipeline(const RunOptions& options) {
  Result<PipelineConfig> config =
      options.pipeline_text.empty()
          ? parse_pipeline_file(options.pipeline_file, is_class, options.parameters)
          : parse_pipeline(options.pipeline_text, options.pipeline_file, is_class,
                           options.parameters);
  if (config && options.rewrite)
    if (Status s = options.rewrite(config.value()); !s) return make_error(s.error());
  return config;
}

Result<std::vector<std::string>> check_pipeline(const PipelineConfig& config,
                                                const RunOptions& options, int ports,
                                                SharedStorage& shared, rte_mempool* pool,
                                                std::vector<std::string>* notes) {
  NullSink sink;
  InitContext ctx;
  ctx.strict_rules = options.strict_rules;
  ctx.notes = notes;
  ctx.workers = options.workers;
  ctx.batch = options.batch;
  ctx.ports = ports;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = pool;
  Result<std::unique_ptr<Pipeline>> check = Pipeline::build(config, ctx, options.branch);
  if (!check) return make_error(check.error());
  return check.value()->unconnected_outputs();
}

// Offers the run's reloader to the control plane while it lives; on every way out of run() the
// control plane loses it and it is closed before the tables and the RCU variable go.
class ReloadScope {
 public:
  ReloadScope(LiveView* live, std::shared_ptr<Reloader> reloader)
      : live_(live), reloader_(std::move(reloader)) {
    if (live_ == nullptr) return;
    live_->set_reload([r = reloader_](const std::string& element, const std::string& file) {
      return r->reload(element, file);
    });
  }
  ~ReloadScope() { close(); }
  ReloadScope(const ReloadScope&) = delete;
  ReloadScope& operator=(const ReloadScope&) = delete;

  void close() {
    if (live_ != nullptr) live_->set_reload(nullptr);
    reloader_->close();
  }

 private:
  LiveView* live_;
  std::shared_ptr<Reloader> reloader_;
};

// How long a reload waits for every worker's quiescent point before it keeps the old table
// instead of freeing it: the watchdog's time (a worker slower than that is reported stalled).
std::chrono::milliseconds grace_limit(const RunOptions& options) {
  constexpr double kMsPerS = 1e3;
  const double s = options.watchdog_s > 0 ? options.watchdog_s : kDefaultWatchdogS;
  return std::chrono::milliseconds(static_cast<int64_t>(s * kMsPerS));
}

Result<RunReport> run(const RunOptions& options) {
  if (options.batch == 0 || options.batch > kMaxBatch)
    return make_error("--batch must be 1.." + std::to_string(kMaxBatch));
  if (options.ports.empty()) return make_error("at least one --port is needed");
  if (Status s = check_port_list(options.ports); !s) return make_error(s.error());
  if (static_cast<int>(rte_lcore_count()) < options.workers + 1)
    return make_error("not enough lcores for " + std::to_string(options.workers) + " workers");

  Result<PipelineConfig> config = load_pipeline(options);
  if (!config) return make_error(config.error());

  SharedStorage shared;
  allow_packed_pools(ports_copy_frames(options.ports));
  // One small pool per worker for packets that source elements create.
  std::vector<PoolHandle> source_pools;
  for (int w = 0; w < options.workers; ++w) {
    Result<rte_mempool*> pool = create_packet_pool("src" + std::to_string(w), kSourcePoolSize);
    if (!pool) return make_error(pool.error());
    source_pools.emplace_back(pool.value());
  }
  std::vector<std::string> notes;
  Result<std::vector<std::string>> unconnected =
      check_pipeline(config.value(), options, static_cast<int>(options.ports.size()), shared,
                     source_pools.front().get(), &notes);
  for (const std::string& n : notes) std::fprintf(stderr, "fulcrum: note: %s\n", n.c_str());
  if (!unconnected) return make_error(unconnected.error());
  // As in Click, an output left unconnected is a configuration error, not a silent drop.
  if (!unconnected.value().empty()) {
    std::string all;
    for (const std::string& u : unconnected.value()) all += (all.empty() ? "" : "\n") + u;
    return make_error(all);
  }
  // A pipelined placement cuts the configuration into stages joined by rings.
  Result<std::unique_ptr<StageRun>> staged = StageRun::create(
      config.value(), options.placement, options.workers, shared, options.stage_ring_size);
  if (!staged) return make_error(staged.error());
  std::unique_ptr<StageRun> stages = std::move(staged.value());

  std::vector<std::unique_ptr<Port>> ports;
  for (size_t i = 0; i < options.ports.size(); ++i) {
    PortConfig pc;
    pc.index = static_cast<uint16_t>(i);
    pc.workers = options.workers;
    pc.burst = options.batch;
    pc.buffers_return_from_other_cores = stages->pipelined();
    Result<std::unique_ptr<Port>> port = open_port(options.ports[i], pc);
    if (!port) return make_error(port.error());
    ports.push_back(std::move(port.value()));
  }
  std::vector<Port*> port_ptrs;
  for (auto& p : ports) port_ptrs.push_back(p.get());

  // RX queues are dealt to the receiving workers (all, or stage 0's when pipelined)
  // round-robin, queue q of every port to receiver q % receivers.
  std::vector<std::vector<RxQueue>> rx(static_cast<size_t>(options.workers));
  const std::vector<int> receivers = stages->receivers();
  const auto nports = static_cast<uint16_t>(ports.size());
  for (uint16_t p = 0; p < nports; ++p)
    for (uint16_t q = 0; q < ports[p]->rx_queues(); ++q)
      rx[static_cast<size_t>(receivers[q % receivers.size()])].push_back(RxQueue{p, q});

  std::vector<unsigned> lcores;  // worker w's, in worker order
  for (int w = 0; w < options.workers; ++w) {
    lcores.push_back(worker_lcore(w));
    if (lcores.back() >= RTE_MAX_LCORE)
      return make_error("not enough worker lcores for " + std::to_string(options.workers) +
                        " workers");
  }

  std::vector<PoolHandle> jumbo_pools;  // declared before the workers: it outlives them
  std::vector<std::unique_ptr<Worker>> workers;
  for (int w = 0; w < options.workers; ++w) {
    Result<rte_mempool*> jumbo =
        create_packet_pool("jumbo" + std::to_string(w), kJumboPoolSize, kJumboDataRoom);
    if (!jumbo) return make_error(jumbo.error());
    jumbo_pools.emplace_back(jumbo.value());
    // Each worker's replica (its Worker, its pipeline's nodes, counters and elements) is made on
    // the lcore that will run it, so that it comes from that thread's own malloc arena: made one
    // after the other on this thread, two workers' replicas shared cache lines (one worker's
    // drop counters on the line of the other's TX buffer), which the cloned workers then moved
    // between their cores on every batch.
    std::unique_ptr<Worker> worker;
    Status built;
    on_lcore(lcores[static_cast<size_t>(w)], [&] {
      worker = std::make_unique<Worker>(w, port_ptrs, rx[static_cast<size_t>(w)], options.batch);
      if (options.latency) worker->enable_latency();
      worker->set_jumbo_pool(jumbo.value());
      InitContext ctx;
      ctx.worker = w;
      ctx.workers = options.workers;
      ctx.batch = options.batch;
      ctx.ports = static_cast<int>(ports.size());
      ctx.shared = &shared;
      ctx.sink = worker.get();
      ctx.pool = source_pools[static_cast<size_t>(w)].get();
      ctx.strict_rules = options.strict_rules;
      Result<std::unique_ptr<Pipeline>> pipe = Pipeline::build(config.value(), ctx, options.branch);
      if (!pipe) {
        built = make_error(pipe.error());
        return;
      }
      if (stages->pipelined()) pipe.value()->keep_entry_points(stages->stage_elements(w));
      worker->set_pipeline(std::move(pipe.value()));
    });
    if (!built) return make_error(built.error());
    workers.push_back(std::move(worker));
  }

  // Hot reload: the workers are the readers of one RCU variable (runtime/rcu.hh).
  Result<std::unique_ptr<Rcu>> rcu_made = Rcu::create(static_cast<unsigned>(workers.size()));
  if (!rcu_made) return make_error(rcu_made.error());
  std::unique_ptr<Rcu> rcu = std::move(rcu_made.value());
  for (auto& w : workers) w->set_rcu(rcu.get());
  auto reloader = std::make_shared<Reloader>(reloadable_tables(workers.front()->pipeline()), *rcu,
                                             grace_limit(options));
  ReloadScope reload_scope(options.live, reloader);
  BackgroundReload signal_reload(reloader);

  // What the workers read lives on the heap: a worker stuck for good is abandoned with it.
  auto shared_state = std::make_unique<WorkerShared>();
  std::atomic<bool>& stop = shared_state->stop;
  shared_state->budget.store(static_cast<int64_t>(options.packets));
  std::atomic<int64_t>* budget_ptr = options.packets > 0 ? &shared_state->budget : nullptr;
  auto& args = shared_state->args;
  args.reserve(workers.size());
  for (int w = 0; w < options.workers; ++w)
    args.emplace_back(workers[static_cast<size_t>(w)].get(), stages->stop_flag(w, stop),
                      stages->stage_of(w) == 0 ? budget_ptr : nullptr);
  auto stage_finished = [&](size_t w) { return workers[w]->finished(); };
  Watchdog watchdog(workers.size(), options);
  if (options.live != nullptr)
    options.live->set_graph(std::make_shared<LiveGraph>(live_graph(workers.front()->pipeline())));

  const RaplMeter rapl = RaplMeter::open();
  const std::vector<std::pair<size_t, std::string>> cuda = cuda_devices(shared);
  std::vector<std::string> cuda_bus_ids;
  for (const auto& c : cuda) cuda_bus_ids.push_back(c.second);
  // NVML is loaded only when the run has a CUDA device.
  NvmlMeter nvml = cuda.empty() ? NvmlMeter() : NvmlMeter::open(cuda_bus_ids);
  nvml.start();
  const std::vector<uint64_t> energy_start = rapl.read();
  const auto start = std::chrono::steady_clock::now();
  for (size_t w = 0; w < workers.size(); ++w)
    rte_eal_remote_launch(worker_main, &args[w], lcores[w]);

  LiveSampler sampler(workers, ports, lcores, options, shared, *reloader);
  bool any_finite = false;
  for (auto& p : ports) any_finite |= p->finite_input();
  double last_progress = 0;
  Totals last{};
  while (true) {
    std::this_thread::sleep_for(kControlPeriod);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    watchdog.check(workers, elapsed);
    stages->advance(stage_finished);
    if (sampler.active()) sampler.tick(elapsed);
    if (options.reload_signal != nullptr && options.reload_signal->exchange(false)) {
      if (reloader->empty())
        std::fprintf(stderr, "fulcrum: reload (SIGHUP): this pipeline has no reloadable table\n");
      else if (!signal_reload.start("SIGHUP"))
        std::fprintf(stderr, "fulcrum: reload (SIGHUP): a reload is in progress; not repeated\n");
    }
    if (options.on_tick) {
      const Totals t = totals(workers);
      options.on_tick(elapsed, t.rx, t.tx);
    }
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
  // Workers drain what they hold and stop; one that makes no progress for the watchdog's time
  // meanwhile is stuck for good: the run ends without it, leaving it what it uses.
  for (bool all_finished = false; !all_finished;) {
    stages->advance(stage_finished);
    all_finished = true;
    for (auto& w : workers) all_finished &= w->finished();
    if (all_finished) break;
    std::this_thread::sleep_for(kControlPeriod);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (const int stuck = watchdog.check(workers, elapsed); stuck >= 0) {
      reload_scope.close();
      static_cast<void>(rcu.release());
      static_cast<void>(shared_state.release());
      static_cast<void>(stages.release());
      for (auto& w : workers) static_cast<void>(w.release());
      for (auto& p : ports) static_cast<void>(p.release());
      for (auto& pool : source_pools) static_cast<void>(pool.release());
      for (auto& pool : jumbo_pools) static_cast<void>(pool.release());
      return make_error("worker " + std::to_string(stuck) + " is stuck (" +
                        watchdog.note(static_cast<size_t>(stuck)) +
                        ") and did not stop: the run ends without a summary");
    }
  }
  for (unsigned l : lcores) rte_eal_wait_lcore(l);
  reload_scope.close();
  signal_reload.join();
  uint64_t first_tsc = UINT64_MAX, last_tsc = 0;
  for (auto& w : workers) {
    first_tsc = std::min(first_tsc, w->start_tsc());
    last_tsc = std::max(last_tsc, w->end_tsc());
  }
  const double duration =
      static_cast<double>(last_tsc - first_tsc) / static_cast<double>(rte_get_tsc_hz());
  if (options.progress) std::fprintf(stderr, "\n");

  RunReport report = final_report(workers, ports, lcores, duration, options);
  stages->report(options.placement, report);
  report.meta.notes = notes;
  report.devices = device_reports(shared);
  const std::vector<uint64_t> energy_end = rapl.read();
  report.energy = energy_report(rapl, energy_start, energy_end, cuda, nvml.stop(),
                                options.energy_model, report);
  report.stalls = watchdog.stalls();
  const ReloadCounts reloads = reloader->counts();
  report.reloads = reloads.done;
  report.reload_failures = reloads.failed;
  const double ended =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  workers.clear();
  for (auto& p : ports) p->stop();
  account_port_losses(ports, report);
  sampler.publish_final(report, ended);
  return report;
}

}  // namespace fulcrum
