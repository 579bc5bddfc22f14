// --device emu:KEY=VALUE,... (repeatable), shared by run, bench and devices: emulated devices
// (offload/emu/emu_spec.hh has the keys) added after the devices the backends find.
#pragma once

#include <string_view>
#include <vector>

#include "core/result.hh"
#include "offload/emu/emu_spec.hh"

namespace fulcrum::cli {

inline constexpr const char* kDeviceOptionHelp =
    "  --device emu:K=V,...  add an emulated device (repeatable; keys h2d_gbps, d2h_gbps,\n"
    "                     launch_us, kernel_mpps, lat_us, units, lane_slowdown, host_free,\n"
    "                     native):\n"
    "                     a model for experiments, not a GPU\n";

class DeviceOption {
 public:
  Status add(std::string_view value);
  // Makes the devices given so far the run's emulated devices (none given: leaves the list).
  void apply() const;

 private:
  std::vector<offload::EmuSpec> specs_;
};

}  // namespace fulcrum::cli
