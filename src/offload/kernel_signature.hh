// A kernel's parameter signature, from its function type: 'b' per pointer (a device buffer), 'u'
// per uint32_t (offload/device.hh). Shared by the CUDA and emulated-device registrations of the
// kernels/*.cl sources, so no signature is written by hand. C++17: nvcc compiles it too.
#pragma once

#include <cstdint>
#include <type_traits>

namespace fulcrum::offload {

template <class... P>
struct KernelSignature {
  static_assert(((std::is_pointer_v<P> || std::is_same_v<P, uint32_t>)&&...),
                "kernel parameters are pointers ('b') and uint32_t ('u')");
  static constexpr char value[] = {(std::is_pointer_v<P> ? 'b' : 'u')..., '\0'};
};

template <class... P>
constexpr const char* kernel_signature(void (*)(P...)) {
  return KernelSignature<P...>::value;
}

}  // namespace fulcrum::offload
