// Counter — counts the packets and bytes that pass through.
//
// Ports:     input 0: any packet. output 0: the same packet, unchanged.
// Uses:      nothing.  Sets: nothing.
// Counters:  count (packets), bytes (frame lengths, Ethernet header included, no FCS).
// Offload:   none.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"

namespace fulcrum {

// Named CounterElement because fulcrum::Counter is the counter record of Element::counters().
class CounterElement final : public PacketElement<CounterElement> {
 public:
  static constexpr ElementTraits kTraits{"Counter", 1, 1, {}};

  Status configure(Args& args) override { return args.finish(); }
  void counters(std::vector<Counter>& out) const override;

  Verdict process(Packet* p) {
    add(count_, 1);
    add(bytes_, rte_pktmbuf_pkt_len(p));
    return Verdict::out(0);
  }

 private:
  // One writer (the worker running this replica); relaxed atomics so that a control thread may
  // read the counters while the worker runs. On x86 this is a plain load and store.
  static void add(std::atomic<uint64_t>& c, uint64_t n) {
    c.store(c.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }

  std::atomic<uint64_t> count_{0};
  std::atomic<uint64_t> bytes_{0};
};

FULCRUM_REGISTER_ELEMENT(CounterElement);

}  // namespace fulcrum
