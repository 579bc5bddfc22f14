#include "bench/measure.hh"

#include <pcap/pcap.h>
#include <rte_mbuf.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "core/median.hh"
#include "io/port.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

std::string array(const std::vector<std::string>& items, const char* indent) {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + std::string(indent) + items[i];
  return out + "]";
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  if (!in) return "";
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

Result<RunReport> run_pipeline(const std::string& pipeline, const std::vector<std::string>& ports,
                               double seconds, int workers, BranchMode mode) {
  RunOptions o;
  o.pipeline_file = "bench.click";
  o.pipeline_text = pipeline;
  o.ports = ports;
  o.seconds = seconds;
  o.workers = workers;
  o.branch = mode;
  return run(o);
}

Measured measure_once(const std::string& pipeline, const std::vector<std::string>& ports,
                      double seconds, BranchMode mode) {
  Result<RunReport> r = run_pipeline(pipeline, ports, seconds, 1, mode);
  if (!r) {
    std::fprintf(stderr, "bench: %s\n", r.error().c_str());
    return {};
  }
  return Measured{r.value().mpps_in(), r.value().balanced(), cpu_mpps(r.value())};
}

double cpu_mpps(const RunReport& r) {
  double cpu = 0;
  for (const WorkerReport& w : r.per_worker) cpu += w.cpu_s;
  return cpu > 0 ? static_cast<double>(r.packets_in) / cpu / 1e6 : 0;
}

Measured measure(const std::string& pipeline, const std::vector<std::string>& ports, double seconds,
                 BranchMode mode) {
  std::vector<Measured> runs;
  for (int i = 0; i < kRepeats; ++i)
    runs.push_back(measure_once(pipeline, ports, seconds / kRepeats, mode));
  std::sort(runs.begin(), runs.end(),
            [](const Measured& a, const Measured& b) { return a.mpps < b.mpps; });
  Measured m = runs[runs.size() / 2];
  std::vector<double> cpu;
  for (const Measured& r : runs) m.balanced &= r.balanced, cpu.push_back(r.cpu_mpps);
  m.cpu_mpps = median_in_place(cpu);
  return m;
}

std::pair<Measured, Measured> measure_pair(const std::string& a, const std::string& b,
                                           const std::vector<std::string>& ports, double seconds,
                                           BranchMode mode_b) {
  std::vector<double> ra, rb;
  for (int i = 0; i < kRepeats; ++i) {
    ra.push_back(measure_once(a, ports, seconds / kRepeats, BranchMode::kReuse).mpps);
    rb.push_back(measure_once(b, ports, seconds / kRepeats, mode_b).mpps);
  }
  return {Measured{median_in_place(ra), true}, Measured{median_in_place(rb), true}};
}

double slope(const std::vector<double>& x, const std::vector<double>& y) {
  double mx = 0, my = 0;
  for (size_t i = 0; i < x.size(); ++i) mx += x[i], my += y[i];
  mx /= static_cast<double>(x.size());
  my /= static_cast<double>(y.size());
  double sxy = 0, sxx = 0;
  for (size_t i = 0; i < x.size(); ++i)
    sxy += (x[i] - mx) * (y[i] - my), sxx += (x[i] - mx) * (x[i] - mx);
  return sxx > 0 ? sxy / sxx : 0;
}

bool write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* dump = pcap_dump_open(dead, path.c_str());
  if (dump == nullptr) {
    pcap_close(dead);
    return false;
  }
  for (const auto& f : frames) {
    pcap_pkthdr h{};
    h.caplen = h.len = static_cast<uint32_t>(f.size());
    pcap_dump(reinterpret_cast<u_char*>(dump), &h, f.data());
  }
  pcap_dump_close(dump);
  pcap_close(dead);
  return true;
}

Status write_pcap_from_generator(const std::string& gen, const std::string& path, uint32_t count) {
  Result<std::unique_ptr<Port>> port = open_port(gen, PortConfig{});
  if (!port) return make_error(port.error());
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* dump = pcap_dump_open(dead, path.c_str());
  if (dump == nullptr) {
    pcap_close(dead);
    return make_error("cannot write " + path);
  }
  Packet* pkts[64];
  uint32_t written = 0;
  while (written < count) {
    uint16_t n = port.value()->rx_burst(0, pkts, 64);
    for (uint16_t i = 0; i < n; ++i) {
      pcap_pkthdr h{};
      h.caplen = h.len = rte_pktmbuf_data_len(pkts[i]);
      pcap_dump(reinterpret_cast<u_char*>(dump), &h, rte_pktmbuf_mtod(pkts[i], const u_char*));
    }
    rte_pktmbuf_free_bulk(pkts, n);
    written += n;
  }
  pcap_dump_close(dump);
  pcap_close(dead);
  return {};
}

}  // namespace fulcrum::bench
