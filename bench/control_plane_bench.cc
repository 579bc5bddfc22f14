// The cost of operating a run live (issue 13): the IPv4 router on one worker, measured alternately
// without the control plane and with it (live snapshots every 100 ms, the HTTP server on the
// control core and a scraper fetching /metrics every 100 ms, as a Prometheus server polling fast
// would); and the cost of the per-element cycle accounting (one TSC read pair per element and
// batch), measured directly.
#include <httplib.h>
#include <rte_cycles.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "control/http_server.hh"
#include "core/median.hh"
#include "lib/route_table.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kRoutes = 16384;
constexpr uint64_t kRouteSeed = 7;
constexpr auto kScrapePeriod = std::chrono::milliseconds(100);
constexpr uint32_t kTscPairs = 1 << 22;
constexpr int kHttpOk = 200;
constexpr int kHttpNotLiveYet = 503;

struct RouterRun {
  double mpps = 0;
  uint64_t scrapes = 0, scrape_failures = 0, metrics_bytes = 0;
};

RouterRun run_router(const std::string& routes, double seconds, bool control) {
  RunOptions o;
  o.pipeline_file = "bench.click";
  o.pipeline_text = "FromInput -> CheckIPHeader -> IPLookup(\"" + routes +
                    "\") -> DecIPTTL -> EtherRewrite(DEFAULT \"02:00:00:00:00:01 "
                    "02:00:00:00:00:02\") -> ToOutput;";
  o.ports = {"gen:size=64,flows=65536,dst=routes,routes=" + routes, "net_null1,no-rx=1"};
  o.seconds = seconds;
  RouterRun out;
  LiveView view;
  std::unique_ptr<control::ControlServer> server;
  std::atomic<bool> done{false};
  std::thread scraper;
  if (control) {
    Result<std::unique_ptr<control::ControlServer>> s =
        control::ControlServer::start(control::ListenAddress{"127.0.0.1", 0}, view);
    if (!s) {
      std::fprintf(stderr, "bench: control plane: %s\n", s.error().c_str());
      return out;
    }
    server = std::move(s.value());
    o.live = &view;
    scraper = std::thread([&, url = server->url()] {
      httplib::Client client(url.substr(0, url.size() - 1));
      while (!done.load()) {
        const httplib::Result r = client.Get("/metrics");
        // 503 until the first live state: not a failure.
        if (r && r->status == kHttpOk) {
          ++out.scrapes;
          out.metrics_bytes = r->body.size();
        } else if (!r || r->status != kHttpNotLiveYet) {
          ++out.scrape_failures;
        }
        std::this_thread::sleep_for(kScrapePeriod);
      }
    });
  }
  Result<RunReport> r = run(o);
  done.store(true);
  if (scraper.joinable()) scraper.join();
  if (!r) {
    std::fprintf(stderr, "bench: %s\n", r.error().c_str());
    return out;
  }
  out.mpps = r.value().mpps_in();
  return out;
}

// Cycles of one rte_rdtsc() pair with the addition the graph does around every process_batch.
double tsc_pair_cycles() {
  uint64_t sink = 0;
  const uint64_t start = rte_rdtsc();
  for (uint32_t i = 0; i < kTscPairs; ++i) {
    const uint64_t t0 = rte_rdtsc();
    sink += rte_rdtsc() - t0;
  }
  const uint64_t spent = rte_rdtsc() - start;
  asm volatile("" : : "r"(sink));
  return static_cast<double>(spent) / kTscPairs;
}

std::string bench_control_plane(const BenchContext& ctx) {
  const std::string routes = ctx.dir + "/control-routes.txt";
  if (Status st = write_routes4(routes, generate_routes4(kRoutes, kRouteSeed, 2)); !st)
    return "null";
  std::vector<double> off, on;
  RouterRun last_on;
  for (int i = 0; i < kRepeats; ++i) {
    off.push_back(run_router(routes, ctx.seconds / kRepeats, false).mpps);
    last_on = run_router(routes, ctx.seconds / kRepeats, true);
    on.push_back(last_on.mpps);
  }
  const double m_off = median(off), m_on = median(on);
  const double pair = tsc_pair_cycles();
  std::fprintf(stderr,
               "bench: control plane: router %.2f Mpps without, %.2f Mpps with (%.2f%%), "
               "%llu scrapes of %llu B in the last run; cycle accounting %.1f cycles per "
               "element and batch\n",
               m_off, m_on, m_off > 0 ? (m_on / m_off - 1) * 100 : 0,
               static_cast<unsigned long long>(last_on.scrapes),
               static_cast<unsigned long long>(last_on.metrics_bytes), pair);
  return Obj()
      .str("what",
           "IPv4 router (16k routes, generator, 1 worker) without and with the control plane "
           "(--http, live snapshots every 100 ms, /metrics scraped every 100 ms), alternately; "
           "the per-element cycle accounting's TSC read pair")
      .num("mpps_off", m_off)
      .num("mpps_on", m_on)
      .num("ratio", m_off > 0 ? m_on / m_off : 0)
      .count("scrapes_last_run", last_on.scrapes)
      .count("scrape_failures_last_run", last_on.scrape_failures)
      .count("metrics_bytes", last_on.metrics_bytes)
      .num("cycle_accounting_cycles_per_element_batch", pair)
      .num("cycle_accounting_cycles_per_packet_at_batch_64", pair / kDefaultBatch)
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(98, "control_plane", bench_control_plane);

}  // namespace fulcrum::bench
