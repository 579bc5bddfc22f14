// IPv6 longest-prefix match on the compressed trie of paper 003 §3.6 (src/lib/ip6_trie.hh has
// the layout): one thread per address, the walk of Ip6Trie::lookup. Addresses are 16 bytes each
// in network byte order (as they sit in the packet); results are next hops or 0xFFFF.
// headers: 4 uint64 per group {path hi, path lo, fallback hop in bits 0..15, unused}.
#include <cstddef>
#include <cstdint>

#include "offload/cuda/cuda_kernels.hh"

namespace {

constexpr uint32_t kLink = 0x80000000u;
constexpr uint32_t kByteShift = 27u;
constexpr uint32_t kByteMask = 0xFu;
constexpr uint32_t kGroupMask = 0x7FFFFFFu;
constexpr uint32_t kHopMask = 0xFFFFu;
constexpr uint32_t kTbl24Shift = 40u;
constexpr uint32_t kFirstGroupByte = 3u;
constexpr uint32_t kGroupBits = 8u;
constexpr uint32_t kGroupEntries = 256u;
constexpr uint32_t kHeaderWords = 4u;
constexpr uint32_t kAddrBytes = 16u;
constexpr uint32_t kWordBytes = 8u;
constexpr uint32_t kWordBits = 64u;
constexpr uint32_t kLastByteShift = 56u;

__device__ uint64_t load_be64(const uint8_t* b) {
  uint64_t w = 0;
  for (uint32_t k = 0; k < kWordBytes; ++k) w = (w << 8) | b[k];
  return w;
}

__device__ uint64_t hi_mask(uint32_t bits) {
  return bits >= kWordBits ? ~uint64_t{0} : bits == 0 ? 0 : ~uint64_t{0} << (kWordBits - bits);
}

__device__ uint64_t lo_mask(uint32_t bits) {
  return bits <= kWordBits ? 0 : ~uint64_t{0} << (2 * kWordBits - bits);
}

__global__ void ipv6_trie_lookup(const uint8_t* __restrict__ addrs,
                                 uint16_t* __restrict__ next_hops,
                                 const uint32_t* __restrict__ tbl24,
                                 const uint32_t* __restrict__ groups,
                                 const uint64_t* __restrict__ headers, uint32_t count) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint8_t* a = addrs + static_cast<size_t>(i) * kAddrBytes;
  const uint64_t hi = load_be64(a);
  const uint64_t lo = load_be64(a + kWordBytes);
  uint32_t e = __ldg(&tbl24[hi >> kTbl24Shift]);
  uint32_t expect = kFirstGroupByte;  // the byte a link that skips nothing leads to
  while (e & kLink) {
    const uint32_t byte = (e >> kByteShift) & kByteMask;
    const uint32_t g = e & kGroupMask;
    const uint64_t w = byte < kWordBytes ? hi : lo;
    const uint32_t b =
        static_cast<uint32_t>(w >> (kLastByteShift - kGroupBits * (byte % kWordBytes))) &
        (kGroupEntries - 1);
    const uint32_t next = __ldg(&groups[static_cast<size_t>(g) * kGroupEntries + b]);
    if (byte != expect) {
      // The link skipped bytes: the address must carry the group's path.
      const uint64_t* h = headers + static_cast<size_t>(g) * kHeaderWords;
      const uint32_t bits = byte * kGroupBits;
      if ((((hi & hi_mask(bits)) ^ __ldg(&h[0])) | ((lo & lo_mask(bits)) ^ __ldg(&h[1]))) != 0) {
        next_hops[i] = static_cast<uint16_t>(__ldg(&h[2]) & kHopMask);
        return;
      }
    }
    expect = byte + 1;
    e = next;
  }
  next_hops[i] = static_cast<uint16_t>(e & kHopMask);
}

const fulcrum::offload::CudaKernelRegistration kRegistration{
    {"ipv6_trie_lookup", "bbbbbu", reinterpret_cast<const void*>(&ipv6_trie_lookup)}};

}  // namespace
