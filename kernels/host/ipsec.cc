// The host build of kernels/ipsec.cl, for the emulated device: its kernels, registered by name
// (offload/emu/emu_kernels.hh).
#include "offload/emu/host_kernel.hh"
// host_kernel.hh first: it sets up kernels/common/portable.h for host kernels.
#include "kernels/ipsec.cl"

namespace {

using fulcrum::offload::EmuKernelRegistration;
using fulcrum::offload::host_kernel_entry;

const EmuKernelRegistration kIpsecAesCtr{host_kernel_entry<&ipsec_aes_ctr>("ipsec_aes_ctr")};
const EmuKernelRegistration kIpsecHmacSha1{host_kernel_entry<&ipsec_hmac_sha1>("ipsec_hmac_sha1")};
const EmuKernelRegistration kIpsecAesHmacFused{
    host_kernel_entry<&ipsec_aes_hmac_fused>("ipsec_aes_hmac_fused")};

}  // namespace
