// Energy measured where the machine exposes it: RAPL (Intel and AMD) through the Linux powercap
// tree, /sys/class/powercap/intel-rapl:N (one zone per CPU package; energy_uj counts up and wraps
// at max_energy_range_uj). A run reads the packages' counters at its start and end; the report
// then says "measured" with joules, average watts and joules per Mbit transmitted, or says it
// was not measured and why (no powercap tree, no permission: energy_uj is root-only on current
// kernels). GPUs are measured through NVML (runtime/nvml.hh); what nothing measures is modelled
// (runtime/energy_model.hh), and every figure says which.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum {

class RaplMeter {
 public:
  // The package zones under `root` (a directory laid out as /sys/class/powercap).
  static RaplMeter open(const std::string& root = "/sys/class/powercap");

  bool available() const { return !zones_.empty(); }
  // Why it is not available ("no RAPL zones under ...", "cannot read ...: Permission denied").
  const std::string& why_not() const { return why_not_; }
  // "package-0, package-1"
  std::string zones() const;

  // One reading of every zone's counter, microjoules; empty when a read fails.
  std::vector<uint64_t> read() const;
  // Joules between two readings, each zone's wrap-around counted once.
  double joules(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to) const;

 private:
  struct Zone {
    std::string name;
    std::string energy_file;
    uint64_t range_uj = 0;
  };
  std::vector<Zone> zones_;
  std::string why_not_;
};

// One device's share: the CPU packages (or the worker cores) or one offload device.
struct DeviceEnergy {
  std::string device;  // "cpu (2 worker cores)", an offload device's label
  bool measured = false;
  std::string source;            // "RAPL package-0", "NVML energy counter", "model defaults"
  std::string why_not_measured;  // modelled: why it was not measured
  double joules = 0, watts = 0, joules_per_mbit = 0;
  // Given no work in the run. Modelled: counted off (0 J). Measured: what it drew idle is counted
  // (it was not powered off), and EnergyReport::joules_per_mbit_unused_off leaves it out.
  bool unused = false;
};

struct EnergyReport {
  bool measured = false;  // every device measured
  bool modelled = false;  // at least one device modelled
  std::string source;     // "RAPL package-0" when all measured, or why not
  double joules = 0;      // all devices
  double watts = 0;
  double joules_per_mbit = 0;  // per megabit transmitted (frame bytes)
  // Measured devices that had no work drew this much idle; without it (powered off, as paper 001
  // assumes §4.3) the run would have cost joules_per_mbit_unused_off.
  double unused_joules = 0;
  double joules_per_mbit_unused_off = 0;
  std::vector<DeviceEnergy> devices;

  // "measured", "modelled", "measured + modelled" (some of each) or "not measured" (nothing
  // reported, e.g. a live snapshot).
  const char* basis() const {
    if (devices.empty()) return measured ? "measured" : "not measured";
    if (!modelled) return "measured";
    for (const DeviceEnergy& d : devices)
      if (d.measured) return "measured + modelled";
    return "modelled";
  }
};

}  // namespace fulcrum
