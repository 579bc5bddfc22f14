// RedundancyEliminator: the analysis half of a redundancy-elimination middlebox (thesis §3.2;
// packet caches, Anand et al. SIGCOMM'08): payloads are cut into chunks (chunker.hh), every
// chunk is fingerprinted with MD5 (md5.hh), and the fingerprint table (fingerprint_table.hh)
// says whether the same content was seen recently; a hit counts as redundant only when the
// bytes in the packet store (packet_store.hh) equal the chunk, so fingerprint collisions and
// overwritten store bytes never count.
//
// Semantics (what a model of it must reproduce), payload by payload in order: the payload is
// appended to the store in full; then chunk by chunk, in order, the chunk is redundant when the
// table holds its fingerprint and the referenced bytes are still in the store and equal it;
// either way the fingerprint is then (re)inserted pointing at this copy. Chunks repeated inside
// one payload therefore count too.
//
// process() takes a batch of payloads. The MD5s of all their chunks are computed in one
// md5_bulk (the offloadable part: datablocks are the chunk ranges in and the digest array out),
// then the table and store are consulted in payload order, with the buckets of the next chunks
// prefetched. Batches with more chunks than kFlushChunks are done in several such rounds.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/result.hh"
#include "lib/re/chunker.hh"
#include "lib/re/fingerprint_table.hh"
#include "lib/re/md5.hh"
#include "lib/re/packet_store.hh"

namespace fulcrum::re {

struct RedundancyConfig {
  ChunkParams chunks;
  size_t table_capacity = size_t{1} << 20;
  size_t store_bytes = size_t{1} << 26;
};

struct RedundancyCounts {
  uint64_t payload_bytes = 0;     // bytes of every payload processed
  uint64_t chunks = 0;            // chunks fingerprinted
  uint64_t chunk_bytes = 0;       // bytes in those chunks
  uint64_t redundant_chunks = 0;  // chunks found, verified, in the store
  uint64_t redundant_bytes = 0;   // bytes in those chunks
  uint64_t unverified_hits = 0;   // fingerprint found but bytes overwritten or different
  uint64_t evictions = 0;         // table entries replaced by another fingerprint
};

class RedundancyEliminator {
 public:
  static constexpr uint32_t kFlushChunks = 8192;
  static constexpr uint32_t kMaxPayload = 0xFFFF;
  static constexpr uint32_t kPrefetchAhead = 8;

  static Result<std::unique_ptr<RedundancyEliminator>> create(const RedundancyConfig& cfg,
                                                              const char* name = "re");

  // Processes the payloads (each at most kMaxPayload bytes) in order; redundant[i] (as many as
  // payloads) receives the redundant bytes of payload i.
  void process(std::span<const ByteRange> payloads, std::span<uint32_t> redundant);

  const RedundancyCounts& counts() const { return counts_; }
  const FingerprintTable& table() const { return *table_; }
  const PacketStore& store() const { return *store_; }

 private:
  RedundancyEliminator() = default;
  // Hashes and resolves the chunks of payloads[0..n), whose chunks are in chunks_[0..nchunks).
  void resolve(const ByteRange* payloads, uint32_t n, uint32_t nchunks, uint32_t* redundant);

  RedundancyConfig cfg_;
  std::unique_ptr<FingerprintTable> table_;
  std::unique_ptr<PacketStore> store_;
  std::vector<Chunk> chunks_;
  std::vector<uint32_t> per_payload_;  // chunk count of each payload of the round
  std::vector<ByteRange> ranges_;
  std::vector<Md5Digest> digests_;
  RedundancyCounts counts_;
};

}  // namespace fulcrum::re
