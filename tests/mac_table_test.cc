// MacTable: unit tests, a differential test against DPDK's rte_hash on the same keys, and a
// 16M-entry fill.
#include "lib/mac_table.hh"

#include <gtest/gtest.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <algorithm>
#include <cstdint>
#include <memory>
#include <random>
#include <unordered_map>
#include <vector>

namespace fulcrum {
namespace {

constexpr uint64_t kKeyMask = MacTable::kKeyMask;
constexpr uint16_t kNone = MacTable::kNotFound;
constexpr size_t kRteBulkMax = 64;  // RTE_HASH_LOOKUP_BULK_MAX
using Insert = MacTable::InsertResult;

std::unique_ptr<MacTable> make_table(size_t capacity, bool track = false) {
  Result<std::unique_ptr<MacTable>> t = MacTable::create(capacity, track);
  EXPECT_TRUE(t.ok()) << t.error();
  return t.ok() ? std::move(t.value()) : nullptr;
}

// n distinct 48-bit keys: an odd multiplier is a bijection modulo 2^48.
std::vector<uint64_t> distinct_keys(size_t n, uint64_t offset) {
  constexpr uint64_t kMul = 0x5851f42d4c957f2d;
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = ((i + offset) * kMul) & kKeyMask;
  return keys;
}

TEST(MacTable, MacKeyIsTheAddressInNetworkOrder) {
  const uint8_t addr[6] = {0x02, 0x11, 0x22, 0x33, 0x44, 0x55};
  EXPECT_EQ(MacTable::mac_key(addr), 0x021122334455u);
}

TEST(MacTable, EmptyTableFindsNothing) {
  auto t = make_table(1000);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->lookup(0), kNone);
  EXPECT_EQ(t->lookup(0x021122334455), kNone);
  EXPECT_EQ(t->lookup(kKeyMask), kNone);
  EXPECT_EQ(t->size(), 0u);
  EXPECT_EQ(t->capacity(), 1000u);
}

TEST(MacTable, InsertUpdateUnchanged) {
  auto t = make_table(1000);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->insert(0x021122334455, 3), Insert::kInserted);
  EXPECT_EQ(t->lookup(0x021122334455), 3);
  EXPECT_EQ(t->insert(0x021122334455, 3), Insert::kUnchanged);
  EXPECT_EQ(t->insert(0x021122334455, 7), Insert::kUpdated);
  EXPECT_EQ(t->lookup(0x021122334455), 7);
  EXPECT_EQ(t->size(), 1u);
  EXPECT_EQ(t->lookup(0x021122334456), kNone);
}

TEST(MacTable, ZeroAddressAndExtremePorts) {
  auto t = make_table(16);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->lookup(0), kNone);
  EXPECT_EQ(t->insert(0, 0), Insert::kInserted);
  EXPECT_EQ(t->lookup(0), 0);
  EXPECT_EQ(t->insert(kKeyMask, MacTable::kMaxPort), Insert::kInserted);
  EXPECT_EQ(t->lookup(kKeyMask), MacTable::kMaxPort);
  EXPECT_EQ(t->insert(1, kNone), Insert::kFull);
  EXPECT_EQ(t->lookup(1), kNone);
}

TEST(MacTable, KeysAreMaskedTo48Bits) {
  auto t = make_table(16);
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->insert(0xFFFF000000000042, 5), Insert::kInserted);
  EXPECT_EQ(t->lookup(0x42), 5);
}

TEST(MacTable, FullAtCapacity) {
  constexpr size_t kCapacity = 5000;
  auto t = make_table(kCapacity);
  ASSERT_NE(t, nullptr);
  const std::vector<uint64_t> keys = distinct_keys(kCapacity + 1, 1);
  for (size_t i = 0; i < kCapacity; ++i)
    ASSERT_EQ(t->insert(keys[i], static_cast<uint16_t>(i % 64)), Insert::kInserted) << i;
  EXPECT_EQ(t->insert(keys[kCapacity], 1), Insert::kFull);
  EXPECT_EQ(t->insert(keys[0], 63), Insert::kUpdated);
  for (size_t i = 1; i < kCapacity; ++i) ASSERT_EQ(t->lookup(keys[i]), i % 64) << i;
  EXPECT_EQ(t->lookup(keys[kCapacity]), kNone);
  EXPECT_EQ(t->size(), kCapacity);
}

TEST(MacTable, EraseAndReinsert) {
  auto t = make_table(100);
  ASSERT_NE(t, nullptr);
  ASSERT_EQ(t->insert(10, 1), Insert::kInserted);
  ASSERT_EQ(t->insert(11, 2), Insert::kInserted);
  EXPECT_TRUE(t->erase(10));
  EXPECT_FALSE(t->erase(10));
  EXPECT_EQ(t->lookup(10), kNone);
  EXPECT_EQ(t->lookup(11), 2);
  EXPECT_EQ(t->size(), 1u);
  EXPECT_EQ(t->insert(10, 4), Insert::kInserted);
  EXPECT_EQ(t->lookup(10), 4);
}

TEST(MacTable, LastSeenAndExpire) {
  auto t = make_table(100, true);
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->tracks_last_seen());
  ASSERT_EQ(t->insert(1, 1, 100), Insert::kInserted);
  ASSERT_EQ(t->insert(2, 2, 200), Insert::kInserted);
  ASSERT_EQ(t->insert(1, 1, 300), Insert::kUnchanged);
  uint16_t port = 0;
  uint32_t seen = 0;
  ASSERT_TRUE(t->lookup(1, port, seen));
  EXPECT_EQ(port, 1);
  EXPECT_EQ(seen, 300u);
  const uint64_t keys[3] = {1, 2, 3};
  uint16_t out[3];
  uint32_t seens[3] = {};
  t->lookup_bulk(keys, out, 3, seens);
  EXPECT_EQ(out[0], 1);
  EXPECT_EQ(out[1], 2);
  EXPECT_EQ(out[2], kNone);
  EXPECT_EQ(seens[0], 300u);
  EXPECT_EQ(seens[1], 200u);
  EXPECT_EQ(t->expire(250), 1u);
  EXPECT_EQ(t->lookup(2), kNone);
  EXPECT_EQ(t->lookup(1), 1);
  EXPECT_EQ(t->size(), 1u);
}

TEST(MacTable, RejectsBadCapacity) {
  EXPECT_FALSE(MacTable::create(0, false).ok());
  EXPECT_FALSE(MacTable::create(MacTable::kMaxCapacity + 1, false).ok());
}

// Random inserts, updates, erases and lookups against std::unordered_map, at full load so that
// cuckoo moves happen (last-seen times move with their entries).
TEST(MacTable, MatchesUnorderedMapUnderChurn) {
  constexpr size_t kCapacity = 20000;
  constexpr int kOps = 400000;
  constexpr uint64_t kKeySpace = 30000;  // more keys than capacity: inserts fail when full
  auto t = make_table(kCapacity, true);
  ASSERT_NE(t, nullptr);
  std::unordered_map<uint64_t, std::pair<uint16_t, uint32_t>> ref;
  std::mt19937_64 rng(42);
  const std::vector<uint64_t> keys = distinct_keys(kKeySpace, 7);
  for (int op = 0; op < kOps; ++op) {
    const uint64_t k = keys[rng() % kKeySpace];
    const uint32_t choice = static_cast<uint32_t>(rng() % 10);
    const uint16_t port = static_cast<uint16_t>(rng() % 32);
    const uint32_t now = static_cast<uint32_t>(op);
    if (choice < 6) {
      const Insert r = t->insert(k, port, now);
      auto it = ref.find(k);
      if (it != ref.end()) {
        ASSERT_EQ(r, it->second.first == port ? Insert::kUnchanged : Insert::kUpdated);
        it->second = {port, now};
      } else if (ref.size() < kCapacity) {
        ASSERT_EQ(r, Insert::kInserted) << "load " << ref.size();
        ref[k] = {port, now};
      } else {
        ASSERT_EQ(r, Insert::kFull);
      }
    } else if (choice < 7) {
      ASSERT_EQ(t->erase(k), ref.erase(k) == 1);
    } else {
      uint16_t p = 0;
      uint32_t seen = 0;
      auto it = ref.find(k);
      ASSERT_EQ(t->lookup(k, p, seen), it != ref.end());
      if (it != ref.end()) {
        ASSERT_EQ(p, it->second.first);
        ASSERT_EQ(seen, it->second.second);
      }
    }
  }
  EXPECT_EQ(t->size(), ref.size());
  std::vector<uint16_t> out(kKeySpace);
  t->lookup_bulk(keys.data(), out.data(), keys.size());
  for (size_t i = 0; i < kKeySpace; ++i) {
    auto it = ref.find(keys[i]);
    ASSERT_EQ(out[i], it == ref.end() ? kNone : it->second.first) << i;
  }
}

TEST(MacTable, InsertBulkMatchesInsert) {
  constexpr size_t kN = 50000;
  auto bulk = make_table(kN);
  auto one = make_table(kN);
  ASSERT_NE(bulk, nullptr);
  ASSERT_NE(one, nullptr);
  const std::vector<uint64_t> keys = distinct_keys(kN, 3);
  std::vector<uint16_t> ports(kN);
  for (size_t i = 0; i < kN; ++i) ports[i] = static_cast<uint16_t>(i * 31 % 1000);
  EXPECT_EQ(bulk->insert_bulk(keys.data(), ports.data(), kN), 0u);
  for (size_t i = 0; i < kN; ++i) ASSERT_NE(one->insert(keys[i], ports[i]), Insert::kFull);
  std::vector<uint16_t> a(kN), b(kN);
  bulk->lookup_bulk(keys.data(), a.data(), kN);
  for (size_t i = 0; i < kN; ++i) b[i] = one->lookup(keys[i]);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a, ports);
}

struct RteHashDeleter {
  void operator()(rte_hash* h) const { rte_hash_free(h); }
};

std::unique_ptr<rte_hash, RteHashDeleter> make_rte_hash(const char* name, uint32_t entries) {
  rte_hash_parameters params{};
  params.name = name;
  params.entries = entries;
  params.key_len = sizeof(uint64_t);
  params.hash_func = rte_hash_crc;
  params.hash_func_init_val = 0;
  params.socket_id = SOCKET_ID_ANY;
  params.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
  return std::unique_ptr<rte_hash, RteHashDeleter>(rte_hash_create(&params));
}

// Compares lookups of `queries` in both tables; returns the number of keys found.
size_t expect_same(const MacTable& ours, const rte_hash* theirs,
                   const std::vector<uint64_t>& queries) {
  size_t found = 0;
  uint16_t out[kRteBulkMax];
  const void* key_ptrs[kRteBulkMax];
  void* data[kRteBulkMax];
  for (size_t i = 0; i < queries.size(); i += kRteBulkMax) {
    const size_t n = std::min(kRteBulkMax, queries.size() - i);
    ours.lookup_bulk(queries.data() + i, out, n);
    for (size_t j = 0; j < n; ++j) key_ptrs[j] = &queries[i + j];
    uint64_t hits = 0;
    const int nhits =
        rte_hash_lookup_bulk_data(theirs, key_ptrs, static_cast<uint32_t>(n), &hits, data);
    EXPECT_GE(nhits, 0);
    for (size_t j = 0; j < n; ++j) {
      const bool hit = (hits >> j) & 1;
      EXPECT_EQ(out[j] != kNone, hit) << "key " << std::hex << queries[i + j];
      if (hit) {
        EXPECT_EQ(out[j], static_cast<uint16_t>(reinterpret_cast<uintptr_t>(data[j])));
        ++found;
      }
    }
    if (::testing::Test::HasFailure()) return found;
  }
  return found;
}

// The same keys in both tables, then 1.5M lookups (two thirds present, one third absent),
// updates of a tenth of the ports, erases of another tenth, and the lookups again.
TEST(MacTable, DifferentialAgainstRteHash) {
  constexpr uint32_t kEntries = 1u << 20;
  constexpr size_t kLookups = 1500000;
  constexpr size_t kChanged = kEntries / 10;
  constexpr uint16_t kPorts = 48;
  auto theirs = make_rte_hash("mac_diff", kEntries);
  ASSERT_NE(theirs, nullptr) << rte_strerror(rte_errno);
  auto ours = make_table(kEntries);
  ASSERT_NE(ours, nullptr);
  std::mt19937_64 rng(2024);
  std::vector<uint64_t> keys(kEntries);
  for (uint64_t& k : keys) k = rng() & kKeyMask;
  std::vector<uint16_t> ports(kEntries);
  for (uint32_t i = 0; i < kEntries; ++i) {
    ports[i] = static_cast<uint16_t>(rng() % kPorts);
    ASSERT_NE(ours->insert(keys[i], ports[i]), Insert::kFull) << i;
    ASSERT_EQ(
        rte_hash_add_key_data(theirs.get(), &keys[i], reinterpret_cast<void*>(uintptr_t{ports[i]})),
        0);
  }
  std::vector<uint64_t> queries(kLookups);
  for (uint64_t& q : queries) q = rng() % 3 != 0 ? keys[rng() % kEntries] : rng() & kKeyMask;
  const size_t found = expect_same(*ours, theirs.get(), queries);
  EXPECT_GT(found, kLookups / 2);
  for (size_t i = 0; i < kChanged; ++i) {
    const uint64_t k = keys[rng() % kEntries];
    const uint16_t p = static_cast<uint16_t>(rng() % kPorts);
    ASSERT_NE(ours->insert(k, p), Insert::kFull);
    ASSERT_EQ(rte_hash_add_key_data(theirs.get(), &k, reinterpret_cast<void*>(uintptr_t{p})), 0);
  }
  for (size_t i = 0; i < kChanged; ++i) {
    const uint64_t k = keys[rng() % kEntries];
    const bool erased = ours->erase(k);
    ASSERT_EQ(erased, rte_hash_del_key(theirs.get(), &k) >= 0);
  }
  EXPECT_EQ(ours->size(), static_cast<size_t>(rte_hash_count(theirs.get())));
  const size_t found_after = expect_same(*ours, theirs.get(), queries);
  EXPECT_LT(found_after, found);
}

// 16M entries: every insert succeeds, every key is found with its port, and the table stays
// at 8 bytes per slot at the load limit (under 160 MiB).
TEST(MacTable, Fill16M) {
  constexpr size_t kEntries = size_t{1} << 24;
  constexpr size_t kMaxBytes = size_t{160} << 20;
  constexpr uint16_t kPortMask = 0xFF;
  auto t = make_table(kEntries);
  ASSERT_NE(t, nullptr);
  EXPECT_LE(t->memory_bytes(), kMaxBytes);
  const std::vector<uint64_t> keys = distinct_keys(kEntries, 11);
  std::vector<uint16_t> ports(kEntries);
  for (size_t i = 0; i < kEntries; ++i) ports[i] = static_cast<uint16_t>(i & kPortMask);
  EXPECT_EQ(t->insert_bulk(keys.data(), ports.data(), kEntries), 0u);
  EXPECT_EQ(t->size(), kEntries);
  std::vector<uint16_t> out(kEntries);
  t->lookup_bulk(keys.data(), out.data(), kEntries);
  size_t wrong = 0;
  for (size_t i = 0; i < kEntries; ++i) wrong += out[i] != ports[i];
  EXPECT_EQ(wrong, 0u);
  const std::vector<uint64_t> absent = distinct_keys(kEntries / 16, kEntries + 11);
  std::vector<uint16_t> none(absent.size());
  t->lookup_bulk(absent.data(), none.data(), absent.size());
  EXPECT_EQ(static_cast<size_t>(std::count(none.begin(), none.end(), kNone)), absent.size());
}

}  // namespace
}  // namespace fulcrum
