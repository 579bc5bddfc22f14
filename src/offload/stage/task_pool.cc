#include "offload/stage/task_pool.hh"

#include <string>

namespace fulcrum::offload {

Result<std::unique_ptr<HostBuffer>> alloc_host(Device& dev, size_t bytes) {
  if (bytes == 0) return std::unique_ptr<HostBuffer>();
  return dev.alloc_host(bytes);
}

Result<std::unique_ptr<TaskBuffers>> make_task(Device& dev, size_t device, const OffloadSpec& spec,
                                               uint32_t aggregate, uint32_t task_bytes,
                                               bool region_written,
                                               const std::vector<TaskArg>& args) {
  auto t = std::make_unique<TaskBuffers>();
  t->device = device;
  t->item_bytes = spec.read_bytes;
  const uint32_t capacity = aggregate * kMaxBatch;
  auto in = alloc_host(dev, size_t{capacity} * spec.read_bytes);
  if (!in) return make_error(in.error());
  auto out = alloc_host(dev, size_t{capacity} * spec.write_bytes);
  if (!out) return make_error(out.error());
  t->in = std::move(in.value());
  t->out = std::move(out.value());
  OffloadTask& task = t->task;
  task.inputs = {{t->in.get(), spec.read_bytes}, {}, {}};
  task.outputs = {{t->out.get(), spec.write_bytes}};
  if (spec.whole_packet) {
    auto bytes = alloc_host(dev, task_bytes);
    if (!bytes) return make_error(bytes.error());
    auto regions = alloc_host(dev, size_t{capacity} * sizeof(Region));
    if (!regions) return make_error(regions.error());
    t->bytes = std::move(bytes.value());
    t->regions = std::move(regions.value());
    task.inputs[kBytesInput] = {t->bytes.get(), 0};
    task.inputs[kRegionsInput] = {t->regions.get(), sizeof(Region)};
    if (region_written)
      task.outputs.push_back({t->bytes.get(), 0, 0, static_cast<int32_t>(kBytesInput)});
  }
  task.launches = {{std::string(spec.kernel), args}};
  task.capacity = capacity;
  task.max_batches = aggregate;
  task.context = t.get();
  return t;
}

Status add_stage_buffers(Device& dev, TaskBuffers& t, size_t s, uint32_t in_bytes,
                         uint32_t out_bytes, bool write_back) {
  OffloadTask& task = t.task;
  auto in = alloc_host(dev, task.capacity * in_bytes);
  if (!in) return make_error(dev.label() + ": " + in.error());
  auto out = alloc_host(dev, task.capacity * out_bytes);
  if (!out) return make_error(dev.label() + ": " + out.error());
  task.inputs.push_back({in.value().get(), in_bytes});
  task.outputs.insert(task.outputs.begin() + static_cast<std::ptrdiff_t>(s),
                      {out.value().get(), out_bytes});
  if (write_back) task.outputs.push_back({t.bytes.get(), 0, 0, static_cast<int32_t>(kBytesInput)});
  t.stage_in.push_back(std::move(in.value()));
  t.stage_out.push_back(std::move(out.value()));
  return {};
}

}  // namespace fulcrum::offload
