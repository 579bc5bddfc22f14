// Measurement helpers shared by the benchmark groups: pipeline runs (medians of repeats),
// a small JSON writer, and traffic files made by the generator.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "core/graph.hh"
#include "core/median.hh"
#include "core/result.hh"
#include "core/thread_clock.hh"
#include "runtime/stats.hh"

namespace fulcrum::bench {

inline constexpr int kRepeats = 3;

std::string fmt(double v);

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

std::string array(const std::vector<std::string>& items, const char* indent = "\n      ");

// A file's whole text; "" when it cannot be read.
std::string read_text(const std::string& path);

struct Measured {
  double mpps = 0;
  bool balanced = false;
  // Packets per second of the worker's CPU time (M): what other processes on a shared core
  // take out of the wall-clock rate is not in it (RunReport's WorkerReport::cpu_s).
  double cpu_mpps = 0;
};

// Packets in per second of the workers' CPU time, in millions.
double cpu_mpps(const RunReport& r);
// One run of `pipeline` (Click text) on `ports` for `seconds` on `workers` workers: its report.
Result<RunReport> run_pipeline(const std::string& pipeline, const std::vector<std::string>& ports,
                               double seconds, int workers = 1,
                               BranchMode mode = BranchMode::kReuse);
// One run of `pipeline` (Click text) on `ports` for `seconds`, one worker.
Measured measure_once(const std::string& pipeline, const std::vector<std::string>& ports,
                      double seconds, BranchMode mode);
// The median of kRepeats runs: this machine is shared and single runs vary by 10-20%.
Measured measure(const std::string& pipeline, const std::vector<std::string>& ports, double seconds,
                 BranchMode mode = BranchMode::kReuse);
// Two pipelines measured alternately, kRepeats times each; medians of both.
std::pair<Measured, Measured> measure_pair(const std::string& a, const std::string& b,
                                           const std::vector<std::string>& ports, double seconds,
                                           BranchMode mode_b);

// A rate measured against both clocks: wall-clock, and the CPU time the measuring thread got
// (what other processes on a shared core take is not in the second).
struct Rates {
  double mpps = 0;
  double cpu_mpps = 0;
};

// Calls `one` (one packet's work) in chunks of 1024 until `seconds` pass; returns calls per
// second in millions, per wall-clock and per CPU second (for library ceilings measured next to a
// pipeline).
template <class F>
Rates rates(double seconds, F&& one) {
  using Clock = std::chrono::steady_clock;
  constexpr uint32_t kChunk = 1024;  // calls between clock reads
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  uint64_t n = 0;
  double elapsed = 0;
  do {
    for (uint32_t i = 0; i < kChunk; ++i) one();
    n += kChunk;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  const double cpu = thread_cpu_seconds() - cpu_start;
  const auto calls = static_cast<double>(n);
  return Rates{calls / elapsed / 1e6, cpu > 0 ? calls / cpu / 1e6 : 0};
}
// rates()'s wall-clock rate.
template <class F>
double rate_mpps(double seconds, F&& one) {
  return rates(seconds, one).mpps;
}

// The median of `v` (core/median.hh's convention: the upper one of an even count, 0 when empty).
// New code calls median(); this name stays while packet_cost_bench.cc, edited elsewhere, uses it.
inline double median_of(std::vector<double> v) {
  return median_in_place(v);
}
// Least-squares slope of y over x.
double slope(const std::vector<double>& x, const std::vector<double>& y);
// Writes `count` frames from a generator spec ("gen:...") to a pcap file.
Status write_pcap_from_generator(const std::string& gen, const std::string& path, uint32_t count);
// Writes `frames` (Ethernet frames) to a pcap file; false when it cannot be written.
bool write_pcap(const std::string& path, const std::vector<std::vector<uint8_t>>& frames);

}  // namespace fulcrum::bench
