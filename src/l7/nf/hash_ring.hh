// A consistent-hash ring with virtual nodes (Karger et al., "Consistent hashing and random
// trees", STOC 1997): each member owns `vnodes` points on a 64-bit ring; a key goes to the
// owner of the first point at or after its hash that is up. When a member goes down only the
// keys it owned move (to the next points' owners, spread over the others); the rest stay.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

namespace fulcrum::l7 {

// FNV-1a, then a splitmix64 finaliser for avalanche.
inline uint64_t hash64(std::string_view s, uint64_t seed = 0) {
  uint64_t h = 0xcbf29ce484222325ull ^ seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ull;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebull;
  return h ^ (h >> 31);
}

inline uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

class HashRing {
 public:
  // Adds member `id` (any int, e.g. a backend index) named `name` (its points depend on the
  // name only, so a ring built in another order or process places it the same).
  void add(int id, std::string_view name, uint32_t vnodes) {
    for (uint32_t v = 0; v < vnodes; ++v) points_.emplace_back(hash64(name, mix64(v)), id);
    std::sort(points_.begin(), points_.end());
  }

  // The member for `key` among those `up(id)` accepts; -1 when none is.
  template <class Up>
  int pick(uint64_t key, Up&& up) const {
    if (points_.empty()) return -1;
    auto it = std::lower_bound(points_.begin(), points_.end(), std::make_pair(key, INT32_MIN));
    size_t i = static_cast<size_t>(it - points_.begin());
    for (size_t n = 0; n < points_.size(); ++n, ++i) {
      const int id = points_[i % points_.size()].second;
      if (up(id)) return id;
    }
    return -1;
  }

  size_t points() const { return points_.size(); }

 private:
  std::vector<std::pair<uint64_t, int>> points_;
};

}  // namespace fulcrum::l7
