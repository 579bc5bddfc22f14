// The IDS content prefilter (ENGINE ac, src/offload/ids_tables.hh): one thread per packet walks
// its region of the packed bytes with the Aho-Corasick DFA of src/lib/ids/aho_corasick.hh, one
// table load per byte, and records every step into a state with outputs.
// regions: per packet {uint32 offset into bytes, uint32 length}. classes: uint8[256] byte ->
// class. table: entries premultiplied by the stride, kMatchBit set when the target has outputs.
// results: per packet kResultWords uint32 {count, then (state, end) for the first kMaxMatches
// steps}; count keeps counting past them (the packet is then overflowed).
#include <cstddef>
#include <cstdint>

#include "offload/cuda/cuda_kernels.hh"

namespace {

constexpr uint32_t kMatchBit = 0x80000000u;
constexpr uint32_t kStateMask = 0x7FFFFFFFu;
constexpr uint32_t kMaxMatches = 31;
constexpr uint32_t kResultWords = 1 + 2 * kMaxMatches;
constexpr uint32_t kRegionWords = 2;
constexpr uint32_t kAlphabet = 256;

__global__ void ids_ac_scan(const uint8_t* __restrict__ bytes, const uint32_t* __restrict__ regions,
                            const uint8_t* __restrict__ classes, const uint32_t* __restrict__ table,
                            uint32_t* __restrict__ results, uint32_t count) {
  __shared__ uint8_t cls[kAlphabet];
  for (uint32_t c = threadIdx.x; c < kAlphabet; c += blockDim.x) cls[c] = classes[c];
  __syncthreads();
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= count) return;
  const uint32_t offset = regions[static_cast<size_t>(i) * kRegionWords];
  const uint32_t len = regions[static_cast<size_t>(i) * kRegionWords + 1];
  const uint8_t* msg = bytes + offset;
  uint32_t* out = results + static_cast<size_t>(i) * kResultWords;
  uint32_t s = 0;
  uint32_t n = 0;
  for (uint32_t k = 0; k < len; ++k) {
    const uint32_t e = __ldg(&table[s + cls[__ldg(&msg[k])]]);
    s = e & kStateMask;
    if (e & kMatchBit) {
      if (n < kMaxMatches) {
        out[1 + 2 * n] = s;
        out[2 + 2 * n] = k + 1;
      }
      ++n;
    }
  }
  out[0] = n;
}

const fulcrum::offload::CudaKernelRegistration kRegistration{
    {"ids_ac_scan", "bbbbbu", reinterpret_cast<const void*>(&ids_ac_scan)}};

}  // namespace
