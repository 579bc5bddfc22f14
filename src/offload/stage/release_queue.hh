// The release queue: the packets an offloadable element took for its device tasks, in the order
// the tasks were opened. Packets leave from the front only, once their task is back and its
// verdicts are applied, so the device path never reorders (whatever order devices finish in).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "core/batch.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

struct TaskBuffers;

// Packets taken for one task, in order; their verdicts once the task is back.
struct HeldTask {
  std::vector<Packet*> pkts;
  std::vector<uint16_t> buckets;  // flow bucket per packet (AFFINITY only)
  std::vector<PacketRegion> src;  // region within each packet (whole-packet datablock)
  std::vector<Verdict> verdicts;
  std::vector<Verdict> stage_verdicts;  // per packet, per chained stage
  TaskBuffers* task = nullptr;          // until the results are applied
  size_t device = 0;
  size_t emitted = 0;
  uint32_t bytes = 0;         // packed region bytes so far
  uint64_t opened_ns = 0;     // first packet in (for FLUSH_US)
  uint64_t submitted_ns = 0;  // handed to the device thread
  bool completed = false;     // the task came back (not yet applied)
  bool done = false;          // verdicts set, ready to leave
  bool chained = false;       // stage_verdicts are valid
  // No device task: packets that follow their flows' held packets (AFFINITY) where no device
  // can take them; the CPU function runs on them at their turn in the queue.
  bool on_cpu = false;
};

class ReleaseQueue {
 public:
  // A cleared HeldTask appended at the back.
  HeldTask& open();
  bool empty() const { return fifo_.empty(); }
  HeldTask& front() { return *fifo_.front(); }
  // The front task has left: its HeldTask is reused.
  void pop();
  auto begin() { return fifo_.begin(); }
  auto end() { return fifo_.end(); }

 private:
  std::deque<HeldTask*> fifo_;
  std::vector<std::unique_ptr<HeldTask>> owned_;
  std::vector<HeldTask*> spare_;
};

}  // namespace fulcrum::offload
