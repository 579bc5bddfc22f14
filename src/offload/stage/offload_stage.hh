// OffloadStage: what the framework does for every offloadable element (NBA §3.3), compiled once.
// The per-batch decision comes from a balancer upstream (CPUOnly, DeviceOnly, FixedFraction: the
// batch annotation's device); the element supplies data (OffloadSpec) and hooks (Offloadable).
//
// Device path: packets are gathered into the open task of their device (TaskPool), which
// aggregates up to AGGREGATE batches and is handed to the device thread when full or FLUSH_US
// after it opened. The packets are held (taken out of their batch) until the task comes back and
// its verdicts are applied; they leave in the order their tasks were opened (ReleaseQueue). A
// task that failed is re-run by the CPU function: nothing is lost. A task not back
// TASK_TIMEOUT_MS after it was submitted counts as a device gone silent: the device is marked
// down and the packets re-run on the CPU (the buffers are reused only once the device thread
// hands the task back). When all of a device's task buffers are in flight the worker waits for
// one (back-pressure: the device sets the pace of the batches given to it). AFFINITY keeps each
// flow on one processor (FlowAffinity) and in order: a packet of a flow with packets held, which
// no device can take (down, silent, or its gather refuses the packet), waits behind them in the
// release queue and runs on the CPU at its turn, through a device failure too.
//
// Chaining (datablock reuse): the graph pass in chaining.cc hands a stage the stages after it
// whose region datablock has the same name (chain()); its tasks then also carry their items and
// results and run their kernels right after its own, on the same device buffers. A chained
// stage's gather is called with the head's (so it must not depend on what the head's kernel
// writes; its region must be the same, or the packet stays on the CPU for the whole chain), its
// apply after the head's, and it passes the packets with those verdicts (BatchAnno::chained).
// Its items are input 2 + s and its results output s for the s-th stage. The head's `fuse` hook
// may replace the two launches by one. CHAIN false and FUSE false turn either off.
//
// Keys it reads (configure, documented there and by `fulcrum elements NAME`): AGGREGATE,
// FLUSH_US, AFFINITY, TASK_TIMEOUT_MS, CHAIN, FUSE and, with a whole-packet datablock, TASK_BYTES.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/args.hh"
#include "core/element.hh"
#include "offload/service.hh"
#include "offload/stage/flow_affinity.hh"
#include "offload/stage/offload_spec.hh"
#include "offload/stage/release_queue.hh"
#include "offload/stage/task_pool.hh"

namespace fulcrum::offload {

class OffloadStage {
 public:
  static constexpr uint32_t kDefaultFlushUs = 100;
  static constexpr uint32_t kTasksPerDevice = 8;
  static constexpr uint32_t kDefaultTaskBytes = 2u << 20;
  static constexpr uint32_t kMaxAggregate = 256;
  static constexpr size_t kMaxStages = 8;

  OffloadStage(Element& element, Offloadable& hooks, const OffloadSpec& spec)
      : element_(element), hooks_(hooks), spec_(spec) {}
  // Task buffers still with a device thread (abandoned after a timeout) must outlive it: waits
  // for them, and if the device stays silent, leaks them rather than free memory it may write.
  // The element's hooks are not called (it is gone).
  ~OffloadStage();
  OffloadStage(const OffloadStage&) = delete;
  OffloadStage& operator=(const OffloadStage&) = delete;

  Status configure(Args& args);
  Status initialize(const InitContext& ctx);

  void process_batch(PacketBatch& batch);
  void poll_deferred(uint64_t now_ns, PacketBatch& out);
  uint64_t held() const { return held_; }
  void counters(std::vector<Counter>& out) const;

  const OffloadSpec& spec() const { return spec_; }
  const OffloadService& service() const { return *service_; }
  // The chaining pass: `next` (whose region has this stage's name) joins this stage's tasks;
  // false when it cannot (already chained, too many stages, its kernel missing on a device).
  Result<bool> chain(OffloadStage& next);
  // After the chaining pass, on a stage that is not a follower: each device it uses runs its
  // tasks' kernels once with nothing to do (TaskExecutor::warm), so a driver that compiles at
  // the first launch (PoCL: seconds on a cold cache, the worker held behind it) does it before
  // traffic. A failure is reported and left to the tasks' own fallback.
  void warm();

 private:
  static uint64_t now_ns();
  bool region_written() const {
    return spec_.whole_packet && (spec_.region.write || hooks_.grows());
  }

  HeldTask* open_task(size_t d, uint32_t n);
  bool gather_one(Packet* p, uint8_t* item, PacketRegion& region);
  bool take(PacketBatch& batch, uint32_t i, Packet* p, size_t d, uint32_t left,
            int32_t bucket = -1);
  void move_items(TaskBuffers& from, TaskBuffers& to, size_t k);
  void run_cpu(PacketBatch& batch, bool count);
  void follow_flows(PacketBatch& batch);
  void hold_for_cpu(PacketBatch& batch, uint32_t i, Packet* p, uint16_t bucket, int32_t device);
  void seal_device_tasks();
  void wait_behind_cpu_entry();
  void submit(size_t d);
  uint32_t collect(size_t d);
  void complete(TaskBuffers& t);
  uint32_t apply_completed();
  void apply_results(const TaskBuffers& t, HeldTask& h);
  void pass_chained(PacketBatch& batch);
  bool chained_verdict(size_t stage, uint32_t slot, const Packet* p, Verdict& v) const;
  void run_on_cpu(HeldTask& h);
  void abandon(HeldTask& h);
  void abandon_if_timed_out(HeldTask& h, uint64_t now);
  void emit(PacketBatch& out);

  Element& element_;
  Offloadable& hooks_;
  const OffloadSpec& spec_;
  std::shared_ptr<const OffloadService> service_;
  std::vector<DevicePool> devices_;
  ReleaseQueue queue_;
  FlowAffinity flows_;
  HeldTask* cpu_open_ = nullptr;  // the queue's open on_cpu entry (no device task opened since)
  uint32_t aggregate_ = kDefaultAggregateBatches;
  uint32_t flush_us_ = kDefaultFlushUs;
  uint64_t flush_ns_ = 0;
  uint32_t timeout_ms_ = default_task_timeout_ms();
  uint64_t timeout_ns_ = 0;
  bool affinity_ = false;
  bool chain_enabled_ = true, fuse_enabled_ = true;
  uint32_t task_bytes_ = kDefaultTaskBytes;
  bool writes_ = false;  // some stage rewrites the packet regions
  std::vector<std::vector<TaskArg>> device_args_;
  std::vector<OffloadStage*> followers_;  // the stages this one chained, in order
  const OffloadStage* head_ = nullptr;    // the stage that chained this one
  size_t stage_ = 0;
  std::array<Packet*, kMaxBatch> emit_pkts_{};  // the last chained batch handed on
  std::vector<Verdict> emit_verdicts_;          // and its stage verdicts, f per packet
  uint32_t emit_count_ = 0;
  uint64_t chained_packets_ = 0;
  uint64_t held_ = 0;
  uint64_t cpu_batches_ = 0, device_batches_ = 0, device_packets_ = 0, tasks_ = 0,
           tasks_failed_ = 0, no_device_batches_ = 0, affinity_packets_ = 0, waits_ = 0,
           tasks_timed_out_ = 0, affinity_cpu_packets_ = 0;
};

}  // namespace fulcrum::offload
