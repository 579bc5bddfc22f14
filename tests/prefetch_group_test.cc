// Every lookup table's lookup_bulk with a run-time prefetch group (lib/prefetch_group.hh) gives
// the answers of its one-key lookup, for every valid group and for an invalid one (the table's
// default), over batch sizes that leave partial groups.
#include "lib/prefetch_group.hh"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lib/dir24_8.hh"
#include "lib/ip6_trie.hh"
#include "lib/mac_table.hh"
#include "lib/name_table.hh"
#include "lib/ndn_wire.hh"

namespace fulcrum {
namespace {

constexpr unsigned kGroups[] = {1, 2, 4, 8, 16, 32, 64, 3 /* invalid: the default */};
constexpr size_t kSizes[] = {1, 7, 64, 100, 256};

TEST(PrefetchGroup, ValidGroupsArePowersOfTwoUpTo64) {
  for (unsigned g : {1u, 2u, 4u, 8u, 16u, 32u, 64u}) EXPECT_TRUE(valid_prefetch_group(g)) << g;
  for (unsigned g : {0u, 3u, 12u, 128u}) EXPECT_FALSE(valid_prefetch_group(g)) << g;
  EXPECT_EQ(with_prefetch_group<16>(8, [](auto g) { return decltype(g)::value; }), 8u);
  EXPECT_EQ(with_prefetch_group<16>(5, [](auto g) { return decltype(g)::value; }), 16u);
}

TEST(PrefetchGroup, Dir24_8AnswersAlikeForEveryGroup) {
  Dir24_8 t;
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const uint8_t len = static_cast<uint8_t>(8 + rng() % 25);
    const uint32_t mask = len == 32 ? ~0u : ~(~0u >> len);
    ASSERT_TRUE(t.add(rng() & mask, len, static_cast<uint16_t>(rng() % 16)).ok());
  }
  ASSERT_TRUE(t.build().ok());
  EXPECT_GT(t.working_set_bytes(), 0u);
  EXPECT_GE(t.accesses_per_lookup(), 1.0);
  std::vector<uint32_t> addrs(256);
  for (uint32_t& a : addrs) a = rng();
  for (unsigned g : kGroups)
    for (size_t n : kSizes) {
      std::vector<uint16_t> out(n, 0xAAAA);
      t.lookup_bulk(addrs.data(), out.data(), n, g);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], t.lookup(addrs[i])) << g << " " << n;
    }
}

TEST(PrefetchGroup, Ip6TrieAnswersAlikeForEveryGroup) {
  Ip6Trie t;
  std::mt19937_64 rng(11);
  std::vector<std::array<uint8_t, 16>> addrs(256);
  for (int i = 0; i < 500; ++i) {
    uint8_t p[16] = {};
    const uint64_t hi = rng() & ~((uint64_t{1} << 16) - 1);  // a /48
    for (int b = 0; b < 8; ++b) p[b] = static_cast<uint8_t>(hi >> (56 - 8 * b));
    ASSERT_TRUE(t.add(p, 48, static_cast<uint16_t>(i % 8)).ok());
    if (i < 256) {
      std::memcpy(addrs[i].data(), p, 16);
      addrs[i][15] = static_cast<uint8_t>(i);
    }
  }
  ASSERT_TRUE(t.build().ok());
  EXPECT_GE(t.accesses_per_lookup(), 2.0);  // TBL24 and at least one group for a /48
  for (unsigned g : kGroups)
    for (size_t n : kSizes) {
      std::vector<uint16_t> out(n, 0xAAAA);
      t.lookup_bulk(reinterpret_cast<const uint8_t(*)[16]>(addrs.data()), out.data(), n, g);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], t.lookup(addrs[i].data())) << g << " " << n;
    }
}

TEST(PrefetchGroup, MacTableInsertsAndLooksUpAlikeForEveryGroup) {
  for (unsigned g : kGroups) {
    Result<std::unique_ptr<MacTable>> t = MacTable::create(4096, false);
    ASSERT_TRUE(t) << t.error();
    std::vector<uint64_t> keys(256);
    std::vector<uint16_t> ports(256);
    for (size_t i = 0; i < keys.size(); ++i) {
      keys[i] = 0x020000000000ull + i * 977;
      ports[i] = static_cast<uint16_t>(i % 5);
    }
    EXPECT_EQ(t.value()->insert_bulk(keys.data(), ports.data(), 200, 0, g), 0u);
    for (size_t n : kSizes) {
      std::vector<uint16_t> out(n, 0xAAAA);
      t.value()->lookup_bulk(keys.data(), out.data(), n, nullptr, g);
      for (size_t i = 0; i < n; ++i)
        ASSERT_EQ(out[i], i < 200 ? ports[i] : MacTable::kNotFound) << g << " " << n;
    }
  }
}

TEST(PrefetchGroup, NameTableAnswersAlikeForEveryGroup) {
  NameTable t;
  for (int i = 0; i < 300; ++i)
    ASSERT_TRUE(t.add("/n" + std::to_string(i % 40) + "/x" + std::to_string(i), i % 7).ok());
  ASSERT_TRUE(t.build().ok());
  std::vector<ParsedName> names(256);
  std::vector<std::string> wires(256);
  for (size_t i = 0; i < names.size(); ++i) {
    wires[i] = ndn::encode_components({"n" + std::to_string(i % 40), "x" + std::to_string(i * 3)});
    ASSERT_TRUE(NameTable::parse_name(reinterpret_cast<const uint8_t*>(wires[i].data()),
                                      static_cast<uint32_t>(wires[i].size()), names[i]));
  }
  for (unsigned g : kGroups)
    for (size_t n : kSizes) {
      std::vector<uint16_t> out(n, 0xAAAA);
      t.lookup_bulk(names.data(), out.data(), n, g);
      for (size_t i = 0; i < n; ++i) ASSERT_EQ(out[i], t.lookup(names[i])) << g << " " << n;
    }
}

}  // namespace
}  // namespace fulcrum
