// host_kernel<&k>: a kernels/*.cl entry point compiled as host C++, run item by item as an
// EmuKernelFn. Include this before the kernel source (it turns FULCRUM_HOST_KERNELS on for
// kernels/common/portable.h), then register:
//
//   #include "offload/emu/host_kernel.hh"
//   #include "kernels/ipv4_lookup.cl"
//   const EmuKernelRegistration r{host_kernel_entry<&ipv4_dir24_8_lookup>("ipv4_dir24_8_lookup")};
//
// The build writes these files, one per kernels/*.cl (kernels/register_kernels.cmake). The
// parameter signature comes from the function's type (offload/kernel_signature.hh).
#pragma once

#define FULCRUM_HOST_KERNELS 1

#include <algorithm>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "kernels/common/portable.h"
#include "offload/emu/emu_kernels.hh"
#include "offload/kernel_signature.hh"

namespace fulcrum::offload {

template <class P>
P host_kernel_arg(const EmuArg& a) {
  if constexpr (std::is_pointer_v<P>)
    return static_cast<P>(a.ptr);
  else
    return static_cast<P>(a.value);
}

template <class... P, size_t... I>
void host_kernel_items(void (*k)(P...), const EmuArg* args, uint32_t items,
                       std::index_sequence<I...>) {
  if (uint32_t* times = emu_item_ns) {  // thread CPU time: a preempted item is not slower
    for (uint32_t i = 0; i < items; ++i) {
      fulcrum_host_work_item = i;
      const int64_t t0 = thread_cpu_ns();
      k(host_kernel_arg<P>(args[I])...);
      times[i] = static_cast<uint32_t>(std::min<int64_t>(thread_cpu_ns() - t0, UINT32_MAX));
    }
    return;
  }
  for (uint32_t i = 0; i < items; ++i) {
    fulcrum_host_work_item = i;
    k(host_kernel_arg<P>(args[I])...);
  }
}

template <class... P>
void host_kernel_items(void (*k)(P...), const EmuArg* args, uint32_t items) {
  host_kernel_items(k, args, items, std::index_sequence_for<P...>{});
}

template <auto K>
void host_kernel(const EmuArg* args, uint32_t items) {
  host_kernel_items(K, args, items);
}

template <auto K>
EmuKernelEntry host_kernel_entry(const char* name) {
  return {name, kernel_signature(K), &host_kernel<K>};
}

}  // namespace fulcrum::offload
