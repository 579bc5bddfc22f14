// IPv4 longest-prefix match on a DIR-24-8 table (src/lib/dir24_8.hh has the layout): one thread
// per address. Addresses are in host byte order; results are next hops or 0xFFFF.
#include <cstdint>

#include "offload/cuda/cuda_kernels.hh"

namespace {

constexpr uint32_t kSegmentFlag = 0x8000u;
constexpr uint32_t kMaxSegments = 0x7FFFu;
constexpr uint32_t kSegmentBits = 8u;
constexpr uint32_t kSegmentMask = 0xFFu;

__global__ void ipv4_dir24_8_lookup(const uint32_t* __restrict__ addrs,
                                    uint16_t* __restrict__ next_hops,
                                    const uint16_t* __restrict__ tbl24,
                                    const uint16_t* __restrict__ tbllong, uint32_t count) {
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint32_t addr = addrs[i];
  const uint16_t e = __ldg(&tbl24[addr >> kSegmentBits]);
  const uint32_t segment = static_cast<uint32_t>(e) - kSegmentFlag;
  uint16_t hop = e;
  if (e >= kSegmentFlag && segment < kMaxSegments)
    hop = __ldg(&tbllong[(segment << kSegmentBits) | (addr & kSegmentMask)]);
  next_hops[i] = hop;
}

const fulcrum::offload::CudaKernelRegistration kRegistration{
    {"ipv4_dir24_8_lookup", "bbbbu", reinterpret_cast<const void*>(&ipv4_dir24_8_lookup)}};

}  // namespace
