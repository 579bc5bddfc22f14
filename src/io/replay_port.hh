// ReplayPort: a capture file preloaded into memory and replayed from there, a port like any
// other (--port replay:KEYS); FastClick's Replay/ReplayUnqueue for Fulcrum. The file is read
// once, when the port opens; receiving then costs a buffer from the port's pool and a copy of
// the frame from memory (whole 64-byte lines), where net_pcap's `infinite_rx=1` pays a ring
// dequeue and enqueue and a copy out of a scattered stored mbuf per packet.
//
// Keys (comma-separated KEY=VALUE):
//   file=PATH   the capture (pcap or pcapng, Ethernet link type): required. Every record is a
//               frame of its captured bytes (a record cut short by the capture's snap length is
//               replayed as cut); frames of more than kMaxFrame bytes are refused
//   loops=0     times the capture is replayed, after which the input is done (the run ends as
//               when a pcap input is drained); 0: without end
//
// Packets: every received packet is a fresh buffer holding its own copy of the frame, so
// elements may write to it (headers, payload, length): the stored capture never changes. The
// copy is what a packet costs beyond the pool (one cache line at 64 B); no buffer is shared
// between packets, so there is no reference count to pay and no copy-on-write to get wrong.
// Annotations: in_port, flow_hash (the frame's header hash, core/flow_hash.hh; as a NIC's RSS
// hash), nothing else. Timestamps in the capture are not honoured: frames leave as fast as the
// worker takes them.
//
// Queues (one per worker): each flow's frames go to one queue, in capture order (the header
// hash modulo the queues, as RSS spreads them), and each queue replays its share; a queue whose
// share is empty receives nothing. Frames transmitted to the port are discarded (counted as
// transmitted).
#pragma once

#include <rte_mempool.h>

#include <vector>

#include "io/port.hh"
#include "lib/table_memory.hh"

namespace fulcrum {

struct ReplayConfig {
  std::string file;
  uint64_t loops = 0;  // 0: without end
};

Result<ReplayConfig> parse_replay_spec(const std::string& spec);

// A capture read into memory: frames end to end, each starting on a 64-byte line and padded to
// a whole line with zeros.
struct ReplayCapture {
  struct Frame {
    uint64_t offset;  // in bytes
    uint32_t len;
    uint32_t hash;  // frame_flow_hash
  };
  std::unique_ptr<TableMemory> memory;
  std::vector<Frame> frames;
  uint32_t max_len = 0;
};

// Reads `path`; errors read "cannot read capture PATH: reason" (record numbers count from 1).
Result<ReplayCapture> load_replay_capture(const std::string& path);

class ReplayPort final : public Port {
 public:
  static constexpr uint32_t kLine = 64;
  static constexpr uint32_t kMaxFrame = 9216;  // jumbo frames

  static Result<std::unique_ptr<Port>> open(const std::string& spec, const PortConfig& config);
  // check_port_spec: the keys parse and the capture reads.
  static Status check(const std::string& spec);
  ~ReplayPort() override;

  const std::string& spec() const override { return spec_; }
  uint16_t rx_queues() const override { return static_cast<uint16_t>(queues_.size()); }
  uint16_t tx_queues() const override { return static_cast<uint16_t>(queues_.size()); }
  uint16_t rx_burst(uint16_t queue, Packet** pkts, uint16_t n) override;
  uint16_t tx_burst(uint16_t queue, Packet** pkts, uint16_t n) override;
  bool finite_input() const override { return cfg_.loops > 0; }
  bool input_done(uint64_t received) const override {
    return cfg_.loops > 0 && received >= cfg_.loops * capture_.frames.size();
  }
  // Frames in the capture.
  size_t frames() const { return capture_.frames.size(); }

 private:
  struct alignas(64) Queue {
    rte_mempool* pool = nullptr;
    std::vector<ReplayCapture::Frame> frames;  // this queue's share, in capture order
    size_t pos = 0;
    uint64_t left = 0;  // packets still to send with loops=N
  };

  std::string spec_;
  ReplayConfig cfg_;
  uint16_t port_index_ = 0;
  bool prefetch_fill_ = false;  // PortConfig::buffers_return_from_other_cores
  ReplayCapture capture_;
  const uint8_t* bytes_ = nullptr;
  std::vector<Queue> queues_;
};

}  // namespace fulcrum
