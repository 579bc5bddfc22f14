// GenPort: the built-in traffic generator, a port like any other (--port gen:KEYS).
//
// Keys (comma-separated KEY=VALUE):
//   proto=ipv4       ipv4: Ethernet + IPv4 + UDP frames; ipv6: Ethernet + IPv6 + UDP frames
//                    (hop limit 64, UDP checksum 0, payload length filling the frame)
//   size=64          frame length in bytes as placed in the mbuf (60..1514; 62..1514 for
//                    proto=ipv6, whose Ethernet + IPv6 + UDP headers take 62 bytes)
//   flows=1024       distinct 5-tuples (UDP, source 10.x.y.z or fd00::x, ports from the flow
//                    index), sent round-robin (uniform, routes) or zipf-distributed (zipf)
//   dst=uniform      destination addresses: uniform (random per flow; for ipv6 a random /64 in
//                    2000::/3 and a random interface identifier), routes (inside the prefixes of
//                    routes=FILE, chosen uniformly over routes), zipf (random per flow, flow
//                    popularity zipf-distributed with exponent zipf=S, default 1.0)
//   routes=FILE      route table for dst=routes (the IPLookup format; the IP6Lookup format,
//                    "X:X::/LEN PORT", with proto=ipv6)
//   rate=0           packets per second over all queues; 0 = as fast as possible
//   step_after=0     a step change of the traffic (balancer experiments): after this many seconds
//                    from the first packet (per queue), step_rate and step_size apply;
//                    step_after=0 means no step
//   step_rate=       the rate after the step (0: as fast as possible); not given: rate, unchanged
//   step_size=       the frame length after the step (as size); not given: size, unchanged
//   count=0          packets to send in all, then none (the run goes on until --seconds, --packets
//                    or a signal: a still pipeline whose counters can be read live); 0 = no end
//   seed=1           random seed
// Received frames are produced from per-flow header templates: the RX copies the template's 64
// bytes (the headers and the payload's start) and writes the rest of the payload as zeros, so
// every byte of a frame is written, as a NIC's RX and a replay: capture do (a payload a pipeline
// wrote into, an IPsec gateway's ciphertext say, never comes back in later frames; and a later
// stage of a pipelined run finds the payload in the generating core's cache, not in memory).
// Frames transmitted to the generator are discarded (counted as transmitted).
#pragma once

#include <rte_mempool.h>

#include <vector>

#include "io/port.hh"
#include "lib/table_memory.hh"

namespace fulcrum {

struct GenConfig {
  enum class Proto { kIpv4, kIpv6 } proto = Proto::kIpv4;
  uint32_t size = 64;
  uint32_t flows = 1024;
  enum class Dst { kUniform, kRoutes, kZipf } dst = Dst::kUniform;
  std::string routes;
  double step_after = 0;
  static constexpr double kSameRate = -1;
  double step_rate = kSameRate;  // kSameRate: rate, unchanged
  uint32_t step_size = 0;        // 0: size, unchanged
  uint64_t count = 0;
  double zipf = 1.0;
  double rate = 0;
  uint64_t seed = 1;
};

Result<GenConfig> parse_gen_spec(const std::string& spec);

class GenPort final : public Port {
 public:
  static Result<std::unique_ptr<Port>> open(const std::string& spec, const PortConfig& config);
  ~GenPort() override;

  const std::string& spec() const override { return spec_; }
  uint16_t rx_queues() const override { return static_cast<uint16_t>(queues_.size()); }
  uint16_t tx_queues() const override { return static_cast<uint16_t>(queues_.size()); }
  uint16_t rx_burst(uint16_t queue, Packet** pkts, uint16_t n) override;
  uint16_t tx_burst(uint16_t queue, Packet** pkts, uint16_t n) override;

  static constexpr uint32_t kTemplateBytes = 64;
  static constexpr uint32_t kHeaderBytes = 42;      // Ethernet + IPv4 + UDP
  static constexpr uint32_t kIpv6HeaderBytes = 62;  // Ethernet + IPv6 + UDP
  static_assert(kIpv6HeaderBytes <= kTemplateBytes);

 private:
  struct alignas(64) Queue {
    rte_mempool* pool = nullptr;
    uint32_t pos = 0;
    double tokens = 0;
    uint64_t last_tsc = 0;
    uint64_t step_tsc = 0;  // when the step happens (set at the first burst); 0 no step
    uint64_t left = 0;      // of count=N, this queue's share still to send
  };
  // Whether queue q is past the step at `now` (its clock starts at its first burst).
  bool stepped(Queue& q, uint64_t now);

  std::string spec_;
  GenConfig cfg_;
  uint16_t port_index_ = 0;
  bool prefetch_fill_ = false;  // PortConfig::buffers_return_from_other_cores
  std::unique_ptr<TableMemory> template_mem_;
  uint8_t* templates_ = nullptr;       // flows x kTemplateBytes
  uint8_t* step_templates_ = nullptr;  // the same at step_size; nullptr without a size step
  std::vector<uint32_t> flow_hash_;    // per flow
  std::vector<uint32_t> sequence_;     // flow index per packet slot (power-of-two length)
  uint32_t sequence_mask_ = 0;
  double tsc_hz_ = 0;
  std::vector<Queue> queues_;
};

}  // namespace fulcrum
