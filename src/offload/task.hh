// OffloadTask: one unit of device work, made of many aggregated batches (NBA §3.3: batches are
// gathered just before offload, 32 by default, so a launch covers thousands of packets).
//
// A task names its launches (one kernel each, run back to back on the same device buffers: a
// chain of offloadable elements shares its datablocks without copies in between), its host-side
// data (inputs copied to the device before the first launch, outputs copied back after the last,
// `items * item_bytes` bytes each, or `bytes` for variable-size data such as whole packets, so
// only the filled part moves), and who asked for it (`callback`, `context`). A worker fills
// it batch by batch (add_batch) until full(), hands it over (DeviceThread or TaskExecutor),
// and gets it back with status kOk (outputs valid) or kFailed (the device failed: run the
// batches on the CPU; nothing is lost).
//
// TaskExecutor runs tasks on one queue of one device with its own device-side scratch
// buffers: start() enqueues copy in, launch, copy out and a completion mark; poll() asks
// without blocking. run_task_sync() is the synchronous path, for callers without a device
// thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hh"
#include "offload/device.hh"

namespace fulcrum::offload {

inline constexpr uint32_t kDefaultAggregateBatches = 32;

// The data layout of an offloadable element's tasks (OffloadElement): the kernels get these
// buffers as TaskArg::input / TaskArg::output.
inline constexpr uint32_t kItemsInput = 0;    // per-packet fixed items of the element
inline constexpr uint32_t kBytesInput = 1;    // packed packet regions (whole-packet datablock)
inline constexpr uint32_t kRegionsInput = 2;  // per packet: Region{offset into kBytesInput, length}
inline constexpr uint32_t kResultsOutput = 0;  // per-packet fixed results of the element

// Where a region lies within a task's packed bytes: the kRegionsInput items the kernels read.
struct Region {
  uint32_t offset = 0;
  uint32_t length = 0;
};

// A packet's region as an element's gather names it: offset and length within the packet's
// data, and `grow`, the bytes the kernels append to it (NBA's size delta): the region must then
// end at the packet's end, the task reserves the room after it, and the packet grows by `grow`
// bytes that are copied back from the device (a packet without that much tailroom stays on the
// CPU).
struct PacketRegion {
  uint32_t offset = 0;
  uint32_t length = 0;
  uint32_t grow = 0;
};

// A whole-packet datablock (NBA Table 2, whole_pkt): a region of each packet's bytes goes to the
// device, each copy starting at a multiple of `align` in the task; with `write` the kernels
// rewrite it in place and it is copied back into the packet. Regions longer than `max_bytes`
// stay on the CPU.
struct WholePacketBlock {
  bool write = false;
  uint32_t align = 16;
  uint32_t max_bytes = 2048;
};

enum class TaskStatus : uint8_t { kPending, kOk, kFailed };

// The clock of task timings (steady, nanoseconds), the same for workers and device threads.
inline uint64_t task_clock_ns() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

// Host data of a task: `item_bytes` per work item, or when item_bytes is 0 `bytes` in all
// (set per task: packed packet bytes). An output with `in_place` >= 0 has no device buffer of its
// own: it is copied back from the device copy of that input, which the kernels rewrote.
struct TaskData {
  HostBuffer* host = nullptr;
  uint32_t item_bytes = 0;
  uint32_t bytes = 0;
  int32_t in_place = -1;

  size_t size(uint32_t items) const { return item_bytes != 0 ? size_t{items} * item_bytes : bytes; }
};

// A kernel argument as the task describes it; the executor turns it into a KernelArg.
struct TaskArg {
  enum class Kind : uint8_t {
    kInput,     // the device copy of inputs[index]
    kOutput,    // the device buffer that becomes outputs[index]
    kResident,  // a buffer already on the task's device (tables uploaded once)
    kU32,       // a constant
    kItems,     // the task's item count at launch
  };
  Kind kind;
  uint32_t index = 0;
  const DeviceBuffer* buffer = nullptr;
  uint32_t value = 0;

  static TaskArg input(uint32_t i) { return {Kind::kInput, i, nullptr, 0}; }
  static TaskArg output(uint32_t i) { return {Kind::kOutput, i, nullptr, 0}; }
  static TaskArg resident(const DeviceBuffer& b) { return {Kind::kResident, 0, &b, 0}; }
  static TaskArg u32(uint32_t v) { return {Kind::kU32, 0, nullptr, v}; }
  static TaskArg items() { return {Kind::kItems, 0, nullptr, 0}; }
};

// One kernel launch over the task's items.
struct TaskLaunch {
  std::string kernel;
  std::vector<TaskArg> args;
  uint32_t group = 0;  // work-group / block size, 0 for the backend's default
};

struct OffloadTask {
  std::vector<TaskLaunch> launches;
  std::vector<TaskData> inputs;
  std::vector<TaskData> outputs;

  // Aggregation: items filled so far, in how many batches; at most `capacity` items and
  // `max_batches` batches.
  uint32_t items = 0;
  uint32_t batches = 0;
  uint32_t capacity = 0;
  uint32_t max_batches = kDefaultAggregateBatches;

  // Who asked: an element callback id and its data, for the worker that gets the task back.
  uint32_t callback = 0;
  void* context = nullptr;

  TaskStatus status = TaskStatus::kPending;
  std::string error;     // why it failed
  uint32_t channel = 0;  // set by Channel::submit
  // Task timings (task_clock_ns): submitted by the worker, started on the device and seen
  // finished by the device thread; with the worker's collect time they give the queue wait, the
  // device time and the return wait.
  uint64_t submitted_ns = 0;
  uint64_t started_ns = 0;
  uint64_t finished_ns = 0;

  // Room for another batch of up to `batch_items` items?
  bool fits(uint32_t batch_items) const {
    return batches < max_batches && items + batch_items <= capacity;
  }
  void add_batch(uint32_t batch_items) {
    items += batch_items;
    ++batches;
  }
  bool full(uint32_t next_batch_items) const { return !fits(next_batch_items); }
  // Empty again, ready to be refilled.
  void reset() {
    items = batches = 0;
    submitted_ns = started_ns = finished_ns = 0;
    status = TaskStatus::kPending;
    error.clear();
  }
};

class TaskExecutor {
 public:
  static Result<std::unique_ptr<TaskExecutor>> create(Device& device);

  // Enqueues the task (copies in, launches, copies out, mark). An error leaves the task to the
  // caller; the device should be considered failed.
  Status start(OffloadTask& task);
  // Runs each of the task's launches that takes the item count once, on one work group with a
  // count of 0 (every thread past the count returns, as in the last group of any task), and
  // waits: a driver that compiles a kernel at its first launch (PoCL: the work-group function,
  // seconds on a cold cache) does it now rather than under traffic. Nothing is copied.
  Status warm(const OffloadTask& task);
  // True when the started task has finished; an error means it failed on the device.
  Result<bool> poll() { return queue_->query(); }
  Status wait() { return queue_->wait(); }

 private:
  TaskExecutor(Device& device, std::unique_ptr<Queue> q) : device_(device), queue_(std::move(q)) {}
  Result<DeviceBuffer*> scratch(std::vector<std::unique_ptr<DeviceBuffer>>& pool, size_t i,
                                size_t bytes);
  // The device-side buffers of every input and (not in place) output for `items` items.
  Status scratch_for(const OffloadTask& task, uint32_t items);
  // The launch with the task's items, or (warm) one work group with an item count of 0.
  Status enqueue(const OffloadTask& task, const TaskLaunch& launch, bool warm = false);

  Device& device_;
  std::unique_ptr<Queue> queue_;
  std::vector<std::unique_ptr<DeviceBuffer>> in_;
  std::vector<std::unique_ptr<DeviceBuffer>> out_;
  std::vector<KernelArg> args_;
};

// Runs `task` to completion on `exec` and sets its status (and error). Returns the status.
TaskStatus run_task_sync(TaskExecutor& exec, OffloadTask& task);

}  // namespace fulcrum::offload
