// MD5Digest — writes the MD5 of every IPv4 packet's L4 payload into its annotations.
//
// The thesis's packet hashing application (paper 001, §3.2).
//
// Ports:     input 0: Ethernet frames. output 0: IPv4 frames, unchanged unless TRAILER.
//            Drops: not-ipv4 (EtherType not 0x0800 or version not 4), bad-header (IHL < 5,
//            total length below the header length, TCP data offset < 5), truncated (frame
//            under 34 bytes, total length past the frame, TCP/UDP header past the packet),
//            no-room (TRAILER only: fewer than 16 bytes of tailroom in the mbuf).
// Uses:      nothing.  Sets: user[0], user[1]: the 16-byte digest (bytes 0..7 and 8..15, in
//            memory order).
// Counters:  bytes (payload bytes hashed).
// Offload:   CPU: one md5_bulk per batch over the payloads (multi-buffer MD5 on AVX2, eight
//            payloads at a time; OpenSSL MD5 elsewhere; src/lib/re/md5.hh).
//            Datablocks: in, the payload range (offset, length) of each packet; out, a 16-byte
//            digest per packet into user[0..1].
//
// The payload is what follows the TCP or UDP header, or the IPv4 header for other protocols and
// non-first fragments, up to the IPv4 total length (src/lib/re/payload.hh); an empty payload
// gets the MD5 of the empty string.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "lib/re/md5.hh"
#include "lib/re/payload.hh"

namespace fulcrum {

class MD5Digest final : public ElementBase<MD5Digest> {
 public:
  static constexpr DropReasons kDropReasons{"not-ipv4", "bad-header", "truncated", "no-room"};
  static constexpr ElementTraits kTraits{.class_name = "MD5Digest",
                                         .inputs = 1,
                                         .outputs = 1,
                                         .drop_reasons = kDropReasons,
                                         .anno = kAnnoWrites};
  static constexpr uint32_t kDigestSlot = 0;  // user[0], user[1]

  Status configure(Args& args) override {
    return args
        .key("TRAILER", trailer_,
             "also append the 16 digest bytes to the frame, after any Ethernet padding (the IP "
             "header is not changed), so that a capture can be checked against another MD5")
        .finish();
  }
  void counters(std::vector<Counter>& out) const override { out.push_back({"bytes", bytes_}); }

  void process_batch(PacketBatch& batch) override {
    alignas(64) re::ByteRange in[kMaxBatch];
    alignas(64) re::Md5Digest out[kMaxBatch];
    uint16_t slot[kMaxBatch];
    uint32_t n = 0;
    Verdict* results = batch.results();
    batch.for_each([&](uint32_t i, Packet* p) {
      re::Payload pl;
      const re::PayloadError e = re::find_payload(data(p), length(p), pl);
      if (e != re::PayloadError::kOk) [[unlikely]] {
        results[i] = Verdict::drop(drop_reason(e));
        return;
      }
      in[n] = {data(p) + pl.offset, pl.len};
      bytes_ += pl.len;
      slot[n++] = static_cast<uint16_t>(i);
    });
    re::md5_bulk(in, out, n);
    for (uint32_t k = 0; k < n; ++k)
      if (!store(batch.at(slot[k]), out[k].b, trailer_)) [[unlikely]]
        results[slot[k]] = Verdict::drop(kDropReasons["no-room"]);
  }

  // The digest into user[0..1] and, with `trailer`, appended to the frame; false: no room.
  static bool store(Packet* p, const uint8_t* digest, bool trailer) {
    std::memcpy(&anno(p).user[kDigestSlot], digest, re::kMd5Len);
    if (!trailer) return true;
    char* t = rte_pktmbuf_append(p, re::kMd5Len);
    if (t == nullptr) return false;
    std::memcpy(t, digest, re::kMd5Len);
    return true;
  }
  bool trailer() const { return trailer_; }

  static int drop_reason(re::PayloadError e) {
    switch (e) {
      case re::PayloadError::kNotIpv4:
        return kDropReasons["not-ipv4"];
      case re::PayloadError::kBadHeader:
        return kDropReasons["bad-header"];
      default:
        return kDropReasons["truncated"];
    }
  }

 private:
  bool trailer_ = false;
  uint64_t bytes_ = 0;
};

FULCRUM_REGISTER_ELEMENT(MD5Digest);

}  // namespace fulcrum
