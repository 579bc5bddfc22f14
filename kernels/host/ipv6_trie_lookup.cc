// The host build of kernels/ipv6_trie_lookup.cl, for the emulated device: its kernels, registered
// by name (offload/emu/emu_kernels.hh).
#include "offload/emu/host_kernel.hh"
// host_kernel.hh first: it sets up kernels/common/portable.h for host kernels.
#include "kernels/ipv6_trie_lookup.cl"

namespace {

using fulcrum::offload::EmuKernelRegistration;
using fulcrum::offload::host_kernel_entry;

const EmuKernelRegistration kIpv6TrieLookup{
    host_kernel_entry<&ipv6_trie_lookup>("ipv6_trie_lookup")};

}  // namespace
