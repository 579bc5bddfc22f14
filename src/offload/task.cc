#include "offload/task.hh"

#include <algorithm>
#include <bit>

namespace fulcrum::offload {
namespace {

// Scratch buffers grow to a power of two so a task slightly larger than the last one does
// not reallocate.
constexpr size_t kMinScratchBytes = 4096;

}  // namespace

Result<std::unique_ptr<TaskExecutor>> TaskExecutor::create(Device& device) {
  Result<std::unique_ptr<Queue>> q = device.create_queue();
  if (!q) return make_error(q.error());
  return std::unique_ptr<TaskExecutor>(new TaskExecutor(device, std::move(q.value())));
}

Result<DeviceBuffer*> TaskExecutor::scratch(std::vector<std::unique_ptr<DeviceBuffer>>& pool,
                                            size_t i, size_t bytes) {
  if (pool.size() <= i) pool.resize(i + 1);
  if (pool[i] == nullptr || pool[i]->size() < bytes) {
    pool[i].reset();
    Result<std::unique_ptr<DeviceBuffer>> b =
        device_.alloc(std::bit_ceil(std::max(bytes, kMinScratchBytes)));
    if (!b) return make_error(b.error());
    pool[i] = std::move(b.value());
  }
  return pool[i].get();
}

Status TaskExecutor::start(OffloadTask& task) {
  Result<const Kernel*> kernel = device_.kernel(task.kernel);
  if (!kernel) return make_error(kernel.error());
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const TaskData& d = task.inputs[i];
    const size_t bytes = size_t{task.items} * d.item_bytes;
    Result<DeviceBuffer*> buf = scratch(in_, i, bytes);
    if (!buf) return make_error(buf.error());
    if (bytes == 0) continue;
    if (Status s = queue_->copy_to_device(*buf.value(), 0, *d.host, 0, bytes); !s) return s;
  }
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    Result<DeviceBuffer*> buf = scratch(out_, i, size_t{task.items} * task.outputs[i].item_bytes);
    if (!buf) return make_error(buf.error());
  }
  args_.clear();
  for (const TaskArg& a : task.args) {
    switch (a.kind) {
      case TaskArg::Kind::kInput:
        if (a.index >= task.inputs.size()) return make_error("task argument: no such input");
        args_.push_back(KernelArg::of(*in_[a.index]));
        break;
      case TaskArg::Kind::kOutput:
        if (a.index >= task.outputs.size()) return make_error("task argument: no such output");
        args_.push_back(KernelArg::of(*out_[a.index]));
        break;
      case TaskArg::Kind::kResident:
        args_.push_back(KernelArg::of(*a.buffer));
        break;
      case TaskArg::Kind::kU32:
        args_.push_back(KernelArg::of(a.value));
        break;
      case TaskArg::Kind::kItems:
        args_.push_back(KernelArg::of(task.items));
        break;
    }
  }
  if (Status s = queue_->launch(*kernel.value(), {task.items, task.group}, args_); !s) return s;
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    const TaskData& d = task.outputs[i];
    const size_t bytes = size_t{task.items} * d.item_bytes;
    if (bytes == 0) continue;
    if (Status s = queue_->copy_to_host(*d.host, 0, *out_[i], 0, bytes); !s) return s;
  }
  return queue_->record();
}

TaskStatus run_task_sync(TaskExecutor& exec, OffloadTask& task) {
  Status s = exec.start(task);
  if (s) s = exec.wait();
  task.status = s ? TaskStatus::kOk : TaskStatus::kFailed;
  if (!s) task.error = s.error();
  return task.status;
}

}  // namespace fulcrum::offload
