#include "lib/re/redundancy.hh"

#include <string>

namespace fulcrum::re {

Result<std::unique_ptr<RedundancyEliminator>> RedundancyEliminator::create(
    const RedundancyConfig& cfg, const char* name) {
  if (!cfg.chunks.valid())
    return make_error("chunk size " + std::to_string(cfg.chunks.size) +
                      " not allowed (fixed: " + std::to_string(ChunkParams::kMinFixed) + ".." +
                      std::to_string(ChunkParams::kMaxFixed) + "; content: a power of two " +
                      std::to_string(ChunkParams::kMinContent) + ".." +
                      std::to_string(ChunkParams::kMaxContent) + ")");
  std::unique_ptr<RedundancyEliminator> r(new RedundancyEliminator());
  r->cfg_ = cfg;
  const std::string base(name);
  auto table = FingerprintTable::create(cfg.table_capacity, (base + "_fingerprints").c_str());
  if (!table) return make_error(table.error());
  auto store = PacketStore::create(cfg.store_bytes, (base + "_store").c_str());
  if (!store) return make_error(store.error());
  r->table_ = std::move(table.value());
  r->store_ = std::move(store.value());
  const uint32_t room = kFlushChunks + cfg.chunks.max_chunks(kMaxPayload);
  r->chunks_.resize(room);
  r->ranges_.resize(room);
  r->digests_.resize(room);
  return r;
}

void RedundancyEliminator::process(std::span<const ByteRange> in, std::span<uint32_t> out) {
  const ByteRange* payloads = in.data();
  uint32_t* redundant = out.data();
  const uint32_t n = static_cast<uint32_t>(in.size());
  per_payload_.resize(n);
  uint32_t first = 0, nchunks = 0;
  for (uint32_t i = 0; i < n; ++i) {
    if (nchunks > kFlushChunks) {
      resolve(payloads + first, i - first, nchunks, redundant + first);
      first = i;
      nchunks = 0;
    }
    const uint32_t k =
        chunk_payload(payloads[i].data, payloads[i].len, cfg_.chunks, chunks_.data() + nchunks);
    for (uint32_t c = 0; c < k; ++c)
      ranges_[nchunks + c] = {payloads[i].data + chunks_[nchunks + c].offset,
                              chunks_[nchunks + c].len};
    per_payload_[i - first] = k;
    nchunks += k;
  }
  resolve(payloads + first, n - first, nchunks, redundant + first);
}

void RedundancyEliminator::resolve(const ByteRange* payloads, uint32_t n, uint32_t nchunks,
                                   uint32_t* redundant) {
  md5_bulk(ranges_.data(), digests_.data(), nchunks);
  for (uint32_t c = 0; c < nchunks && c < kPrefetchAhead; ++c)
    table_->prefetch(digests_[c].low64());
  uint32_t c = 0;
  for (uint32_t i = 0; i < n; ++i) {
    const uint64_t pos = store_->append(payloads[i].data, payloads[i].len);
    counts_.payload_bytes += payloads[i].len;
    uint32_t saved = 0;
    for (const uint32_t end = c + per_payload_[i]; c < end; ++c) {
      if (c + kPrefetchAhead < nchunks) table_->prefetch(digests_[c + kPrefetchAhead].low64());
      const uint64_t key = digests_[c].low64();
      const Chunk& ch = chunks_[c];
      const uint64_t ref = table_->lookup(key);
      if (ref != 0) {
        if (FingerprintTable::ref_len(ref) == ch.len &&
            store_->matches(FingerprintTable::ref_pos(ref), ranges_[c].data, ch.len)) {
          saved += ch.len;
          ++counts_.redundant_chunks;
        } else {
          ++counts_.unverified_hits;
        }
      }
      counts_.evictions += table_->insert(key, FingerprintTable::make_ref(pos + ch.offset, ch.len));
      ++counts_.chunks;
      counts_.chunk_bytes += ch.len;
    }
    counts_.redundant_bytes += saved;
    redundant[i] = saved;
  }
}

}  // namespace fulcrum::re
