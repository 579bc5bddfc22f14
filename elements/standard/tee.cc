#include "elements/standard/tee.hh"

#include <cstring>
#include <string>

namespace fulcrum {
namespace {

constexpr int kDefaultOutputs = 2;

}  // namespace

Status Tee::configure(Args& args) {
  int n = kDefaultOutputs;
  args.positional("N", n, "outputs: output 0 and a copy for each of outputs 1..N-1", false);
  if (Status s = args.finish(); !s) return s;
  if (n < 1 || n > kMaxOutputs) return args.error("N must be 1.." + std::to_string(kMaxOutputs));
  set_noutputs(n);
  return {};
}

Status Tee::initialize(const InitContext& ctx) {
  pool_ = ctx.pool;
  if (pool_ == nullptr) return make_error(name() + " :: Tee: no packet pool in this runtime");
  held_.reserve(static_cast<size_t>(kMaxBatch) * static_cast<size_t>(noutputs() - 1));
  return {};
}

Packet* Tee::copy(Packet* p) const {
  const uint32_t len = rte_pktmbuf_pkt_len(p);
  Packet* c = rte_pktmbuf_alloc(pool_);
  if (c == nullptr) return nullptr;
  char* dst =
      len > rte_pktmbuf_tailroom(c) ? nullptr : rte_pktmbuf_append(c, static_cast<uint16_t>(len));
  if (dst == nullptr) {
    rte_pktmbuf_free(c);
    return nullptr;
  }
  const void* src = rte_pktmbuf_read(p, 0, len, dst);
  if (src != dst) std::memcpy(dst, src, len);
  c->ol_flags = p->ol_flags & RTE_MBUF_F_RX_RSS_HASH;
  c->packet_type = p->packet_type;
  copy_anno(c, p);
  return c;
}

void Tee::counters(std::vector<Counter>& out) const {
  out.push_back({"copies", copies_});
  out.push_back({"no_buffer", no_buffer_});
}

}  // namespace fulcrum
