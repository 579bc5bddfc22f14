// Helpers of the IPv6 route table tests (Ip6Table, Ip6Trie): addresses from text, routes, an
// address inside a route, and the naive longest-prefix match that is their oracle.
#pragma once

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/ip6_table.hh"
#include "lib/ip6_trie.hh"
#include "lib/route6_table.hh"

namespace fulcrum::ip6_testing {

constexpr uint16_t kNone = Ip6Table::kNoRoute;
using Bytes = std::array<uint8_t, Ip6Table::kAddrBytes>;

inline Bytes a6(const char* text) {
  Bytes b{};
  EXPECT_EQ(inet_pton(AF_INET6, text, b.data()), 1) << text;
  return b;
}

inline Route6 r6(const char* prefix, uint8_t len, uint16_t port) {
  return Route6{a6(prefix), len, port};
}

inline std::string text6(const Bytes& b) {
  char s[INET6_ADDRSTRLEN];
  inet_ntop(AF_INET6, b.data(), s, sizeof s);
  return s;
}

// An address inside route r: its prefix with the host bits taken from `random`.
inline Bytes inside(const Route6& r, Addr6 random) {
  const Addr6 p = Addr6::from_bytes(r.prefix.data());
  Bytes b{};
  Addr6{p.hi | (random.hi & ~Addr6::hi_mask(r.len)), p.lo | (random.lo & ~Addr6::lo_mask(r.len))}
      .to_bytes(b.data());
  return b;
}

// A table (Ip6Table, Ip6Trie) of `routes`, built.
template <class Table>
std::unique_ptr<Table> build(const std::vector<Route6>& routes) {
  auto t = std::make_unique<Table>();
  for (const Route6& r : routes) EXPECT_TRUE(t->add(r.prefix.data(), r.len, r.port).ok());
  Status s = t->build();
  EXPECT_TRUE(s.ok()) << s.error();
  return t;
}

// Longest-prefix match by scanning every route: the oracle for small tables.
inline uint16_t naive_lookup(const std::vector<Route6>& routes, const Bytes& addr) {
  const Addr6 a = Addr6::from_bytes(addr.data());
  int best_len = -1;
  uint16_t hop = kNone;
  for (const Route6& r : routes) {
    if (a.masked(r.len) == Addr6::from_bytes(r.prefix.data()) && r.len > best_len) {
      best_len = r.len;
      hop = r.port;
    }
  }
  return hop;
}

// The tbl8 groups of the uncompressed trie (rte_lpm6's): one per distinct prefix of 24, 32,
// 40, ... bits that a longer route extends. Ip6Trie keeps or merges each.
inline size_t uncompressed_groups(const std::vector<Route6>& routes) {
  std::set<std::pair<Addr6, uint32_t>> groups;
  for (const Route6& r : routes)
    for (uint32_t bits = Ip6Trie::kTbl24Bits; bits < r.len; bits += Ip6Trie::kStrideBits)
      groups.insert({Addr6::from_bytes(r.prefix.data()).masked(bits), bits});
  return groups.size();
}

}  // namespace fulcrum::ip6_testing
