#include "runtime/energy_model.hh"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/text_file.hh"

namespace fulcrum {
namespace {

using nlohmann::json;

// Paper 001 (docs/adaptive.md, "Energy"): Table 3.1, the i7-3770's die TDP of 77 W less the
// integrated GPU's ~17 W (§3.1) over its 4 cores; the GTX 780 Ti's TDP (Table 3.1); the I/O hub
// a discrete GPU keeps on, 20 W (§2.1). The idle figures beyond that are ours, marked so.
constexpr double kCoreBusyW = (77.0 - 17.0) / 4;
constexpr double kCoreIdleW = 5;
constexpr double kGpuBusyW = 250;
constexpr double kIoHubW = 20, kGpuBoardIdleW = 10;
constexpr const char* kCoreSource =
    "busy: paper 001 i7-3770 (77 W die TDP - 17 W integrated GPU) / 4 cores; idle: estimate";
constexpr const char* kHostDeviceSource =
    "an OpenCL device on the CPU (PoCL) computes on the host's cores: busy, each at the "
    "cpu_core figure (paper 001 i7-3770 per core) x the online CPUs; idle: 0 (no board)";
constexpr const char* kGpuSource =
    "busy: paper 001 GTX 780 Ti TDP; idle: paper 001 I/O hub 20 W + 10 W board (estimate)";

Status read_device(const json& j, const std::string& where, DevicePower& p) {
  if (!j.is_object()) return make_error(where + ": must be an object");
  double* const fields[] = {&p.idle_w, &p.busy_w, &p.j_per_packet};
  const char* const names[] = {"idle_w", "busy_w", "j_per_packet"};
  for (size_t i = 0; i < std::size(fields); ++i) {
    const auto it = j.find(names[i]);
    if (it == j.end()) continue;
    if (!it->is_number() || !std::isfinite(it->get<double>()) || it->get<double>() < 0)
      return make_error(where + ": \"" + names[i] + "\" must be a number >= 0");
    *fields[i] = it->get<double>();
  }
  if (p.idle_w > p.busy_w) return make_error(where + ": \"idle_w\" is above \"busy_w\"");
  if (const auto it = j.find("source"); it != j.end() && it->is_string())
    p.source = it->get<std::string>();
  return {};
}

json device_json(const DevicePower& p) {
  return {{"idle_w", p.idle_w},
          {"busy_w", p.busy_w},
          {"j_per_packet", p.j_per_packet},
          {"source", p.source}};
}

}  // namespace

double DevicePower::joules(double seconds, double busy_s, uint64_t packets) const {
  busy_s = std::clamp(busy_s, 0.0, seconds);
  return idle_w * seconds + (busy_w - idle_w) * busy_s +
         j_per_packet * static_cast<double>(packets);
}

EnergyModel EnergyModel::defaults() {
  EnergyModel m;
  m.cpu_core = {kCoreIdleW, kCoreBusyW, 0, kCoreSource};
  m.device = {kIoHubW + kGpuBoardIdleW, kGpuBusyW, 0, kGpuSource};
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  m.host_device = {0, kCoreBusyW * static_cast<double>(std::max(1L, cpus)), 0, kHostDeviceSource};
  m.source = "defaults";
  return m;
}

const DevicePower& EnergyModel::for_backend(const std::string& backend) const {
  const auto it = backends.find(backend);
  return it != backends.end() ? it->second : device;
}

Result<EnergyModel> read_energy_model(const std::string& path) {
  Result<std::string> text = read_input_file(path, "energy model");
  if (!text) return make_error(text.error());
  const json j = json::parse(text.value(), nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return make_error(path + ": an energy model is a JSON object");
  EnergyModel m = EnergyModel::defaults();
  m.source = path;
  for (const auto& [key, value] : j.items()) {
    const std::string where = path + ": \"" + key + "\"";
    Status s;
    if (key == "cpu_core") {
      s = read_device(value, where, m.cpu_core);
    } else if (key == "device") {
      s = read_device(value, where, m.device);
    } else if (key == "host_device") {
      s = read_device(value, where, m.host_device);
    } else if (key == "cuda" || key == "opencl" || key == "emu") {
      DevicePower p = m.device;
      s = read_device(value, where, p);
      m.backends[key] = p;
    } else if (key != "comment") {
      return make_error(path + ": unknown key \"" + key +
                        "\" (cpu_core, device, host_device, cuda, opencl, emu, comment)");
    }
    if (!s) return make_error(s.error());
  }
  return m;
}

Status write_energy_model(const EnergyModel& model, const std::string& path) {
  json j = {{"cpu_core", device_json(model.cpu_core)},
            {"device", device_json(model.device)},
            {"host_device", device_json(model.host_device)}};
  for (const auto& [backend, p] : model.backends) j[backend] = device_json(p);
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  out.close();
  if (!out) return make_error(path + ": cannot write the energy model");
  return {};
}

PointPower point_power(const EnergyModel& model, int workers, const DevicePower* device,
                       double busy_share, double pps, double device_pps) {
  const DevicePower& cpu = model.cpu_core;
  PointPower p;
  p.idle_w = workers * cpu.idle_w;
  p.power_w = workers * cpu.busy_w + pps * cpu.j_per_packet;
  if (device != nullptr) {
    busy_share = std::clamp(busy_share, 0.0, 1.0);
    p.idle_w += device->idle_w;
    p.power_w += device->idle_w + busy_share * (device->busy_w - device->idle_w) +
                 device_pps * device->j_per_packet;
  }
  return p;
}

EnergyReport energy_report(const EnergyModel& model, const EnergyInputs& in) {
  constexpr double kBitsPerMbit = 1e6;
  const double mbit = static_cast<double>(in.bytes_out) * 8 / kBitsPerMbit;
  EnergyReport r;
  r.measured = true;
  auto add = [&](DeviceEnergy d, std::optional<double> measured, const std::string& source,
                 double modelled_j) {
    d.measured = measured.has_value();
    if (d.measured) {
      d.source = source;
      d.joules = *measured;
    } else {
      d.source = "model " + model.source;
      d.why_not_measured = source;
      d.joules = modelled_j;
      r.measured = false;
      r.modelled = true;
    }
    d.watts = in.seconds > 0 ? d.joules / in.seconds : 0;
    d.joules_per_mbit = mbit > 0 ? d.joules / mbit : 0;
    r.joules += d.joules;
    r.devices.push_back(std::move(d));
  };
  DeviceEnergy cpu;
  cpu.device =
      "cpu (" + std::to_string(in.workers) + " worker core" + (in.workers == 1 ? ")" : "s)");
  // A worker polls: its core is busy the whole run.
  add(cpu, in.cpu_joules, in.cpu_source,
      in.workers * model.cpu_core.joules(in.seconds, in.seconds, 0) +
          model.cpu_core.j_per_packet * static_cast<double>(in.packets));
  for (const EnergyInputs::Device& dev : in.devices) {
    DeviceEnergy d;
    d.device = dev.label;
    // A device given no work: modelled, it counts as off, as paper 001 powers an unused GPU off
    // (§4.3); measured, it drew what it drew (a GPU is not powered off here), reported apart.
    const bool unused = dev.packets == 0 && dev.busy_s <= 0;
    d.unused = unused;
    if (unused && dev.joules) r.unused_joules += *dev.joules;
    add(d, dev.joules,
        dev.source + (!unused      ? ""
                      : dev.joules ? "; unused: idle draw, not powered off"
                                   : "; unused: counted off"),
        unused ? 0
               : model.for_device(dev.backend, dev.on_host)
                     .joules(dev.on_s < 0 ? in.seconds
                                          : std::clamp(dev.on_s, std::min(dev.busy_s, in.seconds),
                                                       in.seconds),
                             dev.busy_s, dev.packets));
  }
  if (r.measured) {
    r.source = r.devices.front().source;
    for (size_t i = 1; i < r.devices.size(); ++i) r.source += ", " + r.devices[i].source;
  } else {
    r.source = "model " + model.source + " where not measured";
  }
  r.watts = in.seconds > 0 ? r.joules / in.seconds : 0;
  r.joules_per_mbit = mbit > 0 ? r.joules / mbit : 0;
  r.joules_per_mbit_unused_off = mbit > 0 ? (r.joules - r.unused_joules) / mbit : 0;
  return r;
}

}  // namespace fulcrum
