// The CUDA build of kernels/ipsec.cl: its kernels, registered by name with their parameter
// signatures for the CUDA backend (offload/cuda/cuda_kernels.hh).
#include "kernels/ipsec.cl"
#include "offload/cuda/cuda_kernels.hh"

namespace {

const fulcrum::offload::CudaKernelRegistration kIpsecAesCtrRegistration{
    {"ipsec_aes_ctr", "bbbbu", reinterpret_cast<const void*>(&ipsec_aes_ctr)}};
const fulcrum::offload::CudaKernelRegistration kIpsecHmacSha1Registration{
    {"ipsec_hmac_sha1", "bbbbbu", reinterpret_cast<const void*>(&ipsec_hmac_sha1)}};
const fulcrum::offload::CudaKernelRegistration kIpsecAesHmacFusedRegistration{
    {"ipsec_aes_hmac_fused", "bbbbbu", reinterpret_cast<const void*>(&ipsec_aes_hmac_fused)}};

}  // namespace
