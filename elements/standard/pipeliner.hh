// Pipeliner — a stage boundary of a pipelined placement (FastClick's Pipeliner): packets cross
// from the worker of the stage before to a worker of the stage after over a ring.
//
// Ports:     input 0: any packet. output 0: the same packet, on a worker of the next stage.
// Placement: which workers are on each side comes from the run's placement
//            (`fulcrum run --placement cut=NAME,cores=N0+N1`, docs/placement.md): naming this
//            element in a cut makes it a boundary; in a cloned run (the default) it passes
//            packets through on the worker that holds them. `--placement cut=ELEMENT` puts one
//            on every edge into ELEMENT itself ("ELEMENT/ring", "ELEMENT/ring2", ...).
// Uses:      flow_hash (a hybrid: when the next stage has several workers, the flow hash picks
//            the ring, so every packet of a flow goes to the same worker and a flow keeps its
//            order; 0 means none: a hash of the IPv4/IPv6 addresses, protocol and TCP/UDP/SCTP
//            ports, of the MAC addresses for other frames, is computed, not stored).
// Sets:      nothing: annotations live in the mbuf and cross with it unchanged.
// Counters:  enqueued (packets put into rings), back_pressure (enqueues that found a ring full:
//            the producer kept the packets and retried, nothing is dropped), dequeued (packets
//            taken from rings); per ring in the run report's "rings".
// Offload:   none.
//
// One single-producer / single-consumer rte_ring per (producer worker, consumer worker),
// runtime/stages.hh. The producer enqueues whole batches (bulk, the part that fits, then waits
// for the rest, beating the watchdog's heartbeat); the consumer dequeues up to a batch per call
// through the graph's deferring path (Element::defers), and the packets continue from output 0
// as if process_batch had just returned them. held() counts what the consumer's rings hold, so
// the end of a run drains them.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/element.hh"
#include "core/flow_hash.hh"
#include "core/registry.hh"
#include "runtime/stages.hh"

namespace fulcrum {

class Pipeliner final : public ElementBase<Pipeliner> {
 public:
  static constexpr ElementTraits kTraits{"Pipeliner", 1, 1, {}};

  Status configure(Args& args) override { return args.finish(); }
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

  void process_batch(PacketBatch& batch) override {
    if (out_.empty()) {
      batch.for_each([&](uint32_t i, Packet*) { batch.set_result(i, Verdict::out(0)); });
      return;
    }
    if (out_.size() == 1) {
      uint32_t n = 0;
      batch.for_each([&](uint32_t i, Packet* p) {
        scratch_[0][n++] = p;
        batch.exclude(i);
      });
      enqueue(*out_[0], scratch_[0].data(), n);
      return;
    }
    std::array<uint32_t, kMaxConsumers> n{};
    const auto consumers = static_cast<uint64_t>(out_.size());
    batch.for_each([&](uint32_t i, Packet* p) {
      const auto c = static_cast<size_t>((uint64_t{flow_hash(p)} * consumers) >> 32);
      scratch_[c][n[c]++] = p;
      batch.exclude(i);
    });
    for (size_t c = 0; c < out_.size(); ++c)
      if (n[c] > 0) enqueue(*out_[c], scratch_[c].data(), n[c]);
  }

  bool defers() const override { return true; }
  void poll_deferred(uint64_t now_ns, PacketBatch& out) override;
  uint64_t held() const override;

  // The most workers a hybrid stage may have.
  static constexpr size_t kMaxConsumers = 64;
  // Batches handed on per worker loop (one now_ns): the loop still transmits, beats and answers
  // between them while the stage before keeps the rings full.
  static constexpr unsigned kBatchesPerPoll = 4;

 private:
  // Puts n packets into `r` in order; waits (back-pressure) while it is full.
  void enqueue(StageRing& r, Packet** pkts, uint32_t n);

  std::shared_ptr<const StageLinks> links_;  // keeps the rings alive
  std::vector<StageRing*> out_;              // producer: one ring per consumer worker
  std::vector<StageRing*> in_;               // consumer: one ring per producer worker
  std::vector<std::array<Packet*, kMaxBatch>> scratch_;
  uint32_t burst_ = kDefaultBatch;
  size_t next_in_ = 0;
  uint64_t poll_ns_ = 0;
  unsigned polled_ = 0;
  LiveCounter enqueued_, dequeued_, back_pressure_;
};

FULCRUM_REGISTER_ELEMENT(Pipeliner);

}  // namespace fulcrum
