// Tee — sends each packet out of output 0 and a copy of it out of every other output.
//
// Ports:     input 0: any packet. output 0: the packet itself. outputs 1..N-1: one copy each,
//            a new buffer from the worker's pool with the bytes and annotations of the
//            original, so that what one branch changes the others do not see.
// Uses:      nothing.  Sets: nothing (a copy carries the original's annotations).
// Counters:  copies (copies made), no_buffer (copies not made: the worker's pool was empty or
//            the frame is longer than its buffers; the original leaves all the same).
// Offload:   none.
//
// How copies enter the graph: an element leaves in its batch at most the packets it was given,
// so Tee uses the graph's deferring path (Element::defers). process_batch makes the copies and
// holds them; the worker polls deferring elements in the same pass of its loop, before it
// transmits, and the copies leave by their outputs then, right after the batch they were made
// from. They are handed over with PacketBatch::push_created: the graph counts them in
// Pipeline::created ("packets_created"), so in + created = out + dropped still holds.
#pragma once

#include <cstdint>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class Tee final : public ElementBase<Tee> {
 public:
  static constexpr ElementTraits kTraits{"Tee", 1, kConfiguredOutputs, {}};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

  void process_batch(PacketBatch& batch) override {
    batch.for_each([&](uint32_t i, Packet* p) {
      batch.set_result(i, Verdict::out(0));
      for (int o = 1; o < noutputs(); ++o) {
        if (Packet* c = copy(p)) {
          held_.push_back({c, o});
          ++copies_;
        } else {
          ++no_buffer_;
        }
      }
    });
  }

  bool defers() const override { return true; }
  uint64_t held() const override { return held_.size() - next_; }
  void poll_deferred(uint64_t, PacketBatch& out) override {
    for (; next_ < held_.size() && !out.full(); ++next_) {
      out.push_created(held_[next_].packet);
      out.set_result(out.count() - 1, Verdict::out(held_[next_].output));
    }
    if (next_ == held_.size()) {
      held_.clear();
      next_ = 0;
    }
  }

 private:
  struct Copy {
    Packet* packet;
    int output;
  };
  // A copy of `p` from pool_ (one segment), or nullptr.
  Packet* copy(Packet* p) const;

  rte_mempool* pool_ = nullptr;
  std::vector<Copy> held_;  // copies made, in order; [next_, end) not handed over yet
  size_t next_ = 0;
  uint64_t copies_ = 0;
  uint64_t no_buffer_ = 0;
};

FULCRUM_REGISTER_ELEMENT(Tee);

}  // namespace fulcrum
