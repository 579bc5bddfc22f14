#include "io/replay_port.hh"

#include <pcap/pcap.h>
#include <rte_memcpy.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "core/flow_hash.hh"
#include "core/suggest.hh"
#include "io/mempool.hh"
#include "io/spec_keys.hh"

namespace fulcrum {
namespace {

constexpr unsigned kPoolPerQueue = 16383;
constexpr uint64_t kPoolBytes = uint64_t{64} << 20;  // per queue: fewer buffers for jumbo frames

struct PcapCloser {
  void operator()(pcap_t* p) const { pcap_close(p); }
};

uint64_t round_to_line(uint64_t n) {
  return (n + ReplayPort::kLine - 1) / ReplayPort::kLine * ReplayPort::kLine;
}

}  // namespace

Result<ReplayConfig> parse_replay_spec(const std::string& spec) {
  ReplayConfig c;
  Result<SpecKeys> keys = spec_keys(spec, "replay");
  if (!keys) return make_error(keys.error());
  for (const auto& [key, val] : keys.value()) {
    if (key == "file") {
      c.file = val;
    } else if (key == "loops") {
      auto [p, ec] = std::from_chars(val.data(), val.data() + val.size(), c.loops);
      if (ec != std::errc() || p != val.data() + val.size())
        return make_error("--port " + spec + ": bad value for loops: '" + val +
                          "' (a count, 0 for without end)");
    } else {
      static const std::vector<std::string> kKeys = {"file", "loops"};
      return make_error("--port " + spec + ": unknown replay key '" + key + "'" +
                        did_you_mean(key, kKeys) + " (known: file, loops)");
    }
  }
  if (c.file.empty()) return make_error("--port " + spec + ": replay needs file=PATH");
  return c;
}

Result<ReplayCapture> load_replay_capture(const std::string& path) {
  const std::string what = "cannot read capture " + path + ": ";
  char err[PCAP_ERRBUF_SIZE] = {};
  std::unique_ptr<pcap_t, PcapCloser> p(pcap_open_offline(path.c_str(), err));
  if (!p) return make_error(what + err);
  if (pcap_datalink(p.get()) != DLT_EN10MB)
    return make_error(what + "link type " + std::to_string(pcap_datalink(p.get())) +
                      ", not Ethernet (" + std::to_string(DLT_EN10MB) + ")");
  ReplayCapture cap;
  std::vector<uint8_t> bytes;
  pcap_pkthdr* hdr = nullptr;
  const u_char* data = nullptr;
  int rc = 0;
  while ((rc = pcap_next_ex(p.get(), &hdr, &data)) == 1) {
    const size_t record = cap.frames.size() + 1;
    if (hdr->caplen > ReplayPort::kMaxFrame)
      return make_error(what + "record " + std::to_string(record) + " holds " +
                        std::to_string(hdr->caplen) + " bytes, more than a replayed frame may (" +
                        std::to_string(ReplayPort::kMaxFrame) + ")");
    const uint64_t at = bytes.size();
    bytes.resize(at + round_to_line(hdr->caplen), 0);
    std::memcpy(bytes.data() + at, data, hdr->caplen);
    cap.frames.push_back({at, hdr->caplen, frame_flow_hash(data, hdr->caplen)});
    cap.max_len = std::max(cap.max_len, hdr->caplen);
  }
  if (rc != PCAP_ERROR_BREAK)
    return make_error(what + "record " + std::to_string(cap.frames.size() + 1) + ": " +
                      pcap_geterr(p.get()));
  if (cap.frames.empty()) return make_error(what + "it holds no packets");
  cap.memory = TableMemory::allocate(bytes.size(), "replay");
  if (!cap.memory) return make_error(what + TableMemory::allocation_error(bytes.size(), "frames"));
  std::memcpy(cap.memory->data(), bytes.data(), bytes.size());
  return cap;
}

Status ReplayPort::check(const std::string& spec) {
  Result<ReplayConfig> c = parse_replay_spec(spec);
  if (!c) return make_error(c.error());
  Result<ReplayCapture> cap = load_replay_capture(c->file);
  if (!cap) return make_error("--port " + spec + ": " + cap.error());
  return {};
}

Result<std::unique_ptr<Port>> ReplayPort::open(const std::string& spec, const PortConfig& config) {
  Result<ReplayConfig> c = parse_replay_spec(spec);
  if (!c) return make_error(c.error());
  Result<ReplayCapture> cap = load_replay_capture(c->file);
  if (!cap) return make_error("--port " + spec + ": " + cap.error());
  auto port = std::unique_ptr<ReplayPort>(new ReplayPort());
  port->spec_ = spec;
  port->cfg_ = c.value();
  port->port_index_ = config.index;
  port->prefetch_fill_ = config.buffers_return_from_other_cores;
  port->capture_ = std::move(cap.value());
  port->bytes_ = static_cast<const uint8_t*>(port->capture_.memory->data());
  const auto nq = static_cast<uint32_t>(std::max(1, config.workers));
  port->queues_.resize(nq);
  for (const ReplayCapture::Frame& f : port->capture_.frames)
    port->queues_[f.hash % nq].frames.push_back(f);
  // Whole lines are copied: the buffer holds the longest frame rounded up to one.
  const auto room = static_cast<uint16_t>(std::max<uint64_t>(
      kDefaultDataRoom, round_to_line(port->capture_.max_len) + RTE_PKTMBUF_HEADROOM));
  for (uint32_t q = 0; q < nq; ++q) {
    Queue& queue = port->queues_[q];
    queue.left = port->cfg_.loops * queue.frames.size();
    const auto buffers =
        static_cast<unsigned>(std::min<uint64_t>(kPoolPerQueue, kPoolBytes / room));
    auto pool = create_packet_pool(
        "replay" + std::to_string(config.index) + "q" + std::to_string(q), buffers, room);
    if (!pool) return make_error("--port " + spec + ": " + pool.error());
    queue.pool = pool.value();
  }
  return std::unique_ptr<Port>(std::move(port));
}

ReplayPort::~ReplayPort() {
  for (Queue& q : queues_) rte_mempool_free(q.pool);
}

uint16_t ReplayPort::rx_burst(uint16_t queue, Packet** pkts, uint16_t n) {
  Queue& q = queues_[queue];
  if (q.frames.empty()) return 0;
  if (cfg_.loops > 0) {
    if (q.left == 0) return 0;
    n = static_cast<uint16_t>(std::min<uint64_t>(n, q.left));
    q.left -= n;
  }
  // Raw get: mbufs freed back to a pool keep refcnt 1, next NULL and nb_segs 1 (DPDK's
  // invariant for rte_mbuf_raw_alloc), so only the fields below need writing.
  if (rte_mempool_get_bulk(q.pool, reinterpret_cast<void**>(pkts), n) != 0) {
    if (cfg_.loops > 0) q.left += n;
    return 0;
  }
  if (prefetch_fill_) prefetch_fill_lines(q.pool, pkts, n);
  const ReplayCapture::Frame* frames = q.frames.data();
  const size_t count = q.frames.size();
  size_t pos = q.pos;
  for (uint16_t i = 0; i < n; ++i) {
    const ReplayCapture::Frame& f = frames[pos];
    if (++pos == count) pos = 0;
    Packet* m = pkts[i];
    m->data_off = RTE_PKTMBUF_HEADROOM;
    m->port = port_index_;
    m->packet_type = 0;
    m->ol_flags = RTE_MBUF_F_RX_RSS_HASH;
    m->data_len = static_cast<uint16_t>(f.len);
    m->pkt_len = f.len;
    m->hash.rss = f.hash;
    m->tx_offload = 0;
    uint8_t* dst = rte_pktmbuf_mtod(m, uint8_t*);
    const uint8_t* src = bytes_ + f.offset;
    for (uint32_t off = 0; off < f.len; off += kLine) rte_mov64(dst + off, src + off);
  }
  q.pos = pos;
  return n;
}

uint16_t ReplayPort::tx_burst(uint16_t, Packet** pkts, uint16_t n) {
  rte_pktmbuf_free_bulk(pkts, n);
  return n;
}

}  // namespace fulcrum
