// RedundancyEliminator against an independent model of its documented semantics: a map from
// chunk content to the stream position of its latest copy, and a store window of STORE bytes.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "lib/re/redundancy.hh"

namespace fulcrum::re {
namespace {

using Bytes = std::vector<uint8_t>;

// Payloads drawn from a small set of blocks, so that content repeats across and inside them.
std::vector<Bytes> make_payloads(uint32_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<Bytes> blocks(24);
  for (auto& b : blocks) {
    b.resize(32 + rng() % 200);
    for (auto& x : b) x = static_cast<uint8_t>(rng() % 4 == 0 ? rng() : 0x20 + rng() % 8);
  }
  std::vector<Bytes> out;
  for (uint32_t i = 0; i < count; ++i) {
    Bytes p;
    const uint32_t parts = rng() % 9;
    for (uint32_t k = 0; k < parts; ++k) {
      const Bytes& b = blocks[rng() % blocks.size()];
      p.insert(p.end(), b.begin(), b.end());
    }
    if (rng() % 3 == 0) p.push_back(static_cast<uint8_t>(rng()));
    out.push_back(std::move(p));
  }
  return out;
}

struct Model {
  explicit Model(uint64_t store_bytes) : store(store_bytes) {}
  uint64_t store;
  uint64_t head = 0;
  std::map<std::string, uint64_t> latest;
  uint64_t chunks = 0, redundant_chunks = 0, redundant_bytes = 0;

  uint32_t payload(const Bytes& p, const std::vector<Chunk>& cs) {
    const uint64_t base = head;
    head += p.size();
    uint32_t saved = 0;
    for (const Chunk& c : cs) {
      const std::string s(p.begin() + c.offset, p.begin() + c.offset + c.len);
      auto it = latest.find(s);
      if (it != latest.end() && head - it->second <= store) {
        saved += c.len;
        ++redundant_chunks;
      }
      latest[s] = base + c.offset;
      ++chunks;
    }
    redundant_bytes += saved;
    return saved;
  }
};

// Fixed chunks computed here; content-defined ones through chunk_payload (checked against a
// direct evaluation in re_chunker_test).
std::vector<Chunk> chunks_of(const Bytes& p, const ChunkParams& cp) {
  std::vector<Chunk> out;
  if (cp.mode == ChunkParams::Mode::kFixed) {
    for (uint32_t off = 0; off + cp.size <= p.size(); off += cp.size) out.push_back({off, cp.size});
    return out;
  }
  out.resize(cp.max_chunks(static_cast<uint32_t>(p.size())) + 1);
  out.resize(chunk_payload(p.data(), static_cast<uint32_t>(p.size()), cp, out.data()));
  return out;
}

void check_against_model(const ChunkParams& cp, size_t store, uint32_t batch, uint32_t seed) {
  RedundancyConfig cfg;
  cfg.chunks = cp;
  cfg.table_capacity = size_t{1} << 20;  // no evictions: the model has none
  cfg.store_bytes = store;
  auto r = RedundancyEliminator::create(cfg);
  ASSERT_TRUE(r) << r.error();
  RedundancyEliminator& re = **r;
  Model m{store};
  const std::vector<Bytes> payloads = make_payloads(3000, seed);
  for (size_t first = 0; first < payloads.size(); first += batch) {
    std::vector<ByteRange> in;
    std::vector<uint32_t> want;
    for (size_t i = first; i < std::min(payloads.size(), first + batch); ++i) {
      in.push_back({payloads[i].data(), static_cast<uint32_t>(payloads[i].size())});
      want.push_back(m.payload(payloads[i], chunks_of(payloads[i], cp)));
    }
    std::vector<uint32_t> got(in.size());
    re.process(in, got);
    for (size_t k = 0; k < in.size(); ++k) ASSERT_EQ(got[k], want[k]) << "payload " << first + k;
  }
  EXPECT_EQ(re.counts().chunks, m.chunks);
  EXPECT_EQ(re.counts().redundant_chunks, m.redundant_chunks);
  EXPECT_EQ(re.counts().redundant_bytes, m.redundant_bytes);
  EXPECT_EQ(re.counts().evictions, 0u);
  EXPECT_GT(m.redundant_chunks, 0u);
  EXPECT_LT(m.redundant_chunks, m.chunks);
}

TEST(ReEliminator, FixedChunksMatchModel) {
  check_against_model({ChunkParams::Mode::kFixed, 64}, size_t{1} << 24, 64, 1);
}

TEST(ReEliminator, FixedChunksWithSmallStoreMatchModel) {
  // 128 KiB of store holds a few hundred payloads: older content is forgotten.
  check_against_model({ChunkParams::Mode::kFixed, 32}, PacketStore::kMinSize, 200, 2);
}

TEST(ReEliminator, ContentChunksMatchModel) {
  check_against_model({ChunkParams::Mode::kContent, 64}, PacketStore::kMinSize, 256, 3);
}

TEST(ReEliminator, ManyChunksPerBatchAreDoneInRounds) {
  // 8-byte chunks: about 65 per payload, more than kFlushChunks in a batch of 256.
  check_against_model({ChunkParams::Mode::kFixed, 8}, size_t{1} << 24, 256, 4);
}

TEST(ReEliminator, SmallTableEvictsButNeverMiscounts) {
  RedundancyConfig cfg;
  cfg.chunks = {ChunkParams::Mode::kFixed, 16};
  cfg.table_capacity = 16;
  auto r = RedundancyEliminator::create(cfg);
  ASSERT_TRUE(r);
  const std::vector<Bytes> payloads = make_payloads(500, 5);
  Model m{cfg.store_bytes};
  for (const Bytes& p : payloads) {
    const ByteRange in{p.data(), static_cast<uint32_t>(p.size())};
    uint32_t got = 0;
    (*r)->process({&in, 1}, {&got, 1});
    // Forgetting fingerprints can only lose redundancy, never invent it.
    EXPECT_LE(got, m.payload(p, chunks_of(p, cfg.chunks)));
  }
  EXPECT_GT((*r)->counts().evictions, 0u);
  EXPECT_LE((*r)->table().size(), 16u);
}

TEST(ReEliminator, RejectsBadChunkSize) {
  RedundancyConfig cfg;
  cfg.chunks = {ChunkParams::Mode::kContent, 100};
  EXPECT_FALSE(RedundancyEliminator::create(cfg));
}

}  // namespace
}  // namespace fulcrum::re
