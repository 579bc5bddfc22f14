// The CUDA build of kernels/ipv6_trie_lookup.cl: its kernels, registered by name with their
// parameter signatures for the CUDA backend (offload/cuda/cuda_kernels.hh).
#include "kernels/ipv6_trie_lookup.cl"
#include "offload/cuda/cuda_kernels.hh"

namespace {

const fulcrum::offload::CudaKernelRegistration kIpv6TrieLookupRegistration{
    {"ipv6_trie_lookup", "bbbbbu", reinterpret_cast<const void*>(&ipv6_trie_lookup)}};

}  // namespace
