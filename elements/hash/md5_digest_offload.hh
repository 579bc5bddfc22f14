// MD5DigestOffload — MD5Digest that hashes on a device (CUDA or OpenCL) when its batch is
// offloaded.
//
// Ports:     as MD5Digest: input 0: Ethernet frames. output 0: IPv4 frames, unchanged unless
//            TRAILER. Drops: not-ipv4, bad-header, truncated, no-room (as MD5Digest).
// Config:    TRAILER    bool     false   append the digest to the frame, as MD5Digest.
//            AGGREGATE  integer  32      batches gathered into one device task (1..256).
//            FLUSH_US   integer  100     a task not full this long after it opened goes anyway.
//            AFFINITY   bool     false   keep each flow on one processor (no reordering).
//            TASK_TIMEOUT_MS  integer  1000  a task not back this long after it went to the
//                                            device: device marked down, packets re-run on the CPU.
//            TASK_BYTES, CHAIN, FUSE     as every whole-packet offload element
//                                        (src/offload/offload_element.hh).
// Uses:      the batch's device decision (set by CPUOnly, DeviceOnly, FixedFraction).
//            Sets: user[0], user[1]: the 16-byte digest (as MD5Digest).
// Counters:  bytes (payload bytes hashed, on the CPU and on devices), cpu_batches,
//            device_batches, device_packets, tasks, tasks_failed (re-run on the CPU),
//            no_device_batches, affinity_packets, waits, tasks_timed_out.
// Offload:   kernel md5_digest (kernels/opencl/md5_digest.cl, kernels/cuda/md5_digest.cu, RFC
//            1321, one work item per packet). Datablocks: whole packet, read only: the L4
//            payload (src/lib/re/payload.hh, at most 2048 bytes; longer payloads and malformed
//            frames stay on the CPU); write: the 16-byte digest per packet, stored (and appended
//            with TRAILER) as MD5Digest does. CPU function: MD5Digest (OpenSSL MD5).
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

#include "elements/hash/md5_digest.hh"
#include "offload/offload_element.hh"

namespace fulcrum {

class MD5DigestOffload final : public OffloadElement<MD5DigestOffload> {
 public:
  static constexpr ElementTraits kTraits{"MD5DigestOffload", 1, 1, MD5Digest::kDropReasons};
  static constexpr std::string_view kKernel = "md5_digest";
  static constexpr offload::WholePacketBlock kWholePacket{
      .write = false, .align = 16, .max_bytes = 2048};
  static constexpr uint32_t kInputBytes = 0;
  static constexpr uint32_t kOutputBytes = re::kMd5Len;

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

  void process_cpu(PacketBatch& batch) { cpu_.process_batch(batch); }

  bool gather(Packet* p, uint8_t*, offload::Region& region) {
    re::Payload pl;
    if (re::find_payload(data(p), length(p), pl) != re::PayloadError::kOk) return false;
    region = {pl.offset, pl.len};
    return true;
  }

  Verdict apply(Packet* p, const uint8_t* result) {
    re::Payload pl;
    if (re::find_payload(data(p), length(p), pl) == re::PayloadError::kOk) device_bytes_ += pl.len;
    if (!MD5Digest::store(p, result, cpu_.trailer())) [[unlikely]]
      return Verdict::drop(MD5Digest::kDropNoRoom);
    return Verdict::out(0);
  }

  Result<std::vector<offload::TaskArg>> device_args(const InitContext&, size_t device) {
    // Built now rather than by the first task, which would otherwise wait for the compiler.
    if (auto k = service().device(device).kernel(kKernel); !k) return make_error(k.error());
    return std::vector<offload::TaskArg>{offload::TaskArg::input(offload::kBytesInput),
                                         offload::TaskArg::input(offload::kRegionsInput),
                                         offload::TaskArg::output(offload::kResultsOutput),
                                         offload::TaskArg::items()};
  }

 private:
  MD5Digest cpu_;
  uint64_t device_bytes_ = 0;
};

}  // namespace fulcrum
