#include "bench/raw_loops.hh"

#include <rte_cycles.h>
#include <rte_launch.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include "core/thread_clock.hh"
#include "io/port.hh"

namespace fulcrum::bench {
namespace {

struct EchoJob {
  Port* port;
  double seconds;
  unsigned burst;
  uint64_t packets = 0;
  double elapsed = 0;
  double cpu_s = 0;
};

int echo_loop(void* arg) {
  auto* job = static_cast<EchoJob*>(arg);
  Packet* pkts[256];
  const uint64_t hz = rte_get_tsc_hz();
  const double cpu_start = thread_cpu_seconds();
  const uint64_t start = rte_rdtsc();
  const uint64_t end = start + static_cast<uint64_t>(job->seconds * static_cast<double>(hz));
  uint64_t n = 0;
  uint64_t now = start;
  while (now < end) {
    for (int i = 0; i < 64; ++i) {
      const uint16_t got = job->port->rx_burst(0, pkts, static_cast<uint16_t>(job->burst));
      const uint16_t sent = job->port->tx_burst(0, pkts, got);
      if (sent < got) rte_pktmbuf_free_bulk(pkts + sent, got - sent);
      n += got;
    }
    now = rte_rdtsc();
  }
  job->packets = n;
  job->elapsed = static_cast<double>(now - start) / static_cast<double>(hz);
  job->cpu_s = thread_cpu_seconds() - cpu_start;
  return 0;
}

}  // namespace

RawRate raw_echo(const std::string& port_spec, double seconds, unsigned burst) {
  PortConfig pc;
  Result<std::unique_ptr<Port>> port = open_port(port_spec, pc);
  if (!port) return {};
  EchoJob job{port.value().get(), seconds, burst};
  const unsigned lcore = rte_get_next_lcore(rte_get_main_lcore(), 1, 0);
  rte_eal_remote_launch(echo_loop, &job, lcore);
  rte_eal_wait_lcore(lcore);
  port.value()->stop();
  const auto n = static_cast<double>(job.packets);
  return RawRate{job.elapsed > 0 ? n / job.elapsed / 1e6 : 0,
                 job.cpu_s > 0 ? n / job.cpu_s / 1e6 : 0};
}

}  // namespace fulcrum::bench
