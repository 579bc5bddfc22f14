// rte_ip_frag_table_del_expired_entries is marked experimental in DPDK 22.11 (it is how expired
// datagrams leave without waiting for the next fragment of their bucket).
#define ALLOW_EXPERIMENTAL_API

#include "elements/ip/ip_reassembler.hh"

#include <rte_cycles.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_log.h>

#include <cstring>
#include <string>

#include "core/shared_storage.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kBucketEntries = 16;
constexpr unsigned kDatagramBuffers = 63;  // a power of two minus one: the pool's best size
constexpr uint16_t kDatagramRoom = UINT16_MAX;
constexpr uint32_t kMsPerSecond = 1000;
constexpr uint16_t kIpv4FragMask = RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK;

uint64_t tsc_now() {
  return rte_rdtsc();
}

}  // namespace

IPReassembler::~IPReassembler() {
  // Whatever the run left here is freed (the worker polls until held() is 0 before it ends).
  if (table_ != nullptr) {
    rte_ip_frag_table_del_expired_entries(table_, &death_row_, UINT64_MAX);
    rte_ip_frag_free_death_row(&death_row_, 0);
    rte_ip_frag_table_destroy(table_);
  }
  for (size_t i = next_; i < out_.size(); ++i) rte_pktmbuf_free(out_[i].packet);
}

Status IPReassembler::configure(Args& args) {
  args.key("TIMEOUT_MS", timeout_ms_, "a datagram not completed within it is dropped (ms)")
      .key("MAX_DATAGRAMS", max_datagrams_, "datagrams being reassembled at once per worker");
  if (Status s = args.finish(); !s) return s;
  if (timeout_ms_ == 0) return args.error("TIMEOUT_MS must be at least 1");
  if (max_datagrams_ < kBucketEntries) return args.error("MAX_DATAGRAMS must be at least 16");
  return {};
}

Status IPReassembler::initialize(const InitContext& ctx) {
  const std::string where = name() + " :: IPReassembler: ";
  const uint32_t buckets = rte_align32pow2((max_datagrams_ + kBucketEntries - 1) / kBucketEntries);
  const uint64_t cycles = rte_get_tsc_hz() * timeout_ms_ / kMsPerSecond;
  // The library announces every table at INFO level under USER1: not news for the user.
  const int level = rte_log_get_level(RTE_LOGTYPE_USER1);
  rte_log_set_level(RTE_LOGTYPE_USER1, RTE_LOG_WARNING);
  table_ = rte_ip_frag_table_create(buckets, kBucketEntries, max_datagrams_, cycles,
                                    static_cast<int>(rte_socket_id()));
  rte_log_set_level(RTE_LOGTYPE_USER1, static_cast<uint32_t>(level));
  if (table_ == nullptr) return make_error(where + "cannot create the fragment table");
  // The pool lives in the run's shared storage, which outlasts the ports: a NIC may still hold
  // datagrams in its transmit ring when the pipeline is gone, and frees them when it stops.
  auto pool = shared_or_own<DatagramPool>(
      ctx.shared, "ip-reassembler:" + name() + ":" + std::to_string(ctx.worker),
      [&]() -> Result<std::shared_ptr<DatagramPool>> {
        auto made = create_packet_pool("reasm" + std::to_string(ctx.worker), kDatagramBuffers,
                                       kDatagramRoom, 0);
        if (!made) return make_error(made.error());
        auto holder = std::make_shared<DatagramPool>();
        holder->pool.reset(made.value());
        return holder;
      });
  if (!pool) return make_error(where + pool.error());
  pool_ = pool.value();
  if (now_ == nullptr) now_ = tsc_now;
  out_.reserve(kMaxBatch * 2);
  return {};
}

void IPReassembler::process_batch(PacketBatch& batch) {
  batch.for_each([&](uint32_t i, Packet* p) {
    batch.set_result(i, Verdict::out(0));
    const uint32_t len = length(p);
    if (len < RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr)) return;
    const auto* eth = rte_pktmbuf_mtod(p, const rte_ether_hdr*);
    if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
      const auto* ip = rte_pktmbuf_mtod_offset(p, const rte_ipv4_hdr*, RTE_ETHER_HDR_LEN);
      if ((ip->fragment_offset & rte_cpu_to_be_16(kIpv4FragMask)) == 0) return;
      const uint32_t ihl = rte_ipv4_hdr_len(ip);
      if (ihl < sizeof(rte_ipv4_hdr) || RTE_ETHER_HDR_LEN + ihl > len) return;
      batch.exclude(i);
      take(p, ihl, false);
    } else if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6) &&
               len >= RTE_ETHER_HDR_LEN + sizeof(rte_ipv6_hdr) + sizeof(rte_ipv6_fragment_ext)) {
      auto* ip = rte_pktmbuf_mtod_offset(p, rte_ipv6_hdr*, RTE_ETHER_HDR_LEN);
      if (rte_ipv6_frag_get_ipv6_fragment_header(ip) == nullptr) return;
      batch.exclude(i);
      take(p, sizeof(rte_ipv6_hdr) + sizeof(rte_ipv6_fragment_ext), true);
    }
  });
}

void IPReassembler::take(Packet* p, uint32_t l3_len, bool v6) {
  ++fragments_;
  ++held_;
  p->l2_len = RTE_ETHER_HDR_LEN;
  p->l3_len = l3_len;
  Packet* done;
  if (v6) {
    auto* ip = rte_pktmbuf_mtod_offset(p, rte_ipv6_hdr*, RTE_ETHER_HDR_LEN);
    done = rte_ipv6_frag_reassemble_packet(table_, &death_row_, p, now_(), ip,
                                           rte_ipv6_frag_get_ipv6_fragment_header(ip));
  } else {
    auto* ip = rte_pktmbuf_mtod_offset(p, rte_ipv4_hdr*, RTE_ETHER_HDR_LEN);
    done = rte_ipv4_frag_reassemble_packet(table_, &death_row_, p, now_(), ip);
  }
  collect_death_row();
  if (done != nullptr) complete(done);
}

// The fragments the library gave up on (timed out, overlapping, too many, table full) leave as
// drops instead of being freed here, so the graph counts them.
uint32_t IPReassembler::collect_death_row() {
  const uint32_t n = death_row_.cnt;
  for (uint32_t k = 0; k < n; ++k) {
    --held_;
    out_.push_back({death_row_.row[k], Verdict::drop(kDropReasons["incomplete"]), false});
  }
  death_row_.cnt = 0;
  return n;
}

// `chain`: the datagram as the library returns it, the fragments' buffers chained (headers of
// all but the first stripped). Copied into one buffer; the fragments leave as "reassembled".
void IPReassembler::complete(Packet* chain) {
  const uint32_t len = rte_pktmbuf_pkt_len(chain);
  Packet* d = nullptr;
  Verdict fragment_verdict = Verdict::drop(kDropReasons["reassembled"]);
  if (len > kDatagramRoom - RTE_PKTMBUF_HEADROOM) {
    fragment_verdict = Verdict::drop(kDropReasons["too-big"]);
  } else if ((d = rte_pktmbuf_alloc(pool_->pool.get())) == nullptr) {
    fragment_verdict = Verdict::drop(kDropReasons["no-buffer"]);
  } else {
    auto* dst = rte_pktmbuf_mtod(d, uint8_t*);
    uint32_t at = 0;
    for (Packet* s = chain; s != nullptr; s = s->next) {
      std::memcpy(dst + at, rte_pktmbuf_mtod(s, const uint8_t*), s->data_len);
      at += s->data_len;
    }
    d->data_len = static_cast<uint16_t>(len);
    d->pkt_len = len;
    copy_anno(d, chain);
    auto* eth = reinterpret_cast<rte_ether_hdr*>(dst);
    if (eth->ether_type == rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) {
      auto* ip = reinterpret_cast<rte_ipv4_hdr*>(dst + RTE_ETHER_HDR_LEN);
      ip->hdr_checksum = 0;
      ip->hdr_checksum = rte_ipv4_cksum(ip);
    }
  }
  // Each buffer of the chain is a fragment that was held: it leaves alone.
  for (Packet* s = chain; s != nullptr;) {
    Packet* next = s->next;
    s->next = nullptr;
    s->nb_segs = 1;
    s->pkt_len = s->data_len;
    --held_;
    out_.push_back({s, fragment_verdict, false});
    s = next;
  }
  if (d != nullptr) {
    ++datagrams_;
    out_.push_back({d, Verdict::out(0), true});
  }
}

void IPReassembler::poll_deferred(uint64_t, PacketBatch& out) {
  if (held_ > 0) {
    rte_ip_frag_table_del_expired_entries(table_, &death_row_, now_());
    collect_death_row();
  }
  for (; next_ < out_.size() && !out.full(); ++next_) {
    const Leaving& l = out_[next_];
    if (l.created)
      out.push_created(l.packet);
    else
      out.push(l.packet);
    out.set_result(out.count() - 1, l.verdict);
  }
  if (next_ == out_.size()) {
    out_.clear();
    next_ = 0;
  }
}

void IPReassembler::drain() {
  while (held_ > 0) {
    rte_ip_frag_table_del_expired_entries(table_, &death_row_, UINT64_MAX);
    if (collect_death_row() == 0) break;
  }
}

void IPReassembler::counters(std::vector<Counter>& out) const {
  out.push_back({"datagrams", datagrams_});
  out.push_back({"fragments", fragments_});
}

}  // namespace fulcrum
