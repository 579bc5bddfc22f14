// The CUDA build of kernels/ipv4_lookup.cl: its kernels, registered by name with their parameter
// signatures for the CUDA backend (offload/cuda/cuda_kernels.hh).
#include "kernels/ipv4_lookup.cl"
#include "offload/cuda/cuda_kernels.hh"

namespace {

const fulcrum::offload::CudaKernelRegistration kIpv4Dir248LookupRegistration{
    {"ipv4_dir24_8_lookup", "bbbbu", reinterpret_cast<const void*>(&ipv4_dir24_8_lookup)}};

}  // namespace
