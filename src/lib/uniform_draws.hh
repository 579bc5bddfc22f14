// Deterministic uniform draws from a table's own entries: the keys a lookup element's
// `PREFETCH auto` probe looks up (Dir24_8::sample_addresses, addresses_under for IPv6,
// NameTable::sample_names; plan/lookup_probe.hh).
#pragma once

#include <cstddef>
#include <random>
#include <utility>
#include <vector>

namespace fulcrum {

// n values, each made by `make(item, rng)` from an item of `from` drawn uniformly; the same n
// gives the same values. None when `from` is empty.
template <class T, class Make>
auto draw_uniform(const std::vector<T>& from, size_t n, Make&& make) {
  using Value = decltype(make(from.front(), std::declval<std::mt19937_64&>()));
  std::vector<Value> out;
  if (from.empty()) return out;
  std::mt19937_64 rng(n);
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    const T& item = from[rng() % from.size()];
    out.push_back(make(item, rng));
  }
  return out;
}

}  // namespace fulcrum
