// TimedSource — a schedulable source: emits a burst of UDP/IPv4 frames every interval.
//
// Ports:     no input. output 0: the frames it creates.
// Uses:      nothing.  Sets: in_port = none, out_port (PORT), timestamp_ns (creation time).
// Counters:  "created" frames made.
// Offload:   none.
// Runs on every worker (each replica has its own timer); the worker calls it between RX polls.
#pragma once

#include <atomic>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

class TimedSource final : public ElementBase<TimedSource> {
 public:
  static constexpr ElementTraits kTraits{"TimedSource", 0, 1, {}};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch&) override {}
  void counters(std::vector<Counter>& out) const override {
    out.push_back({"created", created_.load(std::memory_order_relaxed)});
  }

  bool schedulable() const override { return true; }
  uint64_t next_task_ns() const override { return next_ns_; }
  void run_task(uint64_t now_ns, PacketBatch& out) override;

 private:
  uint64_t interval_ns_ = 0;
  uint32_t burst_ = 1;
  uint64_t limit_ = 0;
  uint32_t size_ = 64;
  uint32_t dst_ = 0;
  uint16_t port_ = kNoPort;
  uint64_t next_ns_ = 0;
  std::atomic<uint64_t> created_{0};
  rte_mempool* pool_ = nullptr;
  std::vector<uint8_t> frame_;
};

FULCRUM_REGISTER_ELEMENT(TimedSource);

}  // namespace fulcrum
