// The CUDA kernels compiled into the binary: each kernels/*.cl source is built by nvcc through a
// .cu file the build generates (kernels/register_kernels.cmake), which registers its kernels
// here by name, with their parameter signature ('b' device buffer, 'u' uint32; see
// offload/device.hh), so the CUDA backend can launch them by name like OpenCL does.
#pragma once

#include <string_view>

#include "offload/kernel_signature.hh"

namespace fulcrum::offload {

struct CudaKernelEntry {
  const char* name;
  const char* signature;
  const void* function;  // the __global__ function, for cudaLaunchKernel
};

struct CudaKernelRegistration {
  explicit CudaKernelRegistration(CudaKernelEntry entry);
};

// The entry of the __global__ function k, its signature from its type.
template <class... P>
CudaKernelEntry cuda_kernel_entry(const char* name, void (*k)(P...)) {
  return {name, kernel_signature(k), reinterpret_cast<const void*>(k)};
}

// nullptr when no kernel has that name.
const CudaKernelEntry* find_cuda_kernel(std::string_view name);

}  // namespace fulcrum::offload
