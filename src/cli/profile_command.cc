// `fulcrum profile PIPELINE --port ... --out PROFILE.json`: the thesis' offline profiling (paper
// 001 §5.1, runtime/balancing/profiler.hh), written as the file PolicyBalancer reads
// (docs/adaptive.md, "PolicyBalancer and fulcrum profile").
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hh"
#include "cli/device_option.hh"
#include "cli/pipeline_options.hh"
#include "core/args.hh"
#include "io/eal.hh"
#include "io/port.hh"
#include "offload/discovery.hh"
#include "runtime/balancing/profiler.hh"
#include "runtime/runtime.hh"

namespace fulcrum::cli {
namespace {

constexpr const char* kProfileUsage =
    R"(usage: fulcrum profile PIPELINE.click [NAME=VALUE ...] --port SPEC [--port SPEC ...] --out PROFILE.json
                       [options]

  The pipeline holds one balancer (FixedFraction, AdaptiveBalancer, PolicyBalancer, CPUOnly or
  DeviceOnly); each configuration runs in its place as FixedFraction(w, DEVICE d, AGGREGATE a).
  Use a traffic source that keeps the pipeline busy (the generator, or a pcap with --seconds).
  --out FILE          the profile to write (PolicyBalancer's PROFILE)
  --fractions LIST    offloaded shares w > 0 to measure on every device (0.25,0.5,0.75,1)
  --aggregates LIST   device batch sizes, batches per task (1,4,16,32)
  --seconds S         per configuration (0.5)
  --rates LIST        offered rates below the maximum, shares of each configuration's measured
                      throughput, each a run with the generator paced to it (gen:...,rate=):
                      throughput and latency p50/p99 at that load (0.2,0.5,0.8; none: skip;
                      without a gen: port there are none)
  --rate-seconds S    per rate (half of --seconds)
  --sizes LIST        frame sizes in bytes (64,512,1500): the whole sweep once per size, every
                      gen: port sending frames of that size; PolicyBalancer then plans among the
                      points of the size nearest the traffic's (the traffic as given: one size)
  --workers N         worker threads (1)
  --placement SPEC    clone (default) or a pipelined cut, as `fulcrum run` takes it
  --batch N           packets per batch (64)
  --power K=V,...     the power model where RAPL cannot be read, watts: cpu_idle, cpu_busy (per
                      worker core), device_idle, device_busy (50% busy: halfway) (defaults
                      5,15,30,250: docs/adaptive.md, "Energy"); a device on the host's cores
                      (PoCL) costs cpu_busy per online CPU while busy; replaces --energy-model's
  --energy-model FILE the energy model (JSON, docs/adaptive.md "Energy") instead of the defaults
  --energy-out FILE   write the energy model used, its CPU figures calibrated where RAPL measured
                      (watts per worker core: the CPU point's package power and idle power over
                      the workers), for `fulcrum run --energy-model`
Power: RAPL package energy over each run and over 0.5 s of no traffic when the machine exposes
it ("power_measured": true); otherwise modelled: the workers poll, so their cores count busy;
the device counts idle plus its busy share (tasks x device time / run time) of the difference.
)";

int usage_error(const std::string& msg) {
  std::fprintf(stderr, "fulcrum profile: %s\n\n%s%s", msg.c_str(), kProfileUsage,
               kDeviceOptionHelp);
  return 2;
}

bool parse_list(const std::string& text, std::vector<double>& out) {
  out.clear();
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    double v = 0;
    if (!parse_value(text.substr(start, comma - start), v)) return false;
    out.push_back(v);
    start = comma + 1;
  }
  return !out.empty();
}

bool parse_power(const std::string& text, EnergyModel& m) {
  size_t start = 0;
  while (start < text.size()) {
    const size_t comma = std::min(text.find(',', start), text.size());
    const std::string kv = text.substr(start, comma - start);
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) return false;
    const std::string key = kv.substr(0, eq);
    double* field = key == "cpu_idle"      ? &m.cpu_core.idle_w
                    : key == "cpu_busy"    ? &m.cpu_core.busy_w
                    : key == "device_idle" ? &m.device.idle_w
                    : key == "device_busy" ? &m.device.busy_w
                                           : nullptr;
    if (field == nullptr || !parse_value(kv.substr(eq + 1), *field) || *field < 0) return false;
    start = comma + 1;
  }
  m.source = "--power";
  m.backends.clear();
  // A device on the host's cores (PoCL) follows the CPU figure (energy_model.hh, host_device).
  m.host_device.busy_w =
      m.cpu_core.busy_w * static_cast<double>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  m.host_device.idle_w = 0;
  return m.cpu_core.idle_w <= m.cpu_core.busy_w && m.device.idle_w <= m.device.busy_w;
}

}  // namespace

int cmd_profile(const std::vector<std::string>& args) {
  RunOptions opt;
  DeviceOption devices;
  std::string out;
  ProfileSweep sweep;
  std::vector<double> aggregates;
  std::string power, energy_out;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    auto value = [&](std::string& out) { return option_value(args, i, out); };
    std::string v;
    if (a == "--help" || a == "-h") {
      std::printf("%s%s", kProfileUsage, kDeviceOptionHelp);
      return 0;
    } else if (a == "--out") {
      if (!value(out)) return usage_error("--out needs a file name");
    } else if (a == "--fractions") {
      if (!value(v) || !parse_list(v, sweep.fractions) ||
          std::any_of(sweep.fractions.begin(), sweep.fractions.end(),
                      [](double f) { return f <= 0 || f > 1; }))
        return usage_error("--fractions needs a list of shares in (0, 1]");
    } else if (a == "--aggregates") {
      if (!value(v) || !parse_list(v, aggregates) ||
          std::any_of(aggregates.begin(), aggregates.end(),
                      [](double x) { return x < 1 || x > 256 || x != static_cast<int>(x); }))
        return usage_error("--aggregates needs a list of integers 1..256");
      sweep.aggregates.assign(aggregates.begin(), aggregates.end());
    } else if (a == "--rates") {
      if (!value(v)) return usage_error("--rates needs a list of shares in (0, 1), or none");
      if (v == "none") {
        sweep.rates.clear();
      } else if (!parse_list(v, sweep.rates) ||
                 std::any_of(sweep.rates.begin(), sweep.rates.end(),
                             [](double f) { return f <= 0 || f >= 1; })) {
        return usage_error("--rates needs a list of shares in (0, 1), or none");
      }
    } else if (a == "--sizes") {
      std::vector<double> sizes;
      constexpr double kMaxFrame = 9000;
      if (!value(v) || !parse_list(v, sizes) ||
          std::any_of(sizes.begin(), sizes.end(),
                      [](double x) { return x < 1 || x > kMaxFrame || x != static_cast<int>(x); }))
        return usage_error("--sizes needs a list of frame sizes in bytes (64,512,1500)");
      sweep.sizes.assign(sizes.begin(), sizes.end());
    } else if (a == "--rate-seconds") {
      if (!value(v) || !parse_value(v, sweep.rate_seconds) || sweep.rate_seconds <= 0)
        return usage_error("--rate-seconds needs a positive number");
    } else if (a == "--seconds") {
      if (!value(v) || !parse_value(v, sweep.seconds) || sweep.seconds <= 0)
        return usage_error("--seconds needs a positive number");
    } else if (a == "--power") {
      EnergyModel check;
      if (!value(power) || !parse_power(power, check))
        return usage_error(
            "--power needs cpu_idle=W,cpu_busy=W,device_idle=W,device_busy=W "
            "(idle at most busy)");
    } else if (a == "--energy-out") {
      if (!value(energy_out)) return usage_error("--energy-out needs a file name");
    } else if (std::optional<std::string> e = shared_run_option(args, i, opt, devices)) {
      if (!e->empty()) return usage_error(*e);
    } else if (std::string e = positional_pipeline(
                   a, opt,
                   {"--out", "--seconds", "--fractions", "--aggregates", "--power", "--rates",
                    "--sizes", "--rate-seconds", "--help", "--energy-model", "--energy-out",
                    "--port", "--workers", "--batch", "--device", "--strict-rules", "--placement"});
               !e.empty()) {
      return usage_error(e);
    }
  }
  if (opt.pipeline_file.empty()) return usage_error("no pipeline file given");
  if (opt.ports.empty()) return usage_error("no --port given");
  if (out.empty()) return usage_error("no --out given");
  sweep.energy = opt.energy_model;
  if (!power.empty()) parse_power(power, sweep.energy);
  devices.apply();

  // Configuration errors are reported before any device is touched.
  Result<PipelineConfig> config = load_pipeline(opt);
  if (!config) {
    std::fprintf(stderr, "%s\n", config.error().c_str());
    return 1;
  }
  if (Status s = check_one_balancer(config.value()); !s) {
    std::fprintf(stderr, "fulcrum profile: %s\n", s.error().c_str());
    return 1;
  }
  EalOptions eal;
  eal.workers = opt.workers;
  for (const std::string& p : opt.ports)
    if (eal_device_for(p).is_pci) eal.pci.push_back(p);
  if (Status s = init_eal(eal); !s) {
    std::fprintf(stderr, "fulcrum profile: %s\n", s.error().c_str());
    return 1;
  }
  if (!sweep.rates.empty() && !has_generator(opt.ports)) {
    std::fprintf(stderr,
                 "fulcrum profile: no generator port (gen:...) to pace: each configuration is "
                 "measured flat out only (--rates needs one)\n");
    sweep.rates.clear();
  }
  if (offload::discover_devices().empty())
    std::fprintf(stderr,
                 "fulcrum profile: no offload device found; the profile has the CPU only\n");
  if (!sweep.sizes.empty() && !has_generator(opt.ports)) {
    std::fprintf(stderr, "fulcrum profile: --sizes needs a generator port (gen:...)\n");
    return 1;
  }
  Result<Profile> profile = profile_pipeline(opt, sweep, [](const ProfilePoint& pt) {
    std::printf(
        "device %d  w %-5g aggregate %-3u  %6.0f B  %8.3f Mpps  p50 %8.1f us  p99 %8.1f us  "
        "%6.1f W%s\n",
        pt.device, pt.fraction, pt.aggregate, pt.frame_bytes, pt.throughput_pps / 1e6, pt.p50_us,
        pt.p99_us, pt.power_w, pt.power_measured ? "" : " (modelled)");
    for (const RateSample& r : pt.rates)
      std::printf("    offered %8.3f Mpps: %8.3f Mpps  p50 %8.1f us  p99 %8.1f us\n",
                  r.offered_pps / 1e6, r.throughput_pps / 1e6, r.p50_us, r.p99_us);
    std::fflush(stdout);
  });
  if (!profile) {
    std::fprintf(stderr, "fulcrum profile: %s\n", profile.error().c_str());
    return 1;
  }
  if (Status s = write_profile(profile.value(), out); !s) {
    std::fprintf(stderr, "fulcrum profile: %s\n", s.error().c_str());
    return 1;
  }
  std::printf("wrote %s: %zu configurations\n", out.c_str(), profile.value().points.size());
  if (!energy_out.empty()) {
    EnergyModel model = sweep.energy;
    const ProfilePoint& cpu = profile.value().points.front();
    if (cpu.power_measured && opt.workers > 0) {
      model.cpu_core.busy_w = cpu.power_w / opt.workers;
      model.cpu_core.idle_w = cpu.idle_w / opt.workers;
      model.cpu_core.j_per_packet = 0;
      model.cpu_core.source = "calibrated by fulcrum profile of " + opt.pipeline_file +
                              ": RAPL package power of the CPU point and idle, per worker core";
    }
    if (Status s = write_energy_model(model, energy_out); !s) {
      std::fprintf(stderr, "fulcrum profile: %s\n", s.error().c_str());
      return 1;
    }
    std::printf("wrote %s: the energy model (CPU %s)\n", energy_out.c_str(),
                cpu.power_measured ? "calibrated by RAPL" : "not measured here: as given");
  }
  return 0;
}

}  // namespace fulcrum::cli
