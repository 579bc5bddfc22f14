// The emulated device's model (offload/emu/emu_device.hh) and where runs get it from:
//
//   --device emu:h2d_gbps=12,launch_us=8,kernel_mpps=80,lat_us=40      (the CLI, repeatable)
//   FULCRUM_EMU_DEVICES="kernel_mpps=80;kernel_mpps=2,launch_us=50"   (the environment: devices
//                                                                        separated by ';')
//
//   h2d_gbps, d2h_gbps   copy bandwidth, gigabytes per second, each direction (default 12, 12)
//   launch_us            fixed cost of each kernel launch, microseconds (default 8)
//   kernel_mpps          kernel rate, millions of work items per second (default 80)
//   lat_us               fixed latency added to each task's completion, microseconds (default 0)
//
// Every value must be a finite number >= 0 (rates > 0). Nothing here is a measurement of any
// real device: reports label these devices "emulated".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"

namespace fulcrum::offload {

inline constexpr const char* kEmuDevicesEnv = "FULCRUM_EMU_DEVICES";

struct EmuSpec {
  double h2d_gbps = 12;
  double d2h_gbps = 12;
  double launch_us = 8;
  double kernel_mpps = 80;
  double lat_us = 0;
  // The spec as given, for labels ("kernel_mpps=80,lat_us=40").
  std::string text;

  // Modelled durations, nanoseconds.
  double h2d_ns(size_t bytes) const { return static_cast<double>(bytes) / h2d_gbps; }
  double d2h_ns(size_t bytes) const { return static_cast<double>(bytes) / d2h_gbps; }
  double kernel_ns(uint32_t items) const {
    return launch_us * 1e3 + static_cast<double>(items) * 1e3 / kernel_mpps;
  }
};

// "h2d_gbps=12,launch_us=8" (without the "emu:" prefix); the empty string is the defaults.
Result<EmuSpec> parse_emu_spec(std::string_view text);

// The emulated devices discovery finds: those set here (the CLI's --device emu:...), else those
// of FULCRUM_EMU_DEVICES. set_emulated_devices replaces the list.
void set_emulated_devices(std::vector<EmuSpec> specs);
// The list, or why FULCRUM_EMU_DEVICES cannot be read.
Result<std::vector<EmuSpec>> emulated_devices();

}  // namespace fulcrum::offload
