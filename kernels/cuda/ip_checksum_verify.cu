// IPv4 header checksum (RFC 1071) of each packet's region: one thread per packet; the CUDA
// build of kernels/opencl/ip_checksum_verify.cl.
#include <cstdint>

#include "offload/cuda/cuda_kernels.hh"

namespace {

__global__ void ip_checksum_verify(const uint8_t* __restrict__ bytes,
                                   const uint32_t* __restrict__ regions, uint32_t* __restrict__ ok,
                                   uint32_t count) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint8_t* h = bytes + regions[2 * static_cast<size_t>(i)];
  const uint32_t len = regions[2 * static_cast<size_t>(i) + 1];
  uint32_t sum = 0;
  for (uint32_t k = 0; k + 1 < len; k += 2) sum += (uint32_t{h[k]} << 8) | h[k + 1];
  while (sum >> 16) sum = (sum & 0xFFFFu) + (sum >> 16);
  ok[i] = sum == 0xFFFFu ? 1u : 0u;
}

const fulcrum::offload::CudaKernelRegistration kRegistration{
    {"ip_checksum_verify", "bbbu", reinterpret_cast<const void*>(&ip_checksum_verify)}};

}  // namespace
