// GPU energy through NVML, loaded at run time (dlopen of libnvidia-ml.so.1, or the library
// FULCRUM_NVML_LIBRARY names: no build dependency; tests load a fake). Each CUDA device of a run
// is found among NVML's devices by its PCI bus id. Per device, the total-energy counter
// (nvmlDeviceGetTotalEnergyConsumption, millijoules, Volta and newer) is read at the start and
// end of the run; where that counter is not supported, a thread samples the board power
// (nvmlDeviceGetPowerUsage, milliwatts) every 100 ms and integrates it (trapezoids), which
// misses changes shorter than the period. A device NVML cannot measure says why: no library, no
// NVML device with that bus id, neither call supported.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace fulcrum {

class NvmlMeter {
 public:
  // One entry per bus id ("0000:3b:00.0", as offload::DeviceInfo::pci_bus_id). `library`
  // empty: FULCRUM_NVML_LIBRARY, else libnvidia-ml.so.1.
  static NvmlMeter open(const std::vector<std::string>& pci_bus_ids,
                        const std::string& library = "");
  NvmlMeter();
  NvmlMeter(NvmlMeter&&) noexcept;
  NvmlMeter& operator=(NvmlMeter&&) noexcept;
  ~NvmlMeter();

  size_t devices() const;
  bool available(size_t i) const;
  // How device i is measured ("NVML energy counter", "NVML power samples"), or why not.
  const std::string& method(size_t i) const;

  // Reads the counters, starts sampling where needed.
  void start();
  struct Reading {
    bool ok = false;
    double joules = 0, seconds = 0;  // seconds: the interval the joules cover
    std::string method;              // "NVML energy counter", "NVML power samples"
    std::string why_not;             // a read failed
  };
  // Per device, since start(); stops the sampler.
  std::vector<Reading> stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fulcrum
