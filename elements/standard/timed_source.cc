#include "elements/standard/timed_source.hh"

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include <cstring>

namespace fulcrum {
namespace {

constexpr uint32_t kDefaultIntervalUs = 1000;
constexpr uint32_t kMinSize = 60, kMaxSize = 1514;
constexpr uint32_t kSourceAddr = RTE_IPV4(10, 255, 0, 1);
constexpr uint16_t kUdpPort = 9;  // discard
constexpr uint8_t kTtl = 64;
constexpr uint64_t kNsPerUs = 1000;

}  // namespace

Status TimedSource::configure(Args& args) {
  uint32_t interval_us = kDefaultIntervalUs;
  std::string dst = "10.0.0.1";
  int port = -1;
  int64_t limit = 0;
  args.key("INTERVAL_US", interval_us, "microseconds between bursts")
      .key("BURST", burst_, "frames per burst (1..256)")
      .key("LIMIT", limit, "stop after this many frames in all; 0: never")
      .key("SIZE", size_, "frame length in bytes (60..1514)")
      .key("DST", dst, "IPv4 destination address")
      .key("PORT", port,
           "output port annotation; -1: none (the packets need a routing element before "
           "ToOutput)");
  if (Status s = args.finish(); !s) return s;
  if (burst_ < 1 || burst_ > kMaxBatch)
    return args.error("BURST must be 1.." + std::to_string(kMaxBatch));
  if (size_ < kMinSize || size_ > kMaxSize) return args.error("SIZE must be 60..1514");
  if (limit < 0) return args.error("LIMIT must not be negative");
  if (!parse_ipv4(dst, dst_)) return args.error("DST: expected an IPv4 address, got '" + dst + "'");
  if (port >= 0) port_ = static_cast<uint16_t>(port);
  interval_ns_ = uint64_t{interval_us} * kNsPerUs;
  limit_ = static_cast<uint64_t>(limit);

  frame_.assign(size_, 0);
  auto* eth = reinterpret_cast<rte_ether_hdr*>(frame_.data());
  eth->dst_addr = rte_ether_addr{{0x02, 0, 0, 0, 0, 0x01}};
  eth->src_addr = rte_ether_addr{{0x02, 0, 0, 0, 0, 0x02}};
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(size_ - sizeof(rte_ether_hdr)));
  ip->time_to_live = kTtl;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(kSourceAddr);
  ip->dst_addr = rte_cpu_to_be_32(dst_);
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  udp->src_port = udp->dst_port = rte_cpu_to_be_16(kUdpPort);
  udp->dgram_len =
      rte_cpu_to_be_16(static_cast<uint16_t>(size_ - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr)));
  return {};
}

Status TimedSource::initialize(const InitContext& ctx) {
  pool_ = ctx.pool;
  if (pool_ == nullptr)
    return make_error(name() + " :: TimedSource: no packet pool in this runtime");
  return {};
}

void TimedSource::run_task(uint64_t now_ns, PacketBatch& out) {
  next_ns_ = now_ns + interval_ns_;
  uint64_t made = created_.load(std::memory_order_relaxed);
  uint32_t n = burst_;
  if (limit_ > 0) n = static_cast<uint32_t>(std::min<uint64_t>(n, limit_ - std::min(limit_, made)));
  for (uint32_t i = 0; i < n; ++i) {
    Packet* m = rte_pktmbuf_alloc(pool_);
    if (m == nullptr) break;
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(size_)), frame_.data(), size_);
    reset_anno(m, kNoPort);
    set_out_port(m, port_);
    set_timestamp_ns(m, now_ns);
    out.push(m);
  }
  created_.store(made + out.count(), std::memory_order_relaxed);
}

}  // namespace fulcrum
