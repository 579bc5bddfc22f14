// The per-batch draw the weighted balancers share (NBA's weighted balancer): a xorshift64 step,
// true with probability threshold / 2^32.
#pragma once

#include <cstdint>

namespace fulcrum {

inline bool draw_below(uint64_t& state, uint64_t threshold) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return (state >> 32) < threshold;
}

}  // namespace fulcrum
