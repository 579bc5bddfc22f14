// The host build of kernels/ids_ac_scan.cl, for the emulated device: its kernels, registered by
// name (offload/emu/emu_kernels.hh).
#include "offload/emu/host_kernel.hh"
// host_kernel.hh first: it sets up kernels/common/portable.h for host kernels.
#include "kernels/ids_ac_scan.cl"

namespace {

using fulcrum::offload::EmuKernelRegistration;
using fulcrum::offload::host_kernel_entry;

const EmuKernelRegistration kIdsAcScan{host_kernel_entry<&ids_ac_scan>("ids_ac_scan")};

}  // namespace
