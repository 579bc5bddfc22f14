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
//   units                0 (default): the kernel rate model above. > 0: a SIMT model of a GPU
//   running
//                        one work item per lane (FlowShader's flow-level kernels, whose items
//                        differ in work): the launch's work groups each take their slowest
//                        item's host time times lane_slowdown, and are spread over `units`
//                        compute units (each runs one group at a time, the next group to the
//                        first free unit); the kernel takes launch_us plus that schedule's
//                        makespan. The device reports `units` compute units.
//   lane_slowdown        how many times slower one lane runs a work item than the host thread
//                        (default 1; with units)
//   host_free            0 (default) or 1, with units: the host's time computing a launch is taken
//                        off the emulated clock (virtual time, offload/emu/emu_device.hh
//                        emu_hidden_host_ns), so the device costs its caller only the model's
//                        time, as a real device would; for experiments on machines with few cores
//   native               0 (default) or 1: kernels with a host-native form (the IPsec kernels:
//                        intel-ipsec-mb, as the CPU path) compute their result with it instead
//                        of the portable kernels/*.cl build, byte for byte the same output; the
//                        task is still held for max(modelled time, host time). Kernels without
//                        one run the portable build. Reports label the device "native host
//                        compute".
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
  double units = 0;
  double lane_slowdown = 1;
  double host_free = 0;
  double native = 0;
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
