#include "elements/ip/ip_fragmenter.hh"

#include <rte_ether.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace fulcrum {
namespace {

constexpr uint32_t kMinMtu = 68;  // RFC 791: every module must forward 68 bytes unfragmented
constexpr uint32_t kMaxMtu = UINT16_MAX;
constexpr uint32_t kIhlUnit = 4;
constexpr uint8_t kIhlMask = 0x0F;
constexpr uint32_t kFragUnit = 8;
constexpr uint8_t kOptEnd = 0, kOptNop = 1, kOptCopied = 0x80;

// The options of `ip` (options area [20, ihl)) that go into every fragment (the copied flag),
// padded to whole words; returns the new header length.
uint32_t copied_options(const uint8_t* ip, uint32_t ihl, uint8_t* out) {
  uint32_t n = sizeof(rte_ipv4_hdr);
  for (uint32_t i = sizeof(rte_ipv4_hdr); i < ihl;) {
    const uint8_t type = ip[i];
    if (type == kOptEnd) break;
    if (type == kOptNop) {
      ++i;
      continue;
    }
    const uint32_t len = i + 1 < ihl ? ip[i + 1] : 0;
    if (len < 2 || i + len > ihl) break;  // malformed: copy nothing more
    if (type & kOptCopied) {
      std::memcpy(out + n, ip + i, len);
      n += len;
    }
    i += len;
  }
  while (n % kIhlUnit != 0) out[n++] = kOptEnd;
  return n;
}

}  // namespace

Status IPFragmenter::configure(Args& args) {
  args.positional("MTU", mtu_, "largest IP total length to send, 68..65535");
  if (Status s = args.finish(); !s) return s;
  if (mtu_ < kMinMtu || mtu_ > kMaxMtu) return args.error("MTU must be 68..65535");
  return {};
}

Status IPFragmenter::initialize(const InitContext& ctx) {
  pool_ = ctx.pool;
  if (pool_ == nullptr) return make_error(name() + " :: IPFragmenter: no packet pool here");
  made_.reserve(kMaxBatch * 2);
  return {};
}

void IPFragmenter::process_batch(PacketBatch& batch) {
  batch.for_each([&](uint32_t i, Packet* p) {
    const uint32_t len = length(p);
    const auto* eth = rte_pktmbuf_mtod(p, const rte_ether_hdr*);
    if (len < RTE_ETHER_HDR_LEN + sizeof(rte_ipv4_hdr) ||
        eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) || !rte_pktmbuf_is_contiguous(p))
      return batch.set_result(i, Verdict::drop(kDropReasons["not-ipv4"]));
    const auto* ip = rte_pktmbuf_mtod_offset(p, const rte_ipv4_hdr*, RTE_ETHER_HDR_LEN);
    if (rte_be_to_cpu_16(ip->total_length) <= mtu_) return batch.set_result(i, Verdict::out(0));
    if (ip->fragment_offset & rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG))
      return batch.set_result(
          i, output_connected(1) ? Verdict::out(1) : Verdict::drop(kDropReasons["df-too-big"]));
    batch.set_result(i, cut(p) ? Verdict::drop(kDropReasons["fragmented"])
                               : Verdict::drop(kDropReasons["no-buffer"]));
  });
}

bool IPFragmenter::cut(Packet* p) {
  const uint8_t* frame = rte_pktmbuf_mtod(p, const uint8_t*);
  const uint8_t* ip = frame + RTE_ETHER_HDR_LEN;
  const uint32_t ihl = (ip[0] & kIhlMask) * kIhlUnit;
  const auto* hdr = reinterpret_cast<const rte_ipv4_hdr*>(ip);
  const uint32_t total =
      std::min<uint32_t>(rte_be_to_cpu_16(hdr->total_length), length(p) - RTE_ETHER_HDR_LEN);
  if (ihl < sizeof(rte_ipv4_hdr) || ihl + kFragUnit > mtu_ || ihl >= total) return false;
  uint8_t later_hdr[15 * kIhlUnit];
  std::memcpy(later_hdr, ip, sizeof(rte_ipv4_hdr));
  const uint32_t later_ihl = copied_options(ip, ihl, later_hdr);
  // An already fragmented packet keeps its offset and, on its last piece, its MF flag.
  const uint16_t was = rte_be_to_cpu_16(hdr->fragment_offset);
  const uint32_t base = (was & RTE_IPV4_HDR_OFFSET_MASK) * kFragUnit;
  const bool more_after = (was & RTE_IPV4_HDR_MF_FLAG) != 0;
  const size_t first = made_.size();
  for (uint32_t at = ihl; at < total;) {
    const bool head = at == ihl;
    const uint32_t h = head ? ihl : later_ihl;
    const uint32_t room = (mtu_ - h) / kFragUnit * kFragUnit;
    const uint32_t take = std::min(room, total - at);
    const bool last = at + take == total;
    Packet* f = rte_pktmbuf_alloc(pool_);
    char* d = f == nullptr
                  ? nullptr
                  : rte_pktmbuf_append(f, static_cast<uint16_t>(RTE_ETHER_HDR_LEN + h + take));
    if (d == nullptr) {
      if (f != nullptr) rte_pktmbuf_free(f);
      for (size_t k = first; k < made_.size(); ++k) rte_pktmbuf_free(made_[k]);
      made_.resize(first);
      return false;
    }
    auto* out = reinterpret_cast<uint8_t*>(d);
    std::memcpy(out, frame, RTE_ETHER_HDR_LEN);
    std::memcpy(out + RTE_ETHER_HDR_LEN, head ? ip : later_hdr, h);
    std::memcpy(out + RTE_ETHER_HDR_LEN + h, ip + at, take);
    auto* fh = reinterpret_cast<rte_ipv4_hdr*>(out + RTE_ETHER_HDR_LEN);
    fh->version_ihl = static_cast<uint8_t>((fh->version_ihl & ~kIhlMask) | (h / kIhlUnit));
    fh->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(h + take));
    const uint32_t offset = (base + at - ihl) / kFragUnit;
    const uint16_t mf = (!last || more_after) ? RTE_IPV4_HDR_MF_FLAG : 0;
    fh->fragment_offset = rte_cpu_to_be_16(static_cast<uint16_t>(mf | offset));
    fh->hdr_checksum = 0;
    fh->hdr_checksum = rte_ipv4_cksum(fh);
    copy_anno(f, p);
    made_.push_back(f);
    at += take;
  }
  ++fragmented_;
  fragments_ += made_.size() - first;
  return true;
}

void IPFragmenter::poll_deferred(uint64_t, PacketBatch& out) {
  for (; next_ < made_.size() && !out.full(); ++next_) out.push_created(made_[next_]);
  if (next_ == made_.size()) {
    made_.clear();
    next_ = 0;
  }
}

void IPFragmenter::counters(std::vector<Counter>& out) const {
  out.push_back({"fragmented", fragmented_});
  out.push_back({"fragments", fragments_});
}

}  // namespace fulcrum
