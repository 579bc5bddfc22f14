// fulcrum proxy CONFIG --listen A:P --backend A:P ...: the L7 reverse proxy (l7/proxy/proxy.hh)
// with the NF chain of CONFIG (l7/config.hh), until SIGINT or SIGTERM; then the summary.
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cli/commands.hh"
#include "cli/device_option.hh"
#include "core/args.hh"
#include "l7/config.hh"
#include "l7/flow/batch_processor.hh"
#include "l7/flow/processor.hh"
#include "l7/proxy/backends.hh"
#include "l7/proxy/proxy.hh"

namespace fulcrum::cli {

namespace {

constexpr const char* kProxyUsage =
    R"(usage: fulcrum proxy CONFIG --listen 127.0.0.1:PORT --backend A.B.C.D:PORT [--backend ...]
  CONFIG                   the NF chain (docs/l7.md; configs/l7/passthrough.l7 is the empty chain)
  --listen A:P             where clients connect (default 127.0.0.1:8080)
  --backend A:P            a backend of the default pool (repeatable; at least one)
  --workers N              worker threads, each with its own epoll loop and listener (1)
  --max-conns N            client connections at once, all workers (10000); over it: 503
  --idle-timeout-ms N      close a connection idle this long (60000; 0: never)
  --header-timeout-ms N    answer 408 to a request head not complete in this time (10000; 0: never)
  --max-pipeline N         unanswered requests of one client before reading it stops (64)
  --max-header-bytes N     request/response head limit (65536; over it: 431)
  --max-headers N          header count limit (100; over it: 431)
  --max-body-bytes N       body limit (67108864; over it: 413)
  --health-interval-ms N   active health checks every N ms (0: none)
  --health-fails N         consecutive failed checks that mark a backend down (2)
  --health-path PATH       check with "GET PATH" (2xx/3xx: healthy) instead of a TCP connect
  --no-pin                 do not pin workers to cores
  --batch                  FlowShader's batching and CPU/device split (docs/l7-scheduling.md)
                           instead of running the chain on each message as it arrives
  --device SPEC            with --batch: none, auto, opencl:N, cuda:N, or an emulated device
                           emu:K=V,... (keys as `fulcrum run --help` lists) (auto)
  --policy P               with --batch: flowshader, cpu, device, fixed:X, round-robin (flowshader)
  --threshold N|auto       with --batch: unprocessed messages that start a round (auto: dynamic)
  --batch-timeout T        with --batch: longest a message waits for its round (100ms)
  --stats-json FILE        write the run's counters as JSON at the end
)";

bool number(const std::string& s, uint32_t& out) {
  return parse_value(s, out);
}

// The workers' BatchProcessors' counters, added up as each is destroyed at the end of the run.
struct BatchTotals {
  std::mutex mu;
  l7::BatchStats sum;
  std::string cpu_only_reason;
  std::vector<uint32_t> thresholds;
};

class CountedBatch final : public l7::Processor {
 public:
  CountedBatch(std::unique_ptr<l7::BatchProcessor> p, std::shared_ptr<BatchTotals> totals)
      : p_(std::move(p)), totals_(std::move(totals)) {}
  ~CountedBatch() override {
    const l7::BatchStats& s = p_->stats();
    std::lock_guard lock(totals_->mu);
    l7::BatchStats& t = totals_->sum;
    t.rounds += s.rounds;
    t.rounds_on_timeout += s.rounds_on_timeout;
    t.device_rounds += s.device_rounds;
    t.messages_cpu += s.messages_cpu;
    t.messages_device += s.messages_device;
    t.bytes_cpu += s.bytes_cpu;
    t.bytes_device += s.bytes_device;
    t.fallback_rounds += s.fallback_rounds;
    t.fallback_messages += s.fallback_messages;
    t.fits += s.fits;
    if (!p_->cpu_only_reason().empty()) totals_->cpu_only_reason = p_->cpu_only_reason();
    totals_->thresholds.push_back(p_->threshold());
  }
  void open_flow(l7::FlowId id) override { p_->open_flow(id); }
  void close_flow(l7::FlowId id) override { p_->close_flow(id); }
  void submit(l7::Message&& m) override { p_->submit(std::move(m)); }
  uint64_t poll(uint64_t now_ns, std::vector<l7::Message>& out) override {
    return p_->poll(now_ns, out);
  }

 private:
  std::unique_ptr<l7::BatchProcessor> p_;
  std::shared_ptr<BatchTotals> totals_;
};

std::string batch_summary(const BatchTotals& t, const std::string& device) {
  const l7::BatchStats& s = t.sum;
  std::string out = "batching: device " + device;
  if (!t.cpu_only_reason.empty()) out += " (CPU only: " + t.cpu_only_reason + ")";
  out += ", " + std::to_string(s.rounds) + " rounds (" + std::to_string(s.rounds_on_timeout) +
         " on the timeout, " + std::to_string(s.device_rounds) + " with a device part), messages " +
         std::to_string(s.messages_cpu) + " on the CPU / " + std::to_string(s.messages_device) +
         " on the device, " + std::to_string(s.fallback_messages) + " fell back, " +
         std::to_string(s.fits) + " cost-model fits, final thresholds";
  for (uint32_t th : t.thresholds) out += " " + std::to_string(th);
  return out + "\n";
}

}  // namespace

int cmd_proxy(const std::vector<std::string>& args) {
  l7::ProxyOptions opt;
  std::string config, stats_json, device_spec = "auto";
  bool batch = false;
  l7::BatchOptions batch_opt;
  std::vector<std::string> backends;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has = i + 1 < args.size();
    uint32_t n = 0;
    auto num = [&](uint32_t& out) {
      if (!has || !number(args[i + 1], n)) {
        std::fprintf(stderr, "fulcrum proxy: %s needs a number\n", a.c_str());
        return false;
      }
      out = n;
      ++i;
      return true;
    };
    bool ok = true;
    if (a == "--help" || a == "-h") {
      std::fputs(kProxyUsage, stdout);
      return 0;
    } else if (a == "--listen" && has) {
      opt.listen = args[++i];
    } else if (a == "--backend" && has) {
      backends.push_back(args[++i]);
    } else if (a == "--stats-json" && has) {
      stats_json = args[++i];
    } else if (a == "--health-path" && has) {
      opt.health.http_path = args[++i];
    } else if (a == "--workers") {
      ok = num(opt.workers);
    } else if (a == "--max-conns") {
      ok = num(opt.max_conns);
    } else if (a == "--idle-timeout-ms") {
      ok = num(opt.idle_timeout_ms);
    } else if (a == "--header-timeout-ms") {
      ok = num(opt.header_timeout_ms);
    } else if (a == "--max-pipeline") {
      ok = num(opt.max_pipeline) && opt.max_pipeline > 0;
    } else if (a == "--health-interval-ms") {
      ok = num(opt.health.interval_ms);
    } else if (a == "--health-fails") {
      ok = num(opt.health.fails) && opt.health.fails > 0;
    } else if (a == "--max-header-bytes" || a == "--max-headers" || a == "--max-body-bytes") {
      uint32_t v = 0;
      ok = num(v);
      if (a == "--max-header-bytes") opt.limits.max_header_bytes = v;
      if (a == "--max-headers") opt.limits.max_headers = v;
      if (a == "--max-body-bytes") opt.limits.max_body_bytes = v;
    } else if (a == "--no-pin") {
      opt.pin = false;
    } else if (a == "--batch") {
      batch = true;
    } else if (a == "--device" && has) {
      device_spec = args[++i];
    } else if ((a == "--policy" || a == "--threshold" || a == "--batch-timeout") && has) {
      const std::string& v = args[++i];
      const Status st = a == "--policy"      ? batch_opt.set_policy(v)
                        : a == "--threshold" ? batch_opt.set_threshold(v)
                                             : batch_opt.set_timeout(v);
      if (!st) {
        std::fprintf(stderr, "fulcrum proxy: %s: %s\n", a.c_str(), st.error().c_str());
        return 2;
      }
    } else if (!a.empty() && a[0] != '-' && config.empty()) {
      config = a;
    } else {
      std::fprintf(stderr, "fulcrum proxy: unexpected '%s'\n%s", a.c_str(), kProxyUsage);
      return 2;
    }
    if (!ok) return 2;
  }
  if (config.empty() || backends.empty()) {
    std::fprintf(stderr, "fulcrum proxy: needs CONFIG and at least one --backend\n%s", kProxyUsage);
    return 2;
  }
  // The default pool first (indices 0..n-1), then the configuration's own backends.
  l7::BackendTable& table = l7::BackendTable::global();
  for (const std::string& b : backends) {
    Result<int> idx = table.add(b);
    if (!idx) {
      std::fprintf(stderr, "fulcrum proxy: --backend %s\n", idx.error().c_str());
      return 2;
    }
    opt.backends.push_back(*idx);
  }
  // One chain per worker; the first load reports configuration errors before anything starts
  // and is the first worker's chain (a WAF's CRS is compiled once less).
  Result<std::unique_ptr<l7::Chain>> first_chain = l7::load_chain(config);
  if (!first_chain) {
    std::fprintf(stderr, "fulcrum proxy: %s\n", first_chain.error().c_str());
    return 2;
  }
  auto unused_chain = std::make_shared<std::unique_ptr<l7::Chain>>(std::move(*first_chain));
  // Two descriptors a connection: as many as the system allows.
  rlimit nofile{};
  if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
    nofile.rlim_cur = nofile.rlim_max;
    setrlimit(RLIMIT_NOFILE, &nofile);
  }
  // SIGINT/SIGTERM are taken by a thread of their own (the workers never see them); SIGUSR1
  // ends that thread when the proxy stops by itself. Blocked before any thread starts (device
  // backends start their own), so every thread inherits the mask.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  signal(SIGPIPE, SIG_IGN);
  std::shared_ptr<offload::Device> device;
  if (batch) {
    if (device_spec.rfind("emu:", 0) == 0 && device_spec.find('=') != std::string::npos) {
      DeviceOption emu;
      if (Status st = emu.add(device_spec); !st) {
        std::fprintf(stderr, "fulcrum proxy: --device %s\n", st.error().c_str());
        return 2;
      }
      emu.apply();
      device_spec = "emu:0";
    }
    Result<std::shared_ptr<offload::Device>> d = l7::select_l7_device(device_spec);
    if (!d) {
      std::fprintf(stderr, "fulcrum proxy: --device %s: %s\n", device_spec.c_str(),
                   d.error().c_str());
      return 2;
    }
    device = *d;
  }
  auto totals = std::make_shared<BatchTotals>();
  l7::ProcessorFactory factory = [config, batch, batch_opt, device, totals,
                                  unused_chain]() -> Result<std::unique_ptr<l7::Processor>> {
    std::shared_ptr<l7::Chain> chain;
    if (*unused_chain) {
      chain = std::move(*unused_chain);
    } else {
      Result<std::unique_ptr<l7::Chain>> c = l7::load_chain(config);
      if (!c) return make_error(c.error());
      chain = std::move(*c);
    }
    if (batch)
      return std::unique_ptr<l7::Processor>(
          new CountedBatch(std::make_unique<l7::BatchProcessor>(chain, device, batch_opt), totals));
    return std::unique_ptr<l7::Processor>(new l7::InlineProcessor(chain));
  };

  l7::Proxy proxy(opt, factory);
  std::thread waiter([&] {
    int sig = 0;
    sigwait(&set, &sig);
    if (sig != SIGUSR1) proxy.stop();
  });
  std::fprintf(stderr, "fulcrum proxy: %s -> %zu backend(s), %u worker(s)\n", opt.listen.c_str(),
               backends.size(), opt.workers);
  Result<l7::ProxyStats> stats = proxy.run();
  pthread_kill(waiter.native_handle(), SIGUSR1);
  waiter.join();
  if (!stats) {
    std::fprintf(stderr, "fulcrum proxy: %s\n", stats.error().c_str());
    return 1;
  }
  std::fputs(stats->summary().c_str(), stdout);
  if (batch)
    std::fputs(batch_summary(*totals, device ? device->info().name : "none").c_str(), stdout);
  for (size_t i = 0; i < table.size(); ++i)
    std::printf("backend %s: %s\n", table.name(static_cast<int>(i)).c_str(),
                table.up(static_cast<int>(i)) ? "up" : "down");
  if (!stats_json.empty()) {
    std::ofstream out(stats_json);
    out << stats->json();
    if (!out) {
      std::fprintf(stderr, "fulcrum proxy: cannot write %s\n", stats_json.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace fulcrum::cli
