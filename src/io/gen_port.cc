#include "io/gen_port.hh"

#include <rte_byteorder.h>
#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_memcpy.h>
#include <rte_prefetch.h>
#include <rte_udp.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <random>

#include "core/suggest.hh"
#include "io/mempool.hh"
#include "io/spec_keys.hh"
#include "lib/route6_table.hh"
#include "lib/route_table.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMinFrame = 60;
constexpr uint32_t kMinFrame6 = GenPort::kIpv6HeaderBytes;
constexpr uint32_t kMaxFrame = 1514;
constexpr uint32_t kMinSequence = 1 << 16;
constexpr unsigned kPoolPerQueue = 16383;
constexpr uint32_t kSourceNet = 0x0A000000;  // 10.0.0.0/8
constexpr uint16_t kBasePort = 1024;
constexpr uint8_t kDefaultTtl = 64;
constexpr rte_ether_addr kSrcMac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x02}};
constexpr rte_ether_addr kDstMac{{0x02, 0x00, 0x00, 0x00, 0x00, 0x01}};
constexpr uint64_t kSourceNet6 = 0xFD00000000000000ull;  // fd00::/64, flow index below
constexpr uint64_t kGlobalUnicast6 = uint64_t{1} << 61;  // 2000::/3
constexpr int kUnicast6Shift = 3;                        // bits of the /3
constexpr uint32_t kIpv6VersionWord = 0x60000000;        // version 6, class 0, flow label 0
constexpr uint32_t kFlowPortMask = 0x7FFF;
constexpr int kFlowPortShift = 15;
constexpr double kBucketSeconds = 0.01;  // the rate limiter's bucket, in seconds of traffic

// Ethernet + IPv6 + UDP headers for flow f to `dst` (network order) into template t.
void write_ipv6_template(uint8_t* t, uint32_t size, uint32_t f, const uint8_t* dst) {
  auto* eth = reinterpret_cast<rte_ether_hdr*>(t);
  eth->dst_addr = kDstMac;
  eth->src_addr = kSrcMac;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
  auto* ip = reinterpret_cast<rte_ipv6_hdr*>(eth + 1);
  const uint16_t payload = static_cast<uint16_t>(size - sizeof(rte_ether_hdr) - sizeof(*ip));
  ip->vtc_flow = rte_cpu_to_be_32(kIpv6VersionWord);
  ip->payload_len = rte_cpu_to_be_16(payload);
  ip->proto = IPPROTO_UDP;
  ip->hop_limits = kDefaultTtl;
  Addr6{kSourceNet6, f}.to_bytes(ip->src_addr);
  std::memcpy(ip->dst_addr, dst, sizeof ip->dst_addr);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  udp->src_port = rte_cpu_to_be_16(static_cast<uint16_t>(kBasePort + (f & kFlowPortMask)));
  udp->dst_port =
      rte_cpu_to_be_16(static_cast<uint16_t>(kBasePort + ((f >> kFlowPortShift) & kFlowPortMask)));
  udp->dgram_len = rte_cpu_to_be_16(payload);
  udp->dgram_cksum = 0;
}

// Ethernet + IPv4 + UDP headers for flow f to `dst` (host order) into template t.
void write_ipv4_template(uint8_t* t, uint32_t size, uint32_t f, uint32_t dst) {
  auto* eth = reinterpret_cast<rte_ether_hdr*>(t);
  eth->dst_addr = kDstMac;
  eth->src_addr = kSrcMac;
  eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
  ip->version_ihl = RTE_IPV4_VHL_DEF;
  ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(size - sizeof(rte_ether_hdr)));
  ip->time_to_live = kDefaultTtl;
  ip->next_proto_id = IPPROTO_UDP;
  ip->src_addr = rte_cpu_to_be_32(kSourceNet | (f & 0x00FFFFFF));
  ip->dst_addr = rte_cpu_to_be_32(dst);
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  auto* udp = reinterpret_cast<rte_udp_hdr*>(ip + 1);
  udp->src_port = rte_cpu_to_be_16(static_cast<uint16_t>(kBasePort + (f & kFlowPortMask)));
  udp->dst_port =
      rte_cpu_to_be_16(static_cast<uint16_t>(kBasePort + ((f >> kFlowPortShift) & kFlowPortMask)));
  udp->dgram_len =
      rte_cpu_to_be_16(static_cast<uint16_t>(size - sizeof(rte_ether_hdr) - sizeof(rte_ipv4_hdr)));
}

template <class T>
bool parse_number(const std::string& s, T& out) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_double(const std::string& s, double& out) {
  char* end = nullptr;
  out = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size() && std::isfinite(out);
}

}  // namespace

Result<GenConfig> parse_gen_spec(const std::string& spec) {
  GenConfig c;
  Result<SpecKeys> keys = spec_keys(spec, "generator");
  if (!keys) return make_error(keys.error());
  for (const auto& [key, val] : keys.value()) {
    bool ok = true;
    if (key == "proto") {
      if (val == "ipv4")
        c.proto = GenConfig::Proto::kIpv4;
      else if (val == "ipv6")
        c.proto = GenConfig::Proto::kIpv6;
      else
        return make_error("--port " + spec + ": proto must be ipv4 or ipv6, got '" + val + "'");
    } else if (key == "size") {
      ok = parse_number(val, c.size) && c.size >= kMinFrame && c.size <= kMaxFrame;
      if (!ok)
        return make_error("--port " + spec + ": size must be " + std::to_string(kMinFrame) + ".." +
                          std::to_string(kMaxFrame) + ", got '" + val + "'");
    } else if (key == "flows") {
      ok = parse_number(val, c.flows) && c.flows > 0;
    } else if (key == "dst") {
      if (val == "uniform")
        c.dst = GenConfig::Dst::kUniform;
      else if (val == "routes")
        c.dst = GenConfig::Dst::kRoutes;
      else if (val == "zipf")
        c.dst = GenConfig::Dst::kZipf;
      else
        return make_error("--port " + spec + ": dst must be uniform, routes or zipf, got '" + val +
                          "'");
    } else if (key == "routes") {
      c.routes = val;
    } else if (key == "zipf") {
      ok = parse_double(val, c.zipf) && c.zipf > 0;
    } else if (key == "rate") {
      ok = parse_double(val, c.rate) && c.rate >= 0;
    } else if (key == "seed") {
      ok = parse_number(val, c.seed);
    } else if (key == "count") {
      ok = parse_number(val, c.count);
    } else if (key == "step_after") {
      ok = parse_double(val, c.step_after) && c.step_after >= 0;
    } else if (key == "step_rate") {
      ok = parse_double(val, c.step_rate) && c.step_rate >= 0;
    } else if (key == "step_size") {
      ok = parse_number(val, c.step_size) && c.step_size >= kMinFrame && c.step_size <= kMaxFrame;
      if (!ok)
        return make_error("--port " + spec + ": step_size must be " + std::to_string(kMinFrame) +
                          ".." + std::to_string(kMaxFrame) + ", got '" + val + "'");
    } else {
      static const std::vector<std::string> kKeys = {
          "proto", "size", "flows",      "dst",       "routes",    "zipf",
          "rate",  "seed", "step_after", "step_rate", "step_size", "count"};
      std::string known;
      for (const std::string& k : kKeys) known += (known.empty() ? "" : ", ") + k;
      return make_error("--port " + spec + ": unknown generator key '" + key + "'" +
                        did_you_mean(key, kKeys) + " (known: " + known + ")");
    }
    if (!ok) return make_error("--port " + spec + ": bad value for " + key + ": '" + val + "'");
  }
  if (c.proto == GenConfig::Proto::kIpv6 && c.size < kMinFrame6)
    return make_error("--port " + spec + ": size must be " + std::to_string(kMinFrame6) + ".." +
                      std::to_string(kMaxFrame) + " with proto=ipv6, got '" +
                      std::to_string(c.size) + "'");
  if (c.proto == GenConfig::Proto::kIpv6 && c.step_size != 0 && c.step_size < kMinFrame6)
    return make_error("--port " + spec + ": step_size must be " + std::to_string(kMinFrame6) +
                      ".." + std::to_string(kMaxFrame) + " with proto=ipv6, got '" +
                      std::to_string(c.step_size) + "'");
  if ((c.step_size != 0 || c.step_rate != GenConfig::kSameRate) && c.step_after <= 0)
    return make_error("--port " + spec + ": step_rate and step_size need step_after=SECONDS");
  if (c.dst == GenConfig::Dst::kRoutes && c.routes.empty())
    return make_error("--port " + spec + ": dst=routes needs routes=FILE");
  return c;
}

Result<std::unique_ptr<Port>> GenPort::open(const std::string& spec, const PortConfig& config) {
  Result<GenConfig> cfg = parse_gen_spec(spec);
  if (!cfg) return make_error(cfg.error());
  auto port = std::unique_ptr<GenPort>(new GenPort());
  port->spec_ = spec;
  port->cfg_ = cfg.value();
  port->port_index_ = config.index;
  port->prefetch_fill_ = config.buffers_return_from_other_cores;
  const GenConfig& c = port->cfg_;
  std::mt19937_64 rng(c.seed);

  const bool ipv6 = c.proto == GenConfig::Proto::kIpv6;
  std::vector<Route6> routes6;
  if (ipv6 && c.dst == GenConfig::Dst::kRoutes) {
    Result<std::vector<Route6>> loaded = load_routes6(c.routes);
    if (!loaded) return make_error("--port " + spec + ": " + loaded.error());
    routes6 = std::move(loaded.value());
    if (routes6.empty())
      return make_error("--port " + spec + ": route file " + c.routes + " is empty");
  }
  std::vector<Route4> routes;
  if (!ipv6 && c.dst == GenConfig::Dst::kRoutes) {
    Result<std::vector<Route4>> loaded = load_routes4(c.routes);
    if (!loaded) return make_error("--port " + spec + ": " + loaded.error());
    routes = std::move(loaded.value());
    if (routes.empty())
      return make_error("--port " + spec + ": route file " + c.routes + " is empty");
  }

  // A size step keeps a second set of templates, the same flows at step_size.
  const size_t set_bytes = static_cast<size_t>(c.flows) * kTemplateBytes;
  port->template_mem_ = TableMemory::allocate(set_bytes * (c.step_size != 0 ? 2 : 1), "gen");
  if (!port->template_mem_)
    return make_error("--port " + spec + ": out of memory for flow templates");
  port->templates_ = static_cast<uint8_t*>(port->template_mem_->data());
  if (c.step_size != 0) port->step_templates_ = port->templates_ + set_bytes;
  port->flow_hash_.resize(c.flows);
  for (uint32_t f = 0; f < c.flows && ipv6; ++f) {
    Addr6 dst{kGlobalUnicast6 | (rng() >> kUnicast6Shift), rng()};
    if (!routes6.empty()) {
      const Route6& r = routes6[rng() % routes6.size()];
      const Addr6 p = Addr6::from_bytes(r.prefix.data());
      const Addr6 host{rng(), rng()};
      dst = Addr6{p.hi | (host.hi & ~Addr6::hi_mask(r.len)),
                  p.lo | (host.lo & ~Addr6::lo_mask(r.len))};
    }
    uint8_t dst_bytes[Ip6Table::kAddrBytes];
    dst.to_bytes(dst_bytes);
    const size_t at = static_cast<size_t>(f) * kTemplateBytes;
    write_ipv6_template(&port->templates_[at], c.size, f, dst_bytes);
    if (port->step_templates_ != nullptr)
      write_ipv6_template(&port->step_templates_[at], c.step_size, f, dst_bytes);
    port->flow_hash_[f] = static_cast<uint32_t>(rng());
  }
  for (uint32_t f = 0; f < c.flows && !ipv6; ++f) {
    uint32_t dst = static_cast<uint32_t>(rng());
    if (!routes.empty()) {
      const Route4& r = routes[rng() % routes.size()];
      uint32_t host_mask = r.len == 0 ? ~0u : (r.len == 32 ? 0u : (~0u >> r.len));
      dst = r.prefix | (static_cast<uint32_t>(rng()) & host_mask);
    }
    const size_t at = static_cast<size_t>(f) * kTemplateBytes;
    write_ipv4_template(&port->templates_[at], c.size, f, dst);
    if (port->step_templates_ != nullptr)
      write_ipv4_template(&port->step_templates_[at], c.step_size, f, dst);
    port->flow_hash_[f] = static_cast<uint32_t>(rng());
  }

  const uint32_t len = std::bit_ceil(std::max(kMinSequence, c.flows));
  port->sequence_.resize(len);
  port->sequence_mask_ = len - 1;
  if (c.dst == GenConfig::Dst::kZipf) {
    std::vector<double> cdf(c.flows);
    double sum = 0;
    for (uint32_t k = 0; k < c.flows; ++k) cdf[k] = sum += 1.0 / std::pow(k + 1.0, c.zipf);
    std::uniform_real_distribution<double> u(0, sum);
    for (uint32_t& s : port->sequence_)
      s = static_cast<uint32_t>(std::lower_bound(cdf.begin(), cdf.end(), u(rng)) - cdf.begin());
  } else {
    // Flows round-robin (as hardware generators do): the destinations are random per flow, and
    // the templates stream through the cache in order.
    for (uint32_t i = 0; i < len; ++i) port->sequence_[i] = i % c.flows;
  }

  port->tsc_hz_ = static_cast<double>(rte_get_tsc_hz());
  const int nq = std::max(1, config.workers);
  port->queues_.resize(static_cast<size_t>(nq));
  for (int q = 0; q < nq; ++q) {
    auto pool = create_packet_pool("gen" + std::to_string(config.index) + "q" + std::to_string(q),
                                   kPoolPerQueue);
    if (!pool) return make_error("--port " + spec + ": " + pool.error());
    Queue& queue = port->queues_[static_cast<size_t>(q)];
    queue.pool = pool.value();
    queue.pos = static_cast<uint32_t>(q) * (len / static_cast<uint32_t>(nq));
    queue.last_tsc = rte_rdtsc();
    // count=N is dealt over the queues, the first ones taking the remainder.
    const uint64_t nqueues = static_cast<uint64_t>(nq);
    queue.left = c.count / nqueues + (static_cast<uint64_t>(q) < c.count % nqueues ? 1 : 0);
  }
  return std::unique_ptr<Port>(std::move(port));
}

GenPort::~GenPort() {
  for (Queue& q : queues_) rte_mempool_free(q.pool);
}

bool GenPort::stepped(Queue& q, uint64_t now) {
  if (cfg_.step_after <= 0) return false;
  if (q.step_tsc == 0) q.step_tsc = now + static_cast<uint64_t>(cfg_.step_after * tsc_hz_);
  return now >= q.step_tsc;
}

uint16_t GenPort::rx_burst(uint16_t queue, Packet** pkts, uint16_t n) {
  Queue& q = queues_[queue];
  if (cfg_.count > 0) {
    if (q.left == 0) return 0;
    n = static_cast<uint16_t>(std::min<uint64_t>(n, q.left));
  }
  const uint8_t* templates = templates_;
  uint16_t size = static_cast<uint16_t>(cfg_.size);
  if (cfg_.rate > 0 || cfg_.step_after > 0) {
    const uint64_t now = rte_rdtsc();
    double rate = cfg_.rate;
    if (stepped(q, now)) {
      if (cfg_.step_rate != GenConfig::kSameRate) rate = cfg_.step_rate;
      if (step_templates_ != nullptr) {
        templates = step_templates_;
        size = static_cast<uint16_t>(cfg_.step_size);
      }
    }
    if (rate > 0) {
      const double per_queue = rate / static_cast<double>(queues_.size());
      // The bucket holds kBucketSeconds of traffic (at least a burst): a worker that polls
      // seldom (a shared core, idle back-off) catches up with full bursts instead of losing
      // the tokens beyond one burst, which held the rate at a burst per poll.
      q.tokens = std::min(q.tokens + static_cast<double>(now - q.last_tsc) / tsc_hz_ * per_queue,
                          std::max(static_cast<double>(n), per_queue * kBucketSeconds));
      n = static_cast<uint16_t>(std::min<double>(n, q.tokens));
      q.tokens -= n;
    }
    q.last_tsc = now;
    if (n == 0) return 0;
  }
  // Raw get: mbufs freed back to a pool keep refcnt 1, next NULL and nb_segs 1 (DPDK's
  // invariant for rte_mbuf_raw_alloc), so only the fields below need writing.
  if (rte_mempool_get_bulk(q.pool, reinterpret_cast<void**>(pkts), n) != 0) return 0;
  if (cfg_.count > 0) q.left -= n;
  const uint32_t pos = q.pos;
  q.pos += n;
  if (prefetch_fill_) prefetch_fill_lines(q.pool, pkts, n);
  // With many flows the templates do not fit in cache: fetch the next burst's while this one
  // is built.
  for (uint16_t i = 0; i < n; ++i)
    rte_prefetch0(
        &templates[static_cast<size_t>(sequence_[(q.pos + i) & sequence_mask_]) * kTemplateBytes]);
  for (uint16_t i = 0; i < n; ++i) {
    const uint32_t flow = sequence_[(pos + i) & sequence_mask_];
    Packet* m = pkts[i];
    m->data_off = RTE_PKTMBUF_HEADROOM;
    m->port = port_index_;
    m->packet_type = 0;
    m->ol_flags = RTE_MBUF_F_RX_RSS_HASH;
    m->data_len = size;
    m->pkt_len = size;
    m->hash.rss = flow_hash_[flow];
    m->tx_offload = 0;
    auto* frame = rte_pktmbuf_mtod(m, uint8_t*);
    rte_mov64(frame, &templates[static_cast<size_t>(flow) * kTemplateBytes]);
    if (size > kTemplateBytes) std::memset(frame + kTemplateBytes, 0, size - kTemplateBytes);
  }
  return n;
}

uint16_t GenPort::tx_burst(uint16_t, Packet** pkts, uint16_t n) {
  rte_pktmbuf_free_bulk(pkts, n);
  return n;
}

}  // namespace fulcrum
