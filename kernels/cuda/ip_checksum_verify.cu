// The CUDA build of kernels/ip_checksum_verify.cl: its kernels, registered by name with their
// parameter signatures for the CUDA backend (offload/cuda/cuda_kernels.hh).
#include "kernels/ip_checksum_verify.cl"
#include "offload/cuda/cuda_kernels.hh"

namespace {

const fulcrum::offload::CudaKernelRegistration kIpChecksumVerifyRegistration{
    {"ip_checksum_verify", "bbbu", reinterpret_cast<const void*>(&ip_checksum_verify)}};

}  // namespace
