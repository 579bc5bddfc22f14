// The CUDA kernels compiled into the binary (kernels/cuda/*.cu, each including one
// kernels/*.cl source): each .cu file registers its
// kernels here by name, with their parameter signature ('b' device buffer, 'u' uint32; see
// offload/device.hh), so the CUDA backend can launch them by name like OpenCL does.
#pragma once

#include <string_view>

namespace fulcrum::offload {

struct CudaKernelEntry {
  const char* name;
  const char* signature;
  const void* function;  // the __global__ function, for cudaLaunchKernel
};

struct CudaKernelRegistration {
  explicit CudaKernelRegistration(CudaKernelEntry entry);
};

// nullptr when no kernel has that name.
const CudaKernelEntry* find_cuda_kernel(std::string_view name);

}  // namespace fulcrum::offload
