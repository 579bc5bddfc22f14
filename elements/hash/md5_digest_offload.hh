// MD5DigestOffload — MD5Digest that hashes on a device (CUDA or OpenCL) when its batch is
// offloaded.
//
// Ports:     as MD5Digest: input 0: Ethernet frames. output 0: IPv4 frames, unchanged unless
//            TRAILER. Drops: not-ipv4, bad-header, truncated, no-room (as MD5Digest).
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: user[0], user[1]: the 16-byte digest (as MD5Digest).
// Counters:  bytes (payload bytes hashed, on the CPU and on devices), cpu_batches,
//            device_batches, device_packets, tasks, tasks_failed (re-run on the CPU),
//            no_device_batches, affinity_packets,
//            affinity_cpu_packets, waits, tasks_timed_out.
// Offload:   kernel md5_digest (kernels/md5_digest.cl, RFC 1321, one work item per packet).
//            Datablocks: whole packet: the L4 payload (src/lib/re/payload.hh, at most 2048
//            bytes; longer payloads and malformed frames stay on the CPU), read only, or with
//            TRAILER grown by 16 bytes (size delta) that the kernel fills with the digest and the
//            framework appends to the frame (frames with bytes after the payload get their trailer
//            appended after the task); read: a trailer flag (4 bytes); write: the 16-byte digest
//            per packet into user[0..1]. CPU function: MD5Digest (OpenSSL MD5).
#pragma once

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/registry.hh"
#include "elements/hash/md5_digest.hh"
#include "offload/offload_element.hh"

namespace fulcrum {

class MD5DigestOffload final : public OffloadElement<MD5DigestOffload> {
 public:
  static constexpr ElementTraits kTraits{"MD5DigestOffload", 1, 1, MD5Digest::kDropReasons};
  // Read: a trailer flag (1: write the trailer); write: the digest; region: the L4 payload.
  static constexpr auto kOffload =
      offload::OffloadSpec::with_region("md5_digest", sizeof(uint32_t), re::kMd5Len,
                                        {.write = false, .align = 16, .max_bytes = 2048});

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

  void process_cpu(PacketBatch& batch) override { cpu_.process_batch(batch); }

  // With TRAILER the kernel also writes the digest after the payload, into 16 bytes the framework
  // appends to the frame (PacketRegion::grow); a frame with bytes after its payload (Ethernet
  // padding) gets its trailer after them in apply, as MD5Digest appends it.
  bool gather(Packet* p, uint8_t* item, offload::PacketRegion& region) override {
    re::Payload pl;
    if (re::find_payload(data(p), length(p), pl) != re::PayloadError::kOk) return false;
    const uint32_t grow = cpu_.trailer() && pl.offset + pl.len == length(p) ? re::kMd5Len : 0;
    const uint32_t trailer = grow != 0 ? 1 : 0;
    std::memcpy(item, &trailer, sizeof trailer);
    region = {pl.offset, pl.len, grow};
    return true;
  }
  bool grows() const override { return cpu_.trailer(); }

  Verdict apply(Packet* p, const uint8_t* result, const offload::PacketRegion& region) override {
    device_bytes_ += region.length;
    if (!MD5Digest::store(p, result, cpu_.trailer() && region.grow == 0)) [[unlikely]]
      return Verdict::drop(MD5Digest::kDropReasons["no-room"]);
    return Verdict::out(0);
  }

  Result<std::vector<offload::TaskArg>> device_args(const InitContext&, size_t) override {
    return std::vector<offload::TaskArg>{offload::TaskArg::input(offload::kBytesInput),
                                         offload::TaskArg::input(offload::kRegionsInput),
                                         offload::TaskArg::input(offload::kItemsInput),
                                         offload::TaskArg::output(offload::kResultsOutput),
                                         offload::TaskArg::items()};
  }

 private:
  MD5Digest cpu_;
  uint64_t device_bytes_ = 0;
};

FULCRUM_REGISTER_ELEMENT(MD5DigestOffload);

}  // namespace fulcrum
