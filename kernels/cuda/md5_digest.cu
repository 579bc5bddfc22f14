// The CUDA build of kernels/md5_digest.cl: its kernels, registered by name with their parameter
// signatures for the CUDA backend (offload/cuda/cuda_kernels.hh).
#include "kernels/md5_digest.cl"
#include "offload/cuda/cuda_kernels.hh"

namespace {

const fulcrum::offload::CudaKernelRegistration kMd5DigestRegistration{
    {"md5_digest", "bbbbu", reinterpret_cast<const void*>(&md5_digest)}};

}  // namespace
