// The host build of kernels/ipv4_lookup.cl, for the emulated device: its kernels, registered by
// name (offload/emu/emu_kernels.hh).
#include "offload/emu/host_kernel.hh"
// host_kernel.hh first: it sets up kernels/common/portable.h for host kernels.
#include "kernels/ipv4_lookup.cl"

namespace {

using fulcrum::offload::EmuKernelRegistration;
using fulcrum::offload::host_kernel_entry;

const EmuKernelRegistration kIpv4Dir248Lookup{
    host_kernel_entry<&ipv4_dir24_8_lookup>("ipv4_dir24_8_lookup")};

}  // namespace
