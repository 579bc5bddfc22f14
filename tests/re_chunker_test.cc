// Chunking, MD5, fingerprint table and packet store of src/lib/re: MD5 against the RFC 1321
// test suite, content-defined boundaries against a direct (non-rolling) evaluation of the
// documented rule, table replacement, store wrap-around.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "lib/re/chunker.hh"
#include "lib/re/fingerprint_table.hh"
#include "lib/re/md5.hh"
#include "lib/re/packet_store.hh"
#include "md5_vectors.hh"

namespace fulcrum::re {
namespace {

std::string hex(const Md5Digest& d) {
  static const char* const kHex = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d.b) {
    s += kHex[b >> 4];
    s += kHex[b & 15];
  }
  return s;
}

TEST(ReMd5, MatchesRfc1321TestSuite) {
  const auto suite = fulcrum::testing::rfc1321_suite();
  std::vector<ByteRange> in;
  for (const auto& [msg, want] : suite) {
    EXPECT_EQ(hex(md5(reinterpret_cast<const uint8_t*>(msg.data()), msg.size())), want);
    in.push_back({reinterpret_cast<const uint8_t*>(msg.data()), static_cast<uint32_t>(msg.size())});
  }
  std::vector<Md5Digest> out(in.size());
  md5_bulk(in.data(), out.data(), static_cast<uint32_t>(in.size()));
  for (size_t i = 0; i < suite.size(); ++i) EXPECT_EQ(hex(out[i]), suite[i].second);
}

TEST(ReChunker, FixedChunksCoverFullChunksOnly) {
  std::vector<uint8_t> data(200);
  std::vector<Chunk> out(data.size());
  ChunkParams p{ChunkParams::Mode::kFixed, 64};
  ASSERT_EQ(chunk_payload(data.data(), 200, p, out.data()), 3u);
  EXPECT_EQ(out[2].offset, 128u);
  EXPECT_EQ(out[2].len, 64u);
  EXPECT_EQ(chunk_payload(data.data(), 63, p, out.data()), 0u);
  EXPECT_EQ(chunk_payload(data.data(), 64, p, out.data()), 1u);
}

// The documented rule, evaluated from scratch at every position.
std::vector<Chunk> reference_content_chunks(const std::vector<uint8_t>& d, uint32_t size) {
  const uint32_t min = size / 2, max = size * 4;
  uint32_t bits = 0;
  while ((1u << bits) < size) ++bits;
  std::vector<Chunk> out;
  uint32_t start = 0;
  for (uint32_t e = 1; e <= d.size(); ++e) {
    uint64_t h = 0;
    for (uint32_t j = e >= kWindow ? e - kWindow : 0; j < e; ++j) h = h * kBase + d[j];
    const bool cut = e - start >= min && ((h * kMix) >> (64 - bits)) == 0;
    if (e - start >= max || cut) {
      out.push_back({start, e - start});
      start = e;
    }
  }
  if (d.size() - start >= min) out.push_back({start, static_cast<uint32_t>(d.size()) - start});
  return out;
}

TEST(ReChunker, ContentDefinedMatchesDirectEvaluation) {
  std::mt19937 rng(7);
  for (uint32_t size : {32u, 64u, 256u}) {
    std::vector<uint8_t> d(9000);
    for (auto& b : d) b = static_cast<uint8_t>(rng());
    // A long run of one byte forces maximum-length chunks.
    std::fill(d.begin() + 4000, d.begin() + 6000, 0x41);
    ChunkParams p{ChunkParams::Mode::kContent, size};
    ASSERT_TRUE(p.valid());
    std::vector<Chunk> out(p.max_chunks(static_cast<uint32_t>(d.size())) + 1);
    const uint32_t n = chunk_payload(d.data(), static_cast<uint32_t>(d.size()), p, out.data());
    const std::vector<Chunk> want = reference_content_chunks(d, size);
    ASSERT_EQ(n, want.size()) << "size " << size;
    ASSERT_LE(n, p.max_chunks(static_cast<uint32_t>(d.size())));
    for (uint32_t i = 0; i < n; ++i) {
      EXPECT_EQ(out[i].offset, want[i].offset);
      EXPECT_EQ(out[i].len, want[i].len);
    }
  }
}

TEST(ReChunker, ContentBoundariesSurviveAnInsertion) {
  std::mt19937 rng(3);
  std::vector<uint8_t> a(4000);
  for (auto& b : a) b = static_cast<uint8_t>(rng());
  std::vector<uint8_t> b = a;
  b.insert(b.begin() + 10, {1, 2, 3, 4, 5});
  ChunkParams p{ChunkParams::Mode::kContent, 64};
  std::vector<Chunk> ca(p.max_chunks(4000)), cb(p.max_chunks(4005));
  const uint32_t na = chunk_payload(a.data(), 4000, p, ca.data());
  const uint32_t nb = chunk_payload(b.data(), 4005, p, cb.data());
  // Boundaries past the first few chunks line up again, shifted by the insertion.
  uint32_t shared = 0;
  for (uint32_t i = 0; i < na; ++i)
    for (uint32_t j = 0; j < nb; ++j)
      shared += cb[j].offset == ca[i].offset + 5 && cb[j].len == ca[i].len;
  EXPECT_GE(shared, na - 3);
}

TEST(ReChunker, RejectsBadSizes) {
  EXPECT_FALSE((ChunkParams{ChunkParams::Mode::kFixed, 4}).valid());
  EXPECT_FALSE((ChunkParams{ChunkParams::Mode::kContent, 48}).valid());
  EXPECT_FALSE((ChunkParams{ChunkParams::Mode::kContent, 16}).valid());
  EXPECT_TRUE((ChunkParams{ChunkParams::Mode::kContent, 1024}).valid());
}

TEST(ReFingerprintTable, InsertLookupRefresh) {
  auto t = FingerprintTable::create(1024);
  ASSERT_TRUE(t);
  FingerprintTable& tab = **t;
  EXPECT_EQ(tab.capacity(), 1024u);
  EXPECT_EQ(tab.lookup(42), 0u);
  EXPECT_FALSE(tab.insert(42, FingerprintTable::make_ref(100, 64)));
  EXPECT_EQ(FingerprintTable::ref_pos(tab.lookup(42)), 100u);
  EXPECT_EQ(FingerprintTable::ref_len(tab.lookup(42)), 64u);
  EXPECT_FALSE(tab.insert(42, FingerprintTable::make_ref(900, 32)));
  EXPECT_EQ(FingerprintTable::ref_pos(tab.lookup(42)), 900u);
  EXPECT_EQ(tab.size(), 1u);
}

TEST(ReFingerprintTable, FullBucketReplacesOldestPosition) {
  auto t = FingerprintTable::create(1024);
  ASSERT_TRUE(t);
  FingerprintTable& tab = **t;
  const uint64_t buckets = tab.capacity() / FingerprintTable::kBucketEntries;
  // Five keys in bucket 3, inserted with positions out of order.
  const uint64_t pos[] = {500, 100, 700, 300, 900};
  for (uint32_t i = 0; i < 5; ++i) {
    const bool evicted = tab.insert(3 + i * buckets, FingerprintTable::make_ref(pos[i], 8));
    EXPECT_EQ(evicted, i == 4);
  }
  EXPECT_EQ(tab.lookup(3 + 1 * buckets), 0u);  // position 100 was the oldest
  for (uint32_t i : {0u, 2u, 3u, 4u}) EXPECT_NE(tab.lookup(3 + i * buckets), 0u) << i;
  EXPECT_EQ(tab.lookup(4), 0u);
}

TEST(RePacketStore, WrapsAndForgets) {
  auto s = PacketStore::create(PacketStore::kMinSize);
  ASSERT_TRUE(s);
  PacketStore& st = **s;
  std::vector<uint8_t> a(60000, 0xAA), b(60000, 0xBB), c(20000);
  for (size_t i = 0; i < c.size(); ++i) c[i] = static_cast<uint8_t>(i * 7);
  const uint64_t pa = st.append(a.data(), 60000);
  const uint64_t pb = st.append(b.data(), 60000);
  EXPECT_TRUE(st.matches(pa, a.data(), 60000));
  const uint64_t pc = st.append(c.data(), 20000);  // wraps past the end of the ring
  EXPECT_EQ(pc, 120000u);
  EXPECT_TRUE(st.matches(pc, c.data(), 20000));
  EXPECT_TRUE(st.matches(pb, b.data(), 60000));
  EXPECT_FALSE(st.holds(pa, 60000));  // its first bytes were overwritten
  EXPECT_TRUE(st.holds(pa + 20000, 100));
  EXPECT_FALSE(st.matches(pb, c.data(), 100));
  EXPECT_FALSE(st.holds(pc + 19990, 20));  // not yet appended
}

TEST(ReLimits, CreateRejectsOutOfRange) {
  EXPECT_FALSE(FingerprintTable::create(2));
  EXPECT_FALSE(PacketStore::create(1000));
}

}  // namespace
}  // namespace fulcrum::re
