// The kernels the emulated device runs (offload/emu/emu_device.hh): the same kernels/*.cl sources
// compiled as host C++ (one file per source, written by kernels/register_kernels.cmake), registered
// by name with their parameter signatures as the CUDA backend's are (offload/cuda/cuda_kernels.hh).
#pragma once

#include <cstdint>
#include <string_view>

namespace fulcrum::offload {

// One resolved kernel argument: a buffer's host address ('b') or a value ('u').
struct EmuArg {
  void* ptr = nullptr;
  uint32_t value = 0;
};

// Runs the kernel over work items [0, items).
using EmuKernelFn = void (*)(const EmuArg* args, uint32_t items);

// When set (by an emulated device with a SIMT model, emu_spec.hh `units`), the host kernels
// write each work item's host time, nanoseconds, to item_ns[item].
inline thread_local uint32_t* emu_item_ns = nullptr;

struct EmuKernelEntry {
  const char* name;
  const char* signature;
  EmuKernelFn run;
};

struct EmuKernelRegistration {
  explicit EmuKernelRegistration(EmuKernelEntry entry);
};

// nullptr when no kernel has that name.
const EmuKernelEntry* find_emu_kernel(std::string_view name);

}  // namespace fulcrum::offload
