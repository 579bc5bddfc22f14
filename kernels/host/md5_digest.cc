// The host build of kernels/md5_digest.cl, for the emulated device: its kernels, registered by name
// (offload/emu/emu_kernels.hh).
#include "offload/emu/host_kernel.hh"
// host_kernel.hh first: it sets up kernels/common/portable.h for host kernels.
#include "kernels/md5_digest.cl"

namespace {

using fulcrum::offload::EmuKernelRegistration;
using fulcrum::offload::host_kernel_entry;

const EmuKernelRegistration kMd5Digest{host_kernel_entry<&md5_digest>("md5_digest")};

}  // namespace
