// The energy model: what a run's energy is taken to be where nothing measures it (no RAPL for
// the CPU packages, no NVML for a GPU), and what the profiler's modelled points and so the
// PolicyBalancer's energy policy use. Per device: idle watts while it is on, the extra watts of
// a fully busy device above idle, and dynamic joules per packet it handles:
//
//   E = idle_w * T + (busy_w - idle_w) * busy_s + j_per_packet * packets
//
// The CPU is counted per worker core; a worker polls, so its core is busy the whole run
// (busy_s = T). An offload device is busy for its tasks' device time (tasks x device_us) and on
// (T in the formula) only in the 40 ms windows in which it completed a task: paper 001 powers an
// unused GPU off, and a balancer that leaves the device alone for a window leaves it off.
// Defaults and their sources are in docs/adaptive.md ("Energy"); `--energy-model FILE` (the
// JSON written by write_energy_model, or by `fulcrum profile --energy-out`, calibrated where
// RAPL measures) replaces them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/result.hh"
#include "runtime/energy.hh"

namespace fulcrum {

struct DevicePower {
  double idle_w = 0;        // on, nothing to do
  double busy_w = 0;        // fully busy (>= idle_w)
  double j_per_packet = 0;  // dynamic energy per packet on top of the busy time
  std::string source;       // where the figures come from

  // Joules over `seconds` on, `busy_s` of them busy, `packets` handled.
  double joules(double seconds, double busy_s, uint64_t packets) const;
};

struct EnergyModel {
  DevicePower cpu_core;  // one worker core
  DevicePower device;    // an offload device, unless its backend has its own entry
  std::map<std::string, DevicePower> backends;  // "cuda", "opencl", "emu"
  // An offload device that computes on the host's cores (an OpenCL CPU device: PoCL): no board
  // to keep on (idle 0), and while busy the host's cores at cpu_core.busy_w each.
  DevicePower host_device;
  std::string source;  // "defaults" or the file it was read from

  // The documented defaults (docs/adaptive.md): paper 001's i7-3770 and GTX 780 Ti.
  static EnergyModel defaults();
  // The figures for an offload device of `backend` (offload::backend_name).
  const DevicePower& for_backend(const std::string& backend) const;
  // The same, host_device for a device on the host's cores (DeviceKind::kCpu; not emulated).
  const DevicePower& for_device(const std::string& backend, bool on_host) const {
    return on_host ? host_device : for_backend(backend);
  }
};

// Errors name the file and the key. Keys left out keep the defaults.
Result<EnergyModel> read_energy_model(const std::string& path);
Status write_energy_model(const EnergyModel& model, const std::string& path);

// A profile point's modelled power (the thesis' utilization-based model): `workers` cores, and
// when `device` is not null that device on with `busy_share` (0..1) of the time busy, carrying
// `device_pps` of the `pps` packets per second. idle_w: the same configuration with no traffic.
struct PointPower {
  double idle_w = 0, power_w = 0;
};
PointPower point_power(const EnergyModel& model, int workers, const DevicePower* device,
                       double busy_share, double pps, double device_pps);

// What a run's energy report is made of: its duration and output, and per device a measurement
// or what the model needs.
struct EnergyInputs {
  double seconds = 0;
  uint64_t bytes_out = 0;
  uint64_t packets = 0;  // handled by the CPU workers (received + created)
  int workers = 1;
  std::optional<double> cpu_joules;  // RAPL
  std::string cpu_source;            // "RAPL package-0", or why it was not measured
  struct Device {
    std::string label;
    std::string backend;  // offload::backend_name
    double busy_s = 0;    // tasks x device time
    uint64_t packets = 0;
    std::optional<double> joules;  // NVML
    std::string source;            // "NVML energy counter", or why it was not measured
    bool on_host = false;          // computes on the host's cores (EnergyModel::host_device)
    // Seconds the device was on: the 40 ms windows in which it completed a task (at least its
    // busy time; it idles at idle_w only while on). A negative value: on for the whole run.
    double on_s = -1;
  };
  std::vector<Device> devices;
};

// The report: measured figures where there are, the model elsewhere; per device and in total
// joules, average watts and joules per Mbit transmitted.
EnergyReport energy_report(const EnergyModel& model, const EnergyInputs& in);

}  // namespace fulcrum
