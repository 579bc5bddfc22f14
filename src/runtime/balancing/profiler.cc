#include "runtime/balancing/profiler.hh"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <initializer_list>
#include <string>
#include <thread>

#include "offload/discovery.hh"
#include "runtime/energy.hh"
#include "runtime/steady_rate.hh"

namespace fulcrum {
namespace {

constexpr const char* kBalancers[] = {"FixedFraction", "AdaptiveBalancer", "PolicyBalancer",
                                      "CPUOnly", "DeviceOnly"};
constexpr double kIdleSeconds = 0.5;

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

struct Config {
  int32_t device = 0;
  double fraction = 0;
  uint32_t aggregate = 1;
  std::string backend;   // the device's, for the energy model
  bool on_host = false;  // computes on the host's cores (EnergyModel::host_device)
};

// Watts with no traffic, from RAPL; 0 when it cannot be read.
double idle_watts(const RaplMeter& rapl) {
  if (!rapl.available()) return 0;
  const std::vector<uint64_t> a = rapl.read();
  std::this_thread::sleep_for(std::chrono::duration<double>(kIdleSeconds));
  const std::vector<uint64_t> b = rapl.read();
  return a.empty() || b.empty() ? 0 : rapl.joules(a, b) / kIdleSeconds;
}

// One run of configuration `c`, `seconds` long, with `ports`; its sustained rate from
// `steady`.
Result<RunReport> run_config(const RunOptions& base, const Config& c, double seconds,
                             const std::vector<std::string>& ports, SteadyRate& steady) {
  RunOptions o = base;
  o.seconds = seconds;
  o.latency = true;
  o.ports = ports;
  o.rewrite = [c](PipelineConfig& p) -> Status {
    for (ConfigElement& e : p.elements) {
      if (!is_balancer_class(e.class_name)) continue;
      e.class_name = "FixedFraction";
      e.args = {number(c.fraction), "DEVICE " + std::to_string(c.device),
                "AGGREGATE " + std::to_string(c.aggregate), "COUNT_BYTES true"};
    }
    return {};
  };
  steady.attach(o);
  Result<RunReport> r = run(o);
  if (!r) return make_error(r.error());
  if (!r.value().balanced())
    return make_error("the packet balance does not hold (packets were lost)");
  return r;
}

// The mean length of the packets that reached the balancer (FixedFraction's bytes counter); the
// received frames' when it is not in the report.
double balancer_frame_bytes(const RunReport& r) {
  for (const ElementReport& e : r.elements) {
    if (e.class_name != "FixedFraction" || e.in_packets == 0) continue;
    for (const auto& [name, value] : e.counters)
      if (name == "bytes") return static_cast<double>(value) / static_cast<double>(e.in_packets);
  }
  return r.packets_in > 0 ? static_cast<double>(r.bytes_in) / static_cast<double>(r.packets_in) : 0;
}

// The configuration at `share` of its sustained rate `max_pps`.
Result<RateSample> measure_rate(const RunOptions& base, const ProfileSweep& sweep, const Config& c,
                                const std::vector<std::string>& ports, double max_pps,
                                double share) {
  const double offered = share * max_pps;
  const double seconds = sweep.rate_seconds > 0 ? sweep.rate_seconds : sweep.seconds / 2;
  SteadyRate steady;
  Result<RunReport> r = run_config(base, c, seconds, paced_ports(ports, offered), steady);
  if (!r) return make_error("at " + number(share) + " of its rate: " + r.error());
  RateSample s;
  s.offered_pps = offered;
  s.throughput_pps = steady.pps(r.value().mpps_out() * 1e6);
  s.p50_us = r.value().latency.p50_us;
  s.p99_us = r.value().latency.p99_us;
  if (s.throughput_pps <= 0)
    return make_error("at " + number(share) + " of its rate: nothing was transmitted");
  return s;
}

Result<ProfilePoint> measure(const RunOptions& base, const ProfileSweep& sweep, const Config& c,
                             const std::vector<std::string>& ports, double idle_w) {
  SteadyRate steady;
  Result<RunReport> r = run_config(base, c, sweep.seconds, ports, steady);
  if (!r) return make_error(r.error());
  const RunReport& rep = r.value();
  ProfilePoint p;
  p.device = c.device;
  p.fraction = c.fraction;
  p.aggregate = c.aggregate;
  p.throughput_pps = steady.pps(rep.mpps_out() * 1e6);
  p.p50_us = rep.latency.p50_us;
  p.p99_us = rep.latency.p99_us;
  p.frame_bytes = balancer_frame_bytes(rep);
  if (p.throughput_pps <= 0) return make_error("nothing was transmitted");
  if (has_generator(ports))
    for (double share : sweep.rates) {
      Result<RateSample> sample = measure_rate(base, sweep, c, ports, p.throughput_pps, share);
      if (!sample) return make_error(sample.error());
      p.rates.push_back(sample.value());
    }
  std::sort(p.rates.begin(), p.rates.end(), [](const RateSample& a, const RateSample& b) {
    return a.throughput_pps < b.throughput_pps;
  });
  if (rep.energy.measured && idle_w > 0) {
    p.power_measured = true;
    p.power_w = rep.energy.watts;
    p.idle_w = std::min(idle_w, p.power_w);
    return p;
  }
  double busy = 0;
  for (const DeviceReport& d : rep.devices) busy += d.busy_s;
  busy = rep.duration_s > 0 ? std::min(1.0, busy / rep.duration_s) : 0;
  const DevicePower* device =
      c.fraction > 0 ? &sweep.energy.for_device(c.backend, c.on_host) : nullptr;
  const PointPower power = point_power(sweep.energy, base.workers, device, busy, p.throughput_pps,
                                       p.throughput_pps * c.fraction);
  p.idle_w = power.idle_w;
  p.power_w = power.power_w;
  return p;
}

}  // namespace

bool is_balancer_class(const std::string& class_name) {
  return std::find(std::begin(kBalancers), std::end(kBalancers), class_name) !=
         std::end(kBalancers);
}

bool has_generator(const std::vector<std::string>& ports) {
  return std::any_of(ports.begin(), ports.end(),
                     [](const std::string& p) { return p == "gen" || p.rfind("gen:", 0) == 0; });
}

namespace {

// A generator port's spec without the keys `drop`, with "key=value," for each key kept.
std::string generator_without(const std::string& port, std::initializer_list<const char*> drop) {
  std::string spec = "gen:";
  const std::string keys = port == "gen" ? "" : port.substr(4);
  size_t start = 0;
  while (start < keys.size()) {
    const size_t comma = std::min(keys.find(',', start), keys.size());
    const std::string kv = keys.substr(start, comma - start);
    const std::string key = kv.substr(0, kv.find('='));
    if (!kv.empty() &&
        std::none_of(drop.begin(), drop.end(), [&](const char* d) { return key == d; }))
      spec += kv + ",";
    start = comma + 1;
  }
  return spec;
}

}  // namespace

std::vector<std::string> paced_ports(const std::vector<std::string>& ports, double total_pps) {
  const auto generators = std::count_if(ports.begin(), ports.end(),
                                        [](const std::string& p) { return has_generator({p}); });
  std::vector<std::string> out;
  for (const std::string& p : ports) {
    if (!has_generator({p})) {
      out.push_back(p);
      continue;
    }
    // The keys but the rate and its step, then the rate: the generator paces each port on its
    // own.
    const double each = total_pps / static_cast<double>(generators);
    out.push_back(generator_without(p, {"rate", "step_after", "step_rate"}) +
                  "rate=" + std::to_string(std::max<long long>(1, std::llround(each))));
  }
  return out;
}

std::vector<std::string> sized_ports(const std::vector<std::string>& ports, uint32_t bytes) {
  std::vector<std::string> out;
  for (const std::string& p : ports)
    out.push_back(has_generator({p})
                      ? generator_without(p, {"size", "step_after", "step_rate", "step_size"}) +
                            "size=" + std::to_string(bytes)
                      : p);
  return out;
}

Status check_one_balancer(const PipelineConfig& config) {
  const auto n =
      std::count_if(config.elements.begin(), config.elements.end(),
                    [](const ConfigElement& e) { return is_balancer_class(e.class_name); });
  if (n == 1) return {};
  return make_error(config.file +
                    ": the pipeline must hold exactly one balancer (FixedFraction, "
                    "AdaptiveBalancer, PolicyBalancer, CPUOnly or DeviceOnly); it holds " +
                    std::to_string(n));
}

Result<Profile> profile_pipeline(const RunOptions& base, const ProfileSweep& sweep,
                                 const std::function<void(const ProfilePoint&)>& on_point) {
  Result<PipelineConfig> config = load_pipeline(base);
  if (!config) return make_error(config.error());
  if (Status s = check_one_balancer(config.value()); !s) return make_error(s.error());
  Profile profile;
  profile.pipeline = base.pipeline_file;
  for (const std::string& p : base.ports)
    profile.traffic += (profile.traffic.empty() ? "" : " ") + p;
  std::vector<std::string> backends;
  std::vector<bool> on_host;
  for (const auto& d : offload::discover_devices()) {
    const offload::DeviceInfo& info = d->info();
    backends.emplace_back(offload::backend_name(info.backend));
    on_host.push_back(info.backend != offload::Backend::kEmu &&
                      info.kind == offload::DeviceKind::kCpu);
    profile.devices.push_back(std::string(offload::backend_name(info.backend)) + ":" + info.name +
                              (info.backend == offload::Backend::kEmu ? " (emulated)" : ""));
  }
  std::vector<Config> configs = {{0, 0, 1, ""}};
  for (size_t d = 0; d < profile.devices.size(); ++d) {
    const auto index = static_cast<int32_t>(d);
    if (!sweep.devices.empty() &&
        std::find(sweep.devices.begin(), sweep.devices.end(), index) == sweep.devices.end())
      continue;
    for (double f : sweep.fractions)
      for (uint32_t a : sweep.aggregates) configs.push_back({index, f, a, backends[d], on_host[d]});
  }
  const double idle_w = idle_watts(RaplMeter::open());
  std::vector<uint32_t> sizes = sweep.sizes;
  if (sizes.empty()) sizes.push_back(0);  // the traffic as given
  for (const uint32_t size : sizes) {
    const std::vector<std::string> ports = size == 0 ? base.ports : sized_ports(base.ports, size);
    const std::string at = size == 0 ? "" : std::to_string(size) + " B, ";
    for (const Config& c : configs) {
      Result<ProfilePoint> p = measure(base, sweep, c, ports, idle_w);
      if (!p)
        return make_error(at + "device " + std::to_string(c.device) + ", w " + number(c.fraction) +
                          ", aggregate " + std::to_string(c.aggregate) + ": " + p.error());
      if (on_point) on_point(p.value());
      profile.points.push_back(p.value());
    }
  }
  return profile;
}

}  // namespace fulcrum
