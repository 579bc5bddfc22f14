// Task buffers: the pinned host buffers of an offloadable element's device tasks, allocated once
// at initialisation (kTasksPerDevice per device) and reused task after task; back-pressure is a
// worker waiting for one of them to come back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/result.hh"
#include "offload/device.hh"
#include "offload/device_thread.hh"
#include "offload/stage/offload_spec.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

struct HeldTask;

// A task's pinned buffers.
struct TaskBuffers {
  OffloadTask task;
  std::unique_ptr<HostBuffer> in;       // read items
  std::unique_ptr<HostBuffer> out;      // write items
  std::unique_ptr<HostBuffer> bytes;    // packed regions (whole-packet datablock)
  std::unique_ptr<HostBuffer> regions;  // Region per packet (whole-packet datablock)
  std::vector<std::unique_ptr<HostBuffer>> stage_in, stage_out;  // chained stages
  HeldTask* held = nullptr;  // the packets of the task in flight; nullptr once abandoned
  size_t device = 0;
  uint32_t item_bytes = 0;  // the head's read item

  uint8_t* in_item(size_t k) const { return in ? in->as<uint8_t>() + k * item_bytes : nullptr; }
  // Chained stage s's (1..) read item for packet k.
  uint8_t* stage_item(size_t s, size_t k) const {
    const uint32_t n = task.inputs[kRegionsInput + s].item_bytes;
    return n != 0 ? stage_in[s - 1]->as<uint8_t>() + k * n : nullptr;
  }
};

// One element's tasks on one device.
struct DevicePool {
  Channel* channel = nullptr;
  std::vector<std::unique_ptr<TaskBuffers>> tasks;
  std::vector<TaskBuffers*> free;
  HeldTask* open = nullptr;
  bool usable = true;  // the element's kernel built on the device

  // Submitted and not handed back yet.
  size_t in_flight() const { return tasks.size() - free.size() - (open != nullptr ? 1 : 0); }
};

// A host buffer of `bytes` on `dev` (none for 0 bytes).
Result<std::unique_ptr<HostBuffer>> alloc_host(Device& dev, size_t bytes);

// A task for `spec` holding `aggregate` batches (and `task_bytes` of packed regions), running
// `kernel` with `args`; `region_written`: its regions are copied back.
Result<std::unique_ptr<TaskBuffers>> make_task(Device& dev, size_t device, const OffloadSpec& spec,
                                               uint32_t aggregate, uint32_t task_bytes,
                                               bool region_written,
                                               const std::vector<TaskArg>& args);

// Adds chained stage s's (1..) items and results to `t`; `write_back`: the regions are now
// copied back (the first stage that rewrites them).
Status add_stage_buffers(Device& dev, TaskBuffers& t, size_t s, uint32_t in_bytes,
                         uint32_t out_bytes, bool write_back);

}  // namespace fulcrum::offload
