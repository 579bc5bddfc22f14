// RedundancyElim — counts and marks the payload bytes of IPv4 packets seen recently.
//
// Redundancy elimination analysis (paper 001, §3.2; packet caches, SIGCOMM'08): MD5
// fingerprints of payload chunks, a fingerprint table and a packet store.
//
// Ports:     input 0: Ethernet frames. output 0: IPv4 frames, unchanged.
//            Drops: not-ipv4 (EtherType not 0x0800 or version not 4), bad-header (IHL < 5,
//            total length below the header length, TCP data offset < 5), truncated (frame
//            under 34 bytes, total length past the frame, TCP/UDP header past the packet).
//            Payloads shorter than one chunk pass (they are counted as short_payloads).
// Uses:      nothing.  Sets: user[2]: the packet's redundant payload bytes (0 if none).
// Counters:  payload_bytes, chunks, chunk_bytes, redundant_chunks, redundant_bytes (chunks and
//            bytes found, and verified byte for byte, in the store), unverified_hits
//            (fingerprint found, bytes overwritten or different), evictions (table entries
//            replaced), short_payloads, entries (fingerprints in the table).
// Offload:   CPU: one md5_bulk per batch over all chunks (multi-buffer MD5 on AVX2, eight
//            chunks at a time; OpenSSL MD5 elsewhere; src/lib/re/md5.hh). Datablocks: in, the
//            chunk ranges (offset, length) of the batch's payloads; out, a 16-byte digest per
//            chunk (a side array). Table and store updates stay on the CPU, in packet order.
//
// The table and store are per worker replica (shared nothing): with RSS, a flow's packets, and
// most of the content it repeats, meet on one worker. The payload is located as MD5Digest does
// (src/lib/re/payload.hh); the exact semantics are in src/lib/re/redundancy.hh.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/location.hh"
#include "core/registry.hh"
#include "elements/hash/md5_digest.hh"
#include "lib/re/payload.hh"
#include "lib/re/redundancy.hh"

namespace fulcrum {

class RedundancyElim final : public ElementBase<RedundancyElim> {
 public:
  // The first reasons of MD5Digest's table, in its order: drops come from its drop_reason().
  static constexpr DropReasons kDropReasons{"not-ipv4", "bad-header", "truncated"};
  static constexpr ElementTraits kTraits{.class_name = "RedundancyElim",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = kDropReasons,
                                         .anno = kAnnoWrites};
  static constexpr uint32_t kRedundantSlot = 2;  // user[2]

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

  void process_batch(PacketBatch& batch) override {
    alignas(64) re::ByteRange in[kMaxBatch];
    alignas(64) uint32_t redundant[kMaxBatch];
    uint16_t slot[kMaxBatch];
    uint32_t n = 0;
    Verdict* results = batch.results();
    batch.for_each([&](uint32_t i, Packet* p) {
      re::Payload pl;
      const re::PayloadError e = re::find_payload(data(p), length(p), pl);
      if (e != re::PayloadError::kOk) [[unlikely]] {
        results[i] = Verdict::drop(MD5Digest::drop_reason(e));
        return;
      }
      short_payloads_ += pl.len < min_chunk_;
      in[n] = {data(p) + pl.offset, pl.len};
      slot[n++] = static_cast<uint16_t>(i);
    });
    re_->process({in, n}, {redundant, n});
    for (uint32_t k = 0; k < n; ++k) anno(batch.at(slot[k])).user[kRedundantSlot] = redundant[k];
  }

  const re::RedundancyEliminator& eliminator() const { return *re_; }

 private:
  re::RedundancyConfig cfg_;
  uint32_t min_chunk_ = 0;
  uint64_t short_payloads_ = 0;
  std::unique_ptr<re::RedundancyEliminator> re_;
  SourceLoc loc_;
};

static_assert(RedundancyElim::kDropReasons["not-ipv4"] == MD5Digest::kDropReasons["not-ipv4"] &&
              RedundancyElim::kDropReasons["bad-header"] == MD5Digest::kDropReasons["bad-header"] &&
              RedundancyElim::kDropReasons["truncated"] == MD5Digest::kDropReasons["truncated"]);

FULCRUM_REGISTER_ELEMENT(RedundancyElim);

}  // namespace fulcrum
