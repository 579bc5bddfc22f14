// FlowShader's flow scheduling result (paper 004 Fig. 11) and its dynamic threshold (Fig. 15),
// on this machine: `fulcrum bench --only l7`.
//
// Traffic: kFlows flows, each sending one message per turn, the turn's messages interleaved at
// random, made in memory (no sockets). Message sizes are zipf-like across flows: size_i ∝
// (i + 1)^-alpha with alpha chosen so that the largest over the mean (the paper's skewness
// ratio) is the ratio asked, the mean kMeanBytes, at least 32 B, the largest several MB at the
// highest ratio; each message's size is drawn within ±kJitter of its flow's (so that the cost
// model's regression sees rounds that differ). The chain: kTouches Touch NFs (a fused kernel of
// kTouches passes per byte: "Touch with more work per byte").
//
// For each device, skewness ratio and policy (flowshader, cpu, device, fixed:10, fixed:20,
// round-robin), a BatchProcessor with a fixed threshold of one turn's messages runs
// 30 x --seconds rounds after a warm-up (kWarmupRounds rounds, where the cost model is fitted
// every kRefitRounds rounds; the paper's 200 would take minutes per point here): messages/s and
// Gbps of message bytes, the share of bytes the device took, the device flows' unevenness.
// Rounds, not seconds: in virtual time a device-heavy run's real time is its host compute.
// Devices: an emulated GPU-like device (offload/emu/, a SIMT model: 56 compute units of 64 lanes,
// a lane kLaneSlowdown times slower than this host's core, 12 GB/s copies; host_free: its time is
// the model's, the host's time computing its results is off the clock — virtual time; labelled
// emulated, it is not a GPU) and the first real device (PoCL's OpenCL CPU device here, which
// shares this machine's cores with the CPU part: wall-clock time).
// Then, on the emulated device at ratio 5 (the paper's Fig. 13-15 setting), the dynamic
// threshold from 32: threshold and throughput every kTracePeriodMs.
// tools/plot_l7.py draws both.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "l7/flow/batch_processor.hh"
#include "l7/nf/touch.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_spec.hh"

namespace fulcrum::bench {
namespace {

using l7::BatchOptions;
using l7::BatchProcessor;
using l7::Message;

constexpr size_t kFlows = 2000;
constexpr double kMeanBytes = 8192;
constexpr double kMinBytes = 32;
constexpr double kJitter = 0.25;
constexpr size_t kTouches = 4;
constexpr uint32_t kWarmupRounds = 20;
constexpr uint32_t kRefitRounds = 5;
constexpr double kMeasureRounds = 30;  // per --seconds
constexpr double kRatios[] = {1, 5, 32, 512};
constexpr const char* kPolicies[] = {"flowshader", "cpu",      "device",
                                     "fixed:10",   "fixed:20", "round-robin"};
constexpr double kTraceRatio = 5;
constexpr double kTraceShare = 4;  // of --seconds, the dynamic-threshold run (virtual time)
constexpr double kMinTraceS = 4;
constexpr uint64_t kTracePeriodMs = 100;
constexpr uint64_t kThresholdPeriodMs = 100;  // the dynamic threshold's measuring period here
constexpr size_t kTraceFlows = 5000;          // the paper's Fig. 13-15: 5,000 flows
constexpr double kTraceMeanBytes = 1024;      // and 1 KB messages
constexpr double kBitsPerByte = 8;
constexpr double kGiga = 1e9;

const char* const kEmuSpec =
    "h2d_gbps=12,d2h_gbps=12,launch_us=10,units=56,lane_slowdown=10,host_free=1";

// Flow sizes with max / mean = ratio (zipf-like, alpha found by bisection).
std::vector<double> flow_sizes(size_t n, double ratio, double mean) {
  auto sizes = [&](double alpha) {
    std::vector<double> s(n);
    double sum = 0;
    for (size_t i = 0; i < n; ++i) sum += s[i] = std::pow(static_cast<double>(i + 1), -alpha);
    for (double& x : s) x = std::max(kMinBytes, x * mean * static_cast<double>(n) / sum);
    return s;
  };
  double lo = 0, hi = 8;
  for (int k = 0; k < 60 && ratio > 1; ++k) {
    const double mid = (lo + hi) / 2;
    const std::vector<double> s = sizes(mid);
    double sum = 0;
    for (double x : s) sum += x;
    (s[0] / (sum / static_cast<double>(n)) < ratio ? lo : hi) = mid;
  }
  return sizes(ratio > 1 ? lo : 0);
}

std::shared_ptr<l7::Chain> chain() {
  auto c = std::make_shared<l7::Chain>();
  for (size_t i = 0; i < kTouches; ++i) c->add(std::make_unique<l7::Touch>());
  return c;
}

struct Traffic {
  std::vector<double> sizes;
  std::vector<uint8_t> source;  // bodies are copied from here
  std::mt19937_64 rng{1};
  std::vector<l7::FlowId> order;

  Traffic(size_t flows, double ratio, double mean) : sizes(flow_sizes(flows, ratio, mean)) {
    const double largest = *std::max_element(sizes.begin(), sizes.end());
    source.resize(static_cast<size_t>(largest * (1 + kJitter)) + 1);
    for (uint8_t& b : source) b = static_cast<uint8_t>(rng());
    for (size_t f = 0; f < sizes.size(); ++f) order.push_back(f + 1);
  }
  // One turn: a message of every flow, in random order.
  template <class F>
  void turn(F&& submit) {
    std::shuffle(order.begin(), order.end(), rng);
    std::uniform_real_distribution<double> jit(1 - kJitter, 1 + kJitter);
    for (l7::FlowId f : order) {
      Message m;
      m.flow = f;
      m.http = false;
      m.body.resize(static_cast<size_t>(sizes[f - 1] * jit(rng)));
      std::memcpy(m.body.data(), source.data(), m.body.size());
      submit(std::move(m));
    }
  }
};

struct Point {
  double msgs_per_s = 0, gbps = 0, device_bytes_share = 0, unevenness = 0;
  uint64_t rounds = 0, fits = 0, fallback = 0;
};

Point run_policy(const std::shared_ptr<offload::Device>& dev, Traffic& traffic,
                 const std::string& policy, uint64_t rounds) {
  BatchOptions opt;
  (void)opt.set_policy(policy);
  (void)opt.set_threshold(std::to_string(traffic.sizes.size()));
  opt.refit_rounds = kRefitRounds;
  BatchProcessor proc(chain(), dev, opt);
  std::vector<Message> out;
  uint64_t msgs = 0, bytes = 0;
  auto submit = [&](Message&& m) {
    proc.submit(std::move(m));
    proc.poll(l7::l7_clock_ns(), out);
  };
  // Closed loop, as the paper's clients (the next request after the response): a turn is sent
  // once the last one has gone into a round, so a device slower than the traffic holds it back
  // instead of queueing without bound.
  auto next_turn = [&] {
    while (proc.unprocessed() >= traffic.sizes.size()) proc.poll(l7::l7_clock_ns(), out);
    traffic.turn(submit);
  };
  while (proc.stats().rounds < kWarmupRounds) next_turn();
  proc.flush(out);
  out.clear();
  const l7::BatchStats before = proc.stats();
  const uint64_t t0 = l7::l7_clock_ns();
  while (proc.stats().rounds - before.rounds < rounds) {
    next_turn();
    for (const Message& m : out) bytes += m.body.size();
    msgs += out.size();
    out.clear();
  }
  proc.flush(out);
  for (const Message& m : out) bytes += m.body.size();
  msgs += out.size();
  const double s = static_cast<double>(l7::l7_clock_ns() - t0) / kGiga;
  const l7::BatchStats& st = proc.stats();
  Point p;
  p.msgs_per_s = static_cast<double>(msgs) / s;
  p.gbps = static_cast<double>(bytes) * kBitsPerByte / s / kGiga;
  const double dev_bytes = static_cast<double>(st.bytes_device - before.bytes_device);
  const double all_bytes = dev_bytes + static_cast<double>(st.bytes_cpu - before.bytes_cpu);
  p.device_bytes_share = all_bytes > 0 ? dev_bytes / all_bytes : 0;
  const uint64_t dev_rounds = st.device_rounds - before.device_rounds;
  p.unevenness = dev_rounds > 0 ? (st.device_unevenness_sum - before.device_unevenness_sum) /
                                      static_cast<double>(dev_rounds)
                                : 0;
  p.rounds = st.rounds - before.rounds;
  p.fits = st.fits;
  p.fallback = st.fallback_messages;
  return p;
}

std::string device_runs(const std::shared_ptr<offload::Device>& dev, const std::string& name,
                        bool emulated, uint64_t rounds) {
  Obj j;
  j.str("profile", name).str("device", dev->label()).raw("emulated", emulated ? "true" : "false");
  j.str("clock", emulated ? "virtual (host_free: the device's time is the model's)" : "wall");
  std::vector<std::string> rows;
  for (double ratio : kRatios) {
    Traffic traffic(kFlows, ratio, kMeanBytes);
    Obj r;
    r.num("skewness_ratio", ratio)
        .num("largest_bytes", *std::max_element(traffic.sizes.begin(), traffic.sizes.end()))
        .num("smallest_bytes", *std::min_element(traffic.sizes.begin(), traffic.sizes.end()));
    std::vector<std::string> pols;
    for (const char* policy : kPolicies) {
      const Point p = run_policy(dev, traffic, policy, rounds);
      std::fprintf(stderr,
                   "bench: l7 %s ratio %g %-11s %9.0f msg/s %6.2f Gbit/s device bytes %5.1f %% "
                   "unevenness %.2f (%llu rounds, %llu fits)\n",
                   name.c_str(), ratio, policy, p.msgs_per_s, p.gbps, 100 * p.device_bytes_share,
                   p.unevenness, static_cast<unsigned long long>(p.rounds),
                   static_cast<unsigned long long>(p.fits));
      pols.push_back(Obj()
                         .str("policy", policy)
                         .num("messages_per_s", p.msgs_per_s)
                         .num("gbps", p.gbps)
                         .num("device_bytes_share", p.device_bytes_share)
                         .num("device_unevenness", p.unevenness)
                         .count("rounds", p.rounds)
                         .count("fits", p.fits)
                         .count("fallback_messages", p.fallback)
                         .done());
    }
    rows.push_back(r.raw("policies", array(pols, "\n        ")).done());
  }
  return j.raw("ratios", array(rows)).done();
}

// The dynamic threshold from 32 (flowshader policy): every kTracePeriodMs, the threshold and
// the throughput of that period.
std::string threshold_trace(const std::shared_ptr<offload::Device>& dev, double seconds) {
  Traffic traffic(kTraceFlows, kTraceRatio, kTraceMeanBytes);
  BatchOptions opt;
  (void)opt.set_threshold("auto");
  opt.period_ns = kThresholdPeriodMs * l7::kNsPerMs;
  opt.refit_rounds = kRefitRounds;
  BatchProcessor proc(chain(), dev, opt);
  std::vector<Message> out;
  const uint64_t t0 = l7::l7_clock_ns();
  uint64_t window_start = t0, window_msgs = 0;
  std::vector<std::string> rows;
  const uint64_t budget = static_cast<uint64_t>(seconds * kGiga);
  auto submit_poll = [&] {
    proc.poll(l7::l7_clock_ns(), out);
    window_msgs += out.size();
    out.clear();
    const uint64_t now = l7::l7_clock_ns();
    if (now - window_start >= kTracePeriodMs * l7::kNsPerMs) {
      const double rate =
          static_cast<double>(window_msgs) * kGiga / static_cast<double>(now - window_start);
      rows.push_back("[" + fmt(static_cast<double>(now - t0) / kGiga) + ", " +
                     std::to_string(proc.threshold()) + ", " + fmt(rate) + "]");
      window_start = now;
      window_msgs = 0;
    }
  };
  auto submit = [&](Message&& m) {
    proc.submit(std::move(m));
    submit_poll();
  };
  while (l7::l7_clock_ns() - t0 < budget) {
    while (proc.unprocessed() >= kTraceFlows) submit_poll();
    traffic.turn(submit);
  }
  proc.flush(out);
  std::fprintf(stderr, "bench: l7 dynamic threshold: %u after %.1f s (%zu windows)\n",
               proc.threshold(), seconds, rows.size());
  return Obj()
      .str("device", dev->label())
      .num("skewness_ratio", kTraceRatio)
      .count("flows", kTraceFlows)
      .num("mean_bytes", kTraceMeanBytes)
      .count("period_ms", kThresholdPeriodMs)
      .count("final_threshold", proc.threshold())
      .str("columns", "time_s, threshold, messages_per_s")
      .raw("trace", array(rows, " "))
      .done();
}

std::string bench_l7(const BenchContext& ctx) {
  Obj j;
  j.count("flows", kFlows)
      .num("mean_bytes", kMeanBytes)
      .str("chain", std::to_string(kTouches) + " x Touch (one fused kernel)")
      .count("warmup_rounds", kWarmupRounds)
      .count("refit_rounds", kRefitRounds)
      .num("seconds", ctx.seconds);
  std::vector<std::string> devs;
  Result<offload::EmuSpec> spec = offload::parse_emu_spec(kEmuSpec);
  if (!spec) return j.str("error", spec.error()).done();
  offload::set_emulated_devices({spec.value()});
  offload::DiscoverOptions only;
  only.only = offload::Backend::kEmu;
  std::shared_ptr<offload::Device> emu(std::move(offload::discover_devices(only).front()));
  const std::string emu_name = std::string("emulated GPU-like (") + kEmuSpec + ")";
  const uint64_t rounds = static_cast<uint64_t>(std::max(10.0, kMeasureRounds * ctx.seconds));
  j.count("measured_rounds", rounds);
  devs.push_back(device_runs(emu, emu_name, true, rounds));
  const std::string trace = threshold_trace(emu, std::max(kMinTraceS, ctx.seconds * kTraceShare));
  offload::set_emulated_devices({});
  std::vector<std::unique_ptr<offload::Device>> real = offload::discover_devices();
  if (real.empty()) {
    devs.push_back(Obj().str("profile", "first-device").str("skipped", "no device").done());
  } else {
    std::shared_ptr<offload::Device> d(std::move(real.front()));
    devs.push_back(device_runs(d, "first-device", false, rounds));
  }
  return j.raw("devices", array(devs)).raw("dynamic_threshold", trace).done();
}

}  // namespace

FULCRUM_BENCH_GROUP(99, "l7", bench_l7);

}  // namespace fulcrum::bench
