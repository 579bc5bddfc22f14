// The kernels the emulated device runs (offload/emu/emu_device.hh): the same kernels/*.cl sources
// compiled as host C++ (one file per source, written by kernels/register_kernels.cmake), registered
// by name with their parameter signatures as the CUDA backend's are (offload/cuda/cuda_kernels.hh).
#pragma once

#include <cstdint>
#include <string_view>

#include "core/thread_clock.hh"

namespace fulcrum::offload {

// One resolved kernel argument: a buffer's host address ('b') or a value ('u').
struct EmuArg {
  void* ptr = nullptr;
  uint32_t value = 0;
};

// Runs the kernel over work items [0, items).
using EmuKernelFn = void (*)(const EmuArg* args, uint32_t items);

// When set (by an emulated device with a SIMT model, emu_spec.hh `units`), the host kernels
// write each work item's host time (the thread's CPU time, so that an item preempted by another
// process does not count as slow), nanoseconds, to emu_item_ns[item].
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

// A kernel's host-native form (emu_spec.hh `native`): the same result computed with the optimised
// CPU code the elements use (offload/emu/native_ipsec.cc). kPortable: this launch is not one it
// handles (nothing was written); the device runs the portable kernel instead.
enum class EmuNativeRun { kDone, kPortable, kFailed };
using EmuNativeFn = EmuNativeRun (*)(const EmuArg* args, uint32_t items);

struct EmuNativeRegistration {
  EmuNativeRegistration(const char* name, EmuNativeFn fn);
};

// nullptr when the kernel has no native form.
EmuNativeFn find_emu_native(std::string_view name);

// How many launches (all emulated devices, all threads) a native form has computed (kDone).
uint64_t emu_native_launches();

}  // namespace fulcrum::offload
