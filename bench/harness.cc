#include "bench/harness.hh"

#include <pcap/pcap.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "bench/lpm_bench.hh"
#include "bench/raw_loops.hh"
#include "io/eal.hh"
#include "io/port.hh"
#include "lib/route_table.hh"
#include "runtime/runtime.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kSmallTable = 16384;
constexpr size_t kLargeTable = 500000;
constexpr size_t kLpmLookups = 1 << 24;
constexpr uint64_t kRouteSeed = 7;
constexpr uint32_t kPcapPackets = 1 << 16;
constexpr int kMaxChain = 9;
constexpr int kRepeats = 3;
const char* const kNullPort = "net_null0";
const char* const kNullTxOnly = "net_null1,no-rx=1";

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", v);
  return buf;
}

// A JSON object built field by field.
class Obj {
 public:
  Obj& num(const std::string& k, double v) { return raw(k, fmt(v)); }
  Obj& count(const std::string& k, uint64_t v) { return raw(k, std::to_string(v)); }
  Obj& str(const std::string& k, const std::string& v) { return raw(k, "\"" + v + "\""); }
  Obj& raw(const std::string& k, const std::string& v) {
    body_ += (body_.empty() ? "" : ", ") + ("\"" + k + "\": ") + v;
    return *this;
  }
  std::string done() const { return "{" + body_ + "}"; }

 private:
  std::string body_;
};

std::string array(const std::vector<std::string>& items, const char* indent = "\n      ") {
  std::string out = "[";
  for (size_t i = 0; i < items.size(); ++i) out += (i ? "," : "") + std::string(indent) + items[i];
  return out + "]";
}

struct Measured {
  double mpps = 0;
  bool balanced = false;
};

Measured measure_once(const std::string& pipeline, const std::vector<std::string>& ports,
                      double seconds, BranchMode mode) {
  RunOptions o;
  o.pipeline_file = "bench.click";
  o.pipeline_text = pipeline;
  o.ports = ports;
  o.seconds = seconds;
  o.branch = mode;
  Result<RunReport> r = run(o);
  if (!r) {
    std::fprintf(stderr, "bench: %s\n", r.error().c_str());
    return {};
  }
  return Measured{r.value().mpps_in(), r.value().balanced()};
}

// The median of kRepeats runs: this machine is shared and single runs vary by 10-20%.
Measured measure(const std::string& pipeline, const std::vector<std::string>& ports, double seconds,
                 BranchMode mode = BranchMode::kReuse) {
  std::vector<Measured> runs;
  for (int i = 0; i < kRepeats; ++i)
    runs.push_back(measure_once(pipeline, ports, seconds / kRepeats, mode));
  std::sort(runs.begin(), runs.end(),
            [](const Measured& a, const Measured& b) { return a.mpps < b.mpps; });
  Measured m = runs[runs.size() / 2];
  for (const Measured& r : runs) m.balanced &= r.balanced;
  return m;
}

// Two pipelines measured alternately, kRepeats times each; medians of both.
std::pair<Measured, Measured> measure_pair(const std::string& a, const std::string& b,
                                           const std::vector<std::string>& ports, double seconds,
                                           BranchMode mode_b) {
  std::vector<double> ra, rb;
  for (int i = 0; i < kRepeats; ++i) {
    ra.push_back(measure_once(a, ports, seconds / kRepeats, BranchMode::kReuse).mpps);
    rb.push_back(measure_once(b, ports, seconds / kRepeats, mode_b).mpps);
  }
  std::sort(ra.begin(), ra.end());
  std::sort(rb.begin(), rb.end());
  return {Measured{ra[ra.size() / 2], true}, Measured{rb[rb.size() / 2], true}};
}

// Least-squares slope of y over x.
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

std::string bench_generator(double s) {
  const double mpps = raw_echo_mpps("gen:size=64,flows=1024", s);
  std::fprintf(stderr, "bench: generator alone %.2f Mpps\n", mpps);
  return Obj()
      .str("what", "built-in generator alone: rx_burst + discard, 64 B")
      .num("mpps", mpps)
      .done();
}

std::string bench_noop_chain(double s) {
  std::vector<double> ks, ns;
  std::vector<std::string> rows;
  for (int k = 0; k <= kMaxChain; ++k) {
    std::string p = "FromInput";
    for (int i = 0; i < k; ++i) p += " -> NoOp";
    p += " -> ToOutput;";
    Measured m = measure(p, {kNullPort}, s);
    ks.push_back(k);
    ns.push_back(m.mpps > 0 ? 1e3 / m.mpps : 0);
    rows.push_back(
        Obj().num("noops", k).num("mpps", m.mpps).num("ns_per_packet", ns.back()).done());
    std::fprintf(stderr, "bench: noop chain %d: %.2f Mpps\n", k, m.mpps);
  }
  return Obj()
      .str("what", "FromInput -> NoOp x k -> ToOutput over net_null, 64 B")
      .num("ns_per_packet_per_element", slope(ks, ns))
      .raw("points", array(rows))
      .done();
}

std::string bench_l2_echo(double s) {
  Measured m = measure("FromInput -> EtherMirror -> ToOutput;", {kNullPort}, s);
  const double raw = raw_echo_mpps(kNullPort, s);
  std::fprintf(stderr, "bench: l2 echo %.2f Mpps (raw net_null rx+tx %.2f)\n", m.mpps, raw);
  return Obj()
      .str("what", "L2 echo (EtherMirror) over net_null vs bare rx_burst+tx_burst loop")
      .num("mpps", m.mpps)
      .num("raw_loop_mpps", raw)
      .num("ratio", raw > 0 ? m.mpps / raw : 0)
      .done();
}

std::string bench_branch(double s) {
  const std::string tail = "s[0] -> EtherMirror -> ToOutput; s[1] -> EtherMirror -> ToOutput;";
  auto pipeline = [&](double f) {
    return "FromInput -> s :: RandomSplit(" + fmt(f) + "); " + tail;
  };
  std::vector<std::string> rows;
  for (double f : {0.01, 0.10, 0.50}) {
    for (BranchMode mode : {BranchMode::kReuse, BranchMode::kSplit}) {
      auto [base, m] = measure_pair(pipeline(0), pipeline(f), {kNullPort}, s, mode);
      const char* name = mode == BranchMode::kReuse ? "reuse" : "split";
      std::fprintf(stderr, "bench: branch %.0f/%.0f %s: %.2f Mpps (no branch %.2f)\n",
                   (1 - f) * 100, f * 100, name, m.mpps, base.mpps);
      rows.push_back(Obj()
                         .num("minority_share", f)
                         .str("mode", name)
                         .num("mpps", m.mpps)
                         .num("no_branch_mpps", base.mpps)
                         .num("ratio_to_no_branch", base.mpps > 0 ? m.mpps / base.mpps : 0)
                         .done());
    }
  }
  return Obj()
      .str("what",
           "RandomSplit(f) -> two EtherMirror paths over net_null, reuse vs naive split; "
           "no branch = RandomSplit(0), measured alternately with each point")
      .raw("points", array(rows))
      .done();
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

std::string bench_router(double s, size_t routes, const std::string& dir) {
  const std::string file = dir + "/routes-" + std::to_string(routes) + ".txt";
  if (Status st = write_routes4(file, generate_routes4(routes, kRouteSeed, 2)); !st) return "null";
  const auto load_start = std::chrono::steady_clock::now();
  const bool loaded = load_routes4(file).ok();
  const double load_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - load_start)
          .count();
  const std::string pipeline = "FromInput -> CheckIPHeader -> IPLookup(\"" + file +
                               "\") -> DecIPTTL -> EtherRewrite(DEFAULT \"02:00:00:00:00:01 "
                               "02:00:00:00:00:02\") -> ToOutput;";
  const std::string gen = "gen:size=64,flows=65536,dst=routes,routes=" + file;
  Measured from_gen = measure(pipeline, {gen, kNullTxOnly}, s);
  const std::string pcap = dir + "/router-" + std::to_string(routes) + ".pcap";
  Measured from_pcap;
  if (Status st = write_pcap_from_generator(gen, pcap, kPcapPackets); st)
    from_pcap = measure(pipeline, {"net_pcap0,rx_pcap=" + pcap + ",infinite_rx=1", kNullTxOnly}, s);
  const double raw_pcap = raw_echo_mpps("net_pcap1,rx_pcap=" + pcap + ",infinite_rx=1", s);
  LpmBenchResult lpm = bench_lpm(routes, kLpmLookups, kRouteSeed);
  std::fprintf(stderr,
               "bench: router %zu routes (file loads in %.0f ms): gen %.2f Mpps, pcap %.2f Mpps "
               "(raw pcap loop %.2f); "
               "lookups/s ours %.1f M, rte_lpm %.1f M\n",
               routes, load_ms, from_gen.mpps, from_pcap.mpps, raw_pcap, lpm.ours_mlookups_per_s,
               lpm.rte_lpm_mlookups_per_s);
  return Obj()
      .count("routes", routes)
      .num("route_file_load_ms", loaded ? load_ms : -1)
      .num("mpps_from_generator", from_gen.mpps)
      .num("mpps_from_pcap_replay", from_pcap.mpps)
      .num("raw_pcap_replay_loop_mpps", raw_pcap)
      .num("dir24_8_bulk_mlookups", lpm.ours_mlookups_per_s)
      .num("rte_lpm_bulk_mlookups", lpm.rte_lpm_mlookups_per_s)
      .num("router_to_rte_lpm_ratio",
           lpm.rte_lpm_mlookups_per_s > 0 ? from_gen.mpps / lpm.rte_lpm_mlookups_per_s : 0)
      .num("dir24_8_to_rte_lpm_ratio", lpm.rte_lpm_mlookups_per_s > 0
                                           ? lpm.ours_mlookups_per_s / lpm.rte_lpm_mlookups_per_s
                                           : 0)
      .num("build_ms_dir24_8", lpm.build_ms_ours)
      .num("build_ms_rte_lpm", lpm.build_ms_rte)
      .done();
}

}  // namespace

int run_benchmarks(const BenchOptions& options) {
  EalOptions eal;
  eal.workers = 1;
  eal.memory_mb = 2048;
  if (Status st = init_eal(eal); !st) {
    std::fprintf(stderr, "fulcrum bench: %s\n", st.error().c_str());
    return 1;
  }
  const std::string dir =
      (std::filesystem::temp_directory_path() / ("fulcrum-bench-" + std::to_string(getpid())))
          .string();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    std::fprintf(stderr, "fulcrum bench: cannot create %s: %s\n", dir.c_str(),
                 ec.message().c_str());
    return 1;
  }
  const double s = options.seconds;
  auto wanted = [&](const char* name) {
    return options.only.empty() || std::string(name).find(options.only) != std::string::npos;
  };

  std::vector<std::string> groups;
  if (wanted("generator")) groups.push_back("\"generator\": " + bench_generator(s));
  if (wanted("noop_chain")) groups.push_back("\"noop_chain\": " + bench_noop_chain(s));
  if (wanted("l2_echo")) groups.push_back("\"l2_echo\": " + bench_l2_echo(s));
  if (wanted("branch")) groups.push_back("\"branch\": " + bench_branch(s));
  if (wanted("ipv4_router")) {
    std::vector<std::string> rows{bench_router(s, kSmallTable, dir)};
    if (options.large_tables) rows.push_back(bench_router(s, kLargeTable, dir));
    groups.push_back("\"ipv4_router\": " + array(rows));
  }
  std::filesystem::remove_all(dir);

  std::string json = "{\n  \"machine_cores\": " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
                     ",\n  \"seconds_per_point\": " + fmt(s) +
                     ",\n  \"workers\": 1,\n  \"batch\": 64";
  for (const std::string& g : groups) json += ",\n  " + g;
  json += "\n}\n";
  if (options.out.empty()) {
    std::fputs(json.c_str(), stdout);
  } else {
    std::ofstream(options.out) << json;
    std::fprintf(stderr, "bench: wrote %s\n", options.out.c_str());
  }
  return 0;
}

}  // namespace fulcrum::bench
