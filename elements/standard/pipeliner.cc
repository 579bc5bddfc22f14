#include "elements/standard/pipeliner.hh"

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_pause.h>
#include <rte_ring.h>

#include <cstring>

#include "core/heartbeat.hh"
#include "core/shared_storage.hh"

namespace fulcrum {
namespace {

constexpr uint16_t kEtherIPv4 = 0x0800, kEtherIPv6 = 0x86DD, kEtherVlan = 0x8100;
constexpr uint32_t kEtherHeader = 14, kVlanTag = 4, kMacPair = 12;
constexpr uint8_t kTcp = 6, kUdp = 17, kSctp = 132;
constexpr uint32_t kIPv6Header = 40, kIPv4Min = 20;

uint16_t be16(const uint8_t* b) {
  return static_cast<uint16_t>(b[0] << 8 | b[1]);
}

bool has_ports(uint8_t proto) {
  return proto == kTcp || proto == kUdp || proto == kSctp;
}

}  // namespace

Status Pipeliner::initialize(const InitContext& ctx) {
  burst_ = ctx.batch;
  if (ctx.shared == nullptr) return {};
  links_ = ctx.shared->find<StageLinks>(StageLinks::kSharedKey);
  if (!links_) return {};
  StageLinks::Endpoint e = links_->endpoint(name(), ctx.worker);
  if (e.out.size() > kMaxConsumers)
    return make_error("a hybrid stage of " + std::to_string(e.out.size()) + " workers; at most " +
                      std::to_string(kMaxConsumers));
  out_ = std::move(e.out);
  in_ = std::move(e.in);
  scratch_.resize(out_.size());
  return {};
}

void Pipeliner::enqueue(StageRing& r, Packet** pkts, uint32_t n) {
  unsigned free_space = 0;
  void* const* objs = reinterpret_cast<void* const*>(pkts);
  uint32_t done = rte_ring_sp_enqueue_burst(r.ring, objs, n, &free_space);
  if (done < n) {
    r.back_pressure.add(1);
    back_pressure_.add(1);
    // Spinning, not yielding the CPU: the consumer runs on another one (a worker per CPU), and
    // a worker that yields on a loaded machine can lose its CPU for a whole time slice while
    // the consumer empties the ring and then idles.
    while (done < n) {
      heartbeat();
      rte_pause();
      done += rte_ring_sp_enqueue_burst(r.ring, objs + done, n - done, &free_space);
    }
  }
  r.enqueued.add(n);
  enqueued_.add(n);
  const uint64_t occupancy = r.capacity - free_space;
  if (occupancy > r.max_occupancy.get()) r.max_occupancy.v.store(occupancy);
}

void Pipeliner::poll_deferred(uint64_t now_ns, PacketBatch& out) {
  if (in_.empty()) return;
  if (now_ns != poll_ns_) {
    poll_ns_ = now_ns;
    polled_ = 0;
  }
  if (polled_ >= kBatchesPerPoll) return;
  Packet** dst = out.data();
  uint32_t n = 0;
  for (size_t k = 0; k < in_.size() && n < burst_; ++k) {
    StageRing& r = *in_[next_in_];
    next_in_ = next_in_ + 1 == in_.size() ? 0 : next_in_ + 1;
    const unsigned got =
        rte_ring_sc_dequeue_burst(r.ring, reinterpret_cast<void**>(dst + n), burst_ - n, nullptr);
    if (got == 0) continue;
    r.dequeued.add(got);
    n += got;
  }
  if (n == 0) return;
  ++polled_;
  dequeued_.add(n);
  out.set_count(n);
  out.anno().rx_tsc = rte_rdtsc();
}

uint64_t Pipeliner::held() const {
  uint64_t n = 0;
  for (const StageRing* r : in_) n += rte_ring_count(r->ring);
  return n;
}

void Pipeliner::counters(std::vector<Counter>& out) const {
  out.push_back({"enqueued", enqueued_.get()});
  out.push_back({"back_pressure", back_pressure_.get()});
  out.push_back({"dequeued", dequeued_.get()});
}

uint32_t Pipeliner::flow_hash_of(Packet* p) {
  const uint32_t h = anno(p).flow_hash;
  if (h != 0) return h;
  const uint8_t* b = data(p);
  const uint32_t len = length(p);
  // addresses (up to 2 x 16 bytes), protocol, ports
  alignas(8) uint8_t key[2 * 16 + 8] = {};
  uint32_t key_len = 0;
  uint32_t l3 = 0;
  uint16_t type = 0;
  if (len >= kEtherHeader) {
    type = be16(b + kMacPair);
    l3 = kEtherHeader;
    if (type == kEtherVlan && len >= kEtherHeader + kVlanTag) {
      type = be16(b + kEtherHeader + 2);
      l3 += kVlanTag;
    }
  }
  if (type != kEtherIPv4 && type != kEtherIPv6 && len >= kIPv4Min) {
    // No Ethernet header in front (a stage after one was stripped): an IP header whose length
    // field fits the frame.
    const unsigned version = b[0] >> 4;
    if (version == 4 && (b[0] & 0xF) >= 5 && be16(b + 2) <= len) {
      type = kEtherIPv4;
      l3 = 0;
    } else if (version == 6 && len >= kIPv6Header && be16(b + 4) + kIPv6Header <= len) {
      type = kEtherIPv6;
      l3 = 0;
    }
  }
  constexpr uint32_t kIPv4Addrs = 12, kIPv4Proto = 9, kIPv4Frag = 6;
  constexpr uint16_t kFragMask = 0x3FFF;  // MF and the offset
  if (type == kEtherIPv4 && len >= l3 + kIPv4Min) {
    const uint8_t* ip = b + l3;
    std::memcpy(key, ip + kIPv4Addrs, 8);
    key[8] = ip[kIPv4Proto];
    key_len = 16;
    const uint32_t ihl = (ip[0] & 0xF) * 4U;
    if (has_ports(ip[kIPv4Proto]) && (be16(ip + kIPv4Frag) & kFragMask) == 0 && len >= l3 + ihl + 4)
      std::memcpy(key + 9, ip + ihl, 4);
  } else if (type == kEtherIPv6 && len >= l3 + kIPv6Header) {
    const uint8_t* ip = b + l3;
    constexpr uint32_t kIPv6Addrs = 8, kIPv6Next = 6;
    std::memcpy(key, ip + kIPv6Addrs, 32);
    key[32] = ip[kIPv6Next];
    key_len = 40;
    if (has_ports(ip[kIPv6Next]) && len >= l3 + kIPv6Header + 4)
      std::memcpy(key + 33, ip + kIPv6Header, 4);
  } else if (len >= kMacPair) {
    std::memcpy(key, b, kMacPair);
    key_len = kMacPair;
  }
  return rte_hash_crc(key, key_len, 0);
}

}  // namespace fulcrum
