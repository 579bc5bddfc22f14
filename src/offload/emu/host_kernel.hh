// host_kernel<&k>: a kernels/*.cl entry point compiled as host C++, run item by item as an
// EmuKernelFn. Include this before the kernel source (it turns FULCRUM_HOST_KERNELS on for
// kernels/common/portable.h), then register:
//
//   #include "offload/emu/host_kernel.hh"
//   #include "kernels/ipv4_lookup.cl"
//   const EmuKernelRegistration r{host_kernel_entry<&ipv4_dir24_8_lookup>("ipv4_dir24_8_lookup")};
//
// The parameter signature comes from the function's type: 'b' per pointer, 'u' per uint32_t.
#pragma once

#define FULCRUM_HOST_KERNELS 1

#include <array>
#include <cstddef>
#include <type_traits>
#include <utility>

#include "kernels/common/portable.h"
#include "offload/emu/emu_kernels.hh"

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

template <class... P>
constexpr std::array<char, sizeof...(P) + 1> host_kernel_signature(void (*)(P...)) {
  static_assert(((std::is_pointer_v<P> || std::is_same_v<P, uint32_t>)&&...),
                "kernel parameters are pointers ('b') and uint32_t ('u')");
  return {(std::is_pointer_v<P> ? 'b' : 'u')..., '\0'};
}

template <auto K>
inline constexpr auto kHostKernelSignature = host_kernel_signature(K);

template <auto K>
EmuKernelEntry host_kernel_entry(const char* name) {
  return {name, kHostKernelSignature<K>.data(), &host_kernel<K>};
}

}  // namespace fulcrum::offload
