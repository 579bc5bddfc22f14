// The host build of kernels/ip_checksum_verify.cl, for the emulated device: its kernels, registered
// by name (offload/emu/emu_kernels.hh).
#include "offload/emu/host_kernel.hh"
// host_kernel.hh first: it sets up kernels/common/portable.h for host kernels.
#include "kernels/ip_checksum_verify.cl"

namespace {

using fulcrum::offload::EmuKernelRegistration;
using fulcrum::offload::host_kernel_entry;

const EmuKernelRegistration kIpChecksumVerify{
    host_kernel_entry<&ip_checksum_verify>("ip_checksum_verify")};

}  // namespace
