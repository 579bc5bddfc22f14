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

Status TaskExecutor::scratch_for(const OffloadTask& task, uint32_t items) {
  for (size_t i = 0; i < task.inputs.size(); ++i)
    if (Result<DeviceBuffer*> b = scratch(in_, i, task.inputs[i].size(items)); !b)
      return make_error(b.error());
  out_.resize(std::max(out_.size(), task.outputs.size()));
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    const TaskData& d = task.outputs[i];
    if (d.in_place >= 0) {
      if (static_cast<size_t>(d.in_place) >= task.inputs.size())
        return make_error("task output: in place of no such input");
      continue;
    }
    if (Result<DeviceBuffer*> b = scratch(out_, i, d.size(items)); !b) return make_error(b.error());
  }
  return {};
}

Status TaskExecutor::start(OffloadTask& task) {
  if (Status s = scratch_for(task, task.items); !s) return s;
  for (size_t i = 0; i < task.inputs.size(); ++i) {
    const TaskData& d = task.inputs[i];
    const size_t bytes = d.size(task.items);
    if (bytes == 0) continue;
    if (Status s = queue_->copy_to_device(*in_[i], 0, *d.host, 0, bytes); !s) return s;
  }
  for (const TaskLaunch& launch : task.launches)
    if (Status s = enqueue(task, launch); !s) return s;
  for (size_t i = 0; i < task.outputs.size(); ++i) {
    const TaskData& d = task.outputs[i];
    const size_t bytes = d.size(task.items);
    if (bytes == 0) continue;
    const DeviceBuffer& src = d.in_place >= 0 ? *in_[static_cast<size_t>(d.in_place)] : *out_[i];
    if (Status s = queue_->copy_to_host(*d.host, 0, src, 0, bytes); !s) return s;
  }
  return queue_->record();
}

Status TaskExecutor::warm(const OffloadTask& task) {
  if (Status s = scratch_for(task, 0); !s) return s;
  bool launched = false;
  for (const TaskLaunch& launch : task.launches) {
    if (std::none_of(launch.args.begin(), launch.args.end(),
                     [](const TaskArg& a) { return a.kind == TaskArg::Kind::kItems; }))
      continue;  // no count to make it do nothing
    if (Status s = enqueue(task, launch, true); !s) return s;
    launched = true;
  }
  if (!launched) return {};
  if (Status s = queue_->record(); !s) return s;
  return queue_->wait();
}

Status TaskExecutor::enqueue(const OffloadTask& task, const TaskLaunch& launch, bool warm) {
  Result<const Kernel*> kernel = device_.kernel(launch.kernel);
  if (!kernel) return make_error(kernel.error());
  args_.clear();
  for (const TaskArg& a : launch.args) {
    switch (a.kind) {
      case TaskArg::Kind::kInput:
        if (a.index >= task.inputs.size()) return make_error("task argument: no such input");
        args_.push_back(KernelArg::of(*in_[a.index]));
        break;
      case TaskArg::Kind::kOutput:
        if (a.index >= task.outputs.size()) return make_error("task argument: no such output");
        if (task.outputs[a.index].in_place >= 0)
          args_.push_back(KernelArg::of(*in_[static_cast<size_t>(task.outputs[a.index].in_place)]));
        else
          args_.push_back(KernelArg::of(*out_[a.index]));
        break;
      case TaskArg::Kind::kResident:
        args_.push_back(KernelArg::of(*a.buffer));
        break;
      case TaskArg::Kind::kU32:
        args_.push_back(KernelArg::of(a.value));
        break;
      case TaskArg::Kind::kItems:
        args_.push_back(KernelArg::of(warm ? 0u : task.items));
        break;
    }
  }
  return queue_->launch(*kernel.value(), {warm ? 1u : task.items, launch.group}, args_);
}

TaskStatus run_task_sync(TaskExecutor& exec, OffloadTask& task) {
  Status s = exec.start(task);
  if (s) s = exec.wait();
  task.status = s ? TaskStatus::kOk : TaskStatus::kFailed;
  if (!s) task.error = s.error();
  return task.status;
}

}  // namespace fulcrum::offload
