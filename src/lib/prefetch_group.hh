// Group prefetch distance as a run-time value with compile-time loops: the lookup tables
// (DIR-24-8, the IPv6 trie, the MAC table, the NDN name table) resolve keys in groups of G,
// prefetching one group ahead (paper 003, Algorithm 1). G is a template parameter so each loop
// is unrolled for its size; with_prefetch_group() picks the instantiation for a run-time G once
// per call, so a configured distance costs one switch per batch, not per packet.
#pragma once

#include <cstddef>
#include <type_traits>

namespace fulcrum {

inline constexpr unsigned kMinPrefetchGroup = 1;
inline constexpr unsigned kMaxPrefetchGroup = 64;

// Powers of two from 1 to 64.
constexpr bool valid_prefetch_group(unsigned g) {
  return g >= kMinPrefetchGroup && g <= kMaxPrefetchGroup && (g & (g - 1)) == 0;
}

// f(std::integral_constant<size_t, G>{}) for G = g; `fallback` for a g that is not valid.
template <size_t Fallback, class F>
decltype(auto) with_prefetch_group(unsigned g, F&& f) {
  switch (g) {
    case 1:
      return f(std::integral_constant<size_t, 1>{});
    case 2:
      return f(std::integral_constant<size_t, 2>{});
    case 4:
      return f(std::integral_constant<size_t, 4>{});
    case 8:
      return f(std::integral_constant<size_t, 8>{});
    case 16:
      return f(std::integral_constant<size_t, 16>{});
    case 32:
      return f(std::integral_constant<size_t, 32>{});
    case 64:
      return f(std::integral_constant<size_t, 64>{});
    default:
      return f(std::integral_constant<size_t, Fallback>{});
  }
}

}  // namespace fulcrum
