#include "elements/hash/redundancy_elim.hh"

namespace fulcrum {

Status RedundancyElim::configure(Args& args) {
  loc_ = args.loc();
  std::string mode = "fixed";
  uint32_t chunk = cfg_.chunks.size;
  int64_t capacity = static_cast<int64_t>(cfg_.table_capacity);
  int64_t store = static_cast<int64_t>(cfg_.store_bytes);
  if (Status s = args.key("CHUNK", chunk,
                          "chunk size in bytes: fixed mode 8..4096; content mode a power of two "
                          "32..1024 (chunks of CHUNK/2 to 4*CHUNK bytes, boundaries from a "
                          "rolling hash)")
                     .key("MODE", mode, "fixed or content (src/lib/re/chunker.hh)")
                     .key("CAPACITY", capacity,
                          "fingerprint table entries (rounded up to a power of two; FIFO "
                          "replacement within a 4-entry bucket)")
                     .key("STORE", store,
                          "packet store bytes (rounded up to a power of two, at least 131072): "
                          "how far back content is remembered")
                     .finish();
      !s)
    return s;
  if (mode == "fixed") {
    cfg_.chunks.mode = re::ChunkParams::Mode::kFixed;
  } else if (mode == "content") {
    cfg_.chunks.mode = re::ChunkParams::Mode::kContent;
  } else {
    return args.error("MODE: expected fixed or content, got \"" + mode + "\"");
  }
  cfg_.chunks.size = chunk;
  if (!cfg_.chunks.valid())
    return args.error("CHUNK: " + std::to_string(chunk) +
                      (mode == "fixed" ? " not in 8..4096" : " not a power of two in 32..1024"));
  if (capacity < static_cast<int64_t>(re::FingerprintTable::kMinCapacity) ||
      capacity > static_cast<int64_t>(re::FingerprintTable::kMaxCapacity))
    return args.error("CAPACITY: expected " + std::to_string(re::FingerprintTable::kMinCapacity) +
                      ".." + std::to_string(re::FingerprintTable::kMaxCapacity) + ", got " +
                      std::to_string(capacity));
  if (store < static_cast<int64_t>(re::PacketStore::kMinSize) ||
      store > static_cast<int64_t>(re::PacketStore::kMaxSize))
    return args.error("STORE: expected " + std::to_string(re::PacketStore::kMinSize) + ".." +
                      std::to_string(re::PacketStore::kMaxSize) + ", got " + std::to_string(store));
  cfg_.table_capacity = static_cast<size_t>(capacity);
  cfg_.store_bytes = static_cast<size_t>(store);
  min_chunk_ = cfg_.chunks.min_len();
  return {};
}

Status RedundancyElim::initialize(const InitContext&) {
  const std::string base = "re:" + name();
  auto r = re::RedundancyEliminator::create(cfg_, base.c_str());
  if (!r) {
    const Args args({}, loc_, name(), kTraits.class_name);
    return args.error(r.error());
  }
  re_ = std::move(r.value());
  return {};
}

void RedundancyElim::counters(std::vector<Counter>& out) const {
  const re::RedundancyCounts c = re_ ? re_->counts() : re::RedundancyCounts{};
  out.push_back({"payload_bytes", c.payload_bytes});
  out.push_back({"chunks", c.chunks});
  out.push_back({"chunk_bytes", c.chunk_bytes});
  out.push_back({"redundant_chunks", c.redundant_chunks});
  out.push_back({"redundant_bytes", c.redundant_bytes});
  out.push_back({"unverified_hits", c.unverified_hits});
  out.push_back({"evictions", c.evictions});
  out.push_back({"short_payloads", short_payloads_});
  out.push_back({"entries", re_ ? re_->table().size() : 0});
}

}  // namespace fulcrum
