#include "elements/standard/pipeliner.hh"

#include <rte_cycles.h>
#include <rte_hash_crc.h>
#include <rte_pause.h>
#include <rte_prefetch.h>
#include <rte_ring.h>

#include <cstring>

#include "core/heartbeat.hh"
#include "core/shared_storage.hh"

namespace fulcrum {
namespace {

// The packets of a dequeued batch were last written on the producer's core: their mbuf lines and
// their frames' first lines must cross over. The stage's first element reads them one packet
// after another, each read waiting for the line before it; asking for all of them first lets the
// transfers overlap. The frame's address is in the mbuf's first line, so that pass waits for
// those lines, but each of its loads is independent of the next one.
void prefetch_lines(Packet* const* pkts, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) {
    rte_prefetch0(pkts[i]);
    rte_prefetch0(reinterpret_cast<const char*>(pkts[i]) + RTE_CACHE_LINE_SIZE);
  }
  for (uint32_t i = 0; i < n; ++i) rte_prefetch0(rte_pktmbuf_mtod(pkts[i], const void*));
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
    const uint64_t t0 = rte_rdtsc();
    const unsigned got =
        rte_ring_sc_dequeue_burst(r.ring, reinterpret_cast<void**>(dst + n), burst_ - n, nullptr);
    if (got == 0) continue;
    prefetch_lines(dst + n, got);
    r.dequeued.add(got);
    r.dequeue_cycles.add(rte_rdtsc() - t0);
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

}  // namespace fulcrum
