#include "offload/stage/offload_stage.hh"

#include <rte_cycles.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <thread>

#include "core/heartbeat.hh"

namespace fulcrum::offload {
namespace {

constexpr uint64_t kNsPerUs = 1000;
constexpr uint64_t kNsPerMs = 1000000;
constexpr uint64_t kShutdownGraceNs = 1000000000;

// A chained stage's arguments in the head's task: its items are input 2 + s, its results
// output s.
std::vector<TaskArg> remap(std::vector<TaskArg> args, size_t s) {
  for (TaskArg& a : args) {
    if (a.kind == TaskArg::Kind::kInput && a.index == kItemsInput)
      a.index = static_cast<uint32_t>(kRegionsInput + s);
    else if (a.kind == TaskArg::Kind::kOutput && a.index == kResultsOutput)
      a.index = static_cast<uint32_t>(s);
  }
  return args;
}

}  // namespace

uint64_t OffloadStage::now_ns() {
  return static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * 1e9 /
                               static_cast<double>(rte_get_tsc_hz()));
}

OffloadStage::~OffloadStage() {
  for (HeldTask* h : queue_)  // back from the device, not applied: the buffers are free
    if (h->completed && !h->done && h->task != nullptr) {
      devices_[h->device].free.push_back(h->task);
      h->task = nullptr;
    }
  for (DevicePool& ds : devices_) {
    const uint64_t give_up = now_ns() + timeout_ns_ + kShutdownGraceNs;
    while (ds.in_flight() > 0 && now_ns() < give_up) {
      OffloadTask* t = ds.channel->poll();
      if (t == nullptr) {
        std::this_thread::yield();
        continue;
      }
      ds.free.push_back(static_cast<TaskBuffers*>(t->context));
    }
    if (ds.in_flight() == 0) continue;
    for (std::unique_ptr<TaskBuffers>& t : ds.tasks)
      if (std::find(ds.free.begin(), ds.free.end(), t.get()) == ds.free.end() &&
          (ds.open == nullptr || ds.open->task != t.get()))
        static_cast<void>(t.release());
  }
}

Status OffloadStage::configure(Args& args) {
  args.key("AGGREGATE", aggregate_, "batches gathered into one device task (1..256)")
      .key("FLUSH_US", flush_us_, "a task not full this long after it opened goes anyway")
      .key("AFFINITY", affinity_,
           "keep each flow on one processor (no reordering); flows are told apart by the 12 "
           "bytes at offset 26 (IPv4 addresses and ports) or by the NIC's RSS hash")
      .key("TASK_TIMEOUT_MS", timeout_ms_,
           "a task not back this long after it went to the device: the device is marked down "
           "and its packets re-run on the CPU (FULCRUM_TASK_TIMEOUT_MS sets the default)")
      .key("CHAIN", chain_enabled_,
           "share device tasks with the offloaded elements after this one that read the same "
           "datablock (their kernels run on the same buffers)")
      .key("FUSE", fuse_enabled_,
           "with CHAIN, one kernel launch for two stages where a fused "
           "kernel exists");
  if (spec_.whole_packet)
    args.key("TASK_BYTES", task_bytes_, "bytes of packed packet regions one device task holds");
  if (Status s = args.finish(); !s) return s;
  if (aggregate_ == 0 || aggregate_ > kMaxAggregate)
    return args.error("AGGREGATE must be 1.." + std::to_string(kMaxAggregate));
  if (spec_.whole_packet && task_bytes_ < spec_.region.max_bytes)
    return args.error("TASK_BYTES must hold one region of " +
                      std::to_string(spec_.region.max_bytes) + " bytes");
  return {};
}

Status OffloadStage::initialize(const InitContext& ctx) {
  flush_ns_ = uint64_t{flush_us_} * kNsPerUs;
  timeout_ns_ = uint64_t{timeout_ms_} * kNsPerMs;
  Result<std::shared_ptr<const OffloadService>> svc = OffloadService::get(ctx.shared);
  if (!svc) return make_error(svc.error());
  service_ = svc.value();
  devices_.resize(service_->devices());
  writes_ = region_written();
  for (size_t d = 0; d < devices_.size(); ++d) {
    DevicePool& ds = devices_[d];
    Device& dev = service_->device(d);
    Result<Channel*> ch = service_->thread(d, ctx.worker).attach();
    if (!ch) return make_error(ch.error());
    ds.channel = ch.value();
    // The kernel is built now (not at the first task, which would wait for the compiler).
    // A device that cannot build it is not used by this element; the others are.
    if (Result<const Kernel*> k = dev.kernel(spec_.kernel); !k) {
      std::fprintf(stderr, "%s: %s: kernel %s unavailable, its batches run on the CPU: %s\n",
                   element_.name().c_str(), dev.label().c_str(), std::string(spec_.kernel).c_str(),
                   k.error().c_str());
      ds.usable = false;
      device_args_.emplace_back();
      continue;
    }
    Result<std::vector<TaskArg>> args = hooks_.device_args(ctx, d);
    if (!args) return make_error(dev.label() + ": " + args.error());
    device_args_.push_back(args.value());
    for (uint32_t k = 0; k < kTasksPerDevice; ++k) {
      Result<std::unique_ptr<TaskBuffers>> t =
          make_task(dev, d, spec_, aggregate_, task_bytes_, writes_, args.value());
      if (!t) return make_error(dev.label() + ": " + t.error());
      ds.free.push_back(t.value().get());
      ds.tasks.push_back(std::move(t.value()));
    }
  }
  return {};
}

void OffloadStage::counters(std::vector<Counter>& out) const {
  out.push_back({"cpu_batches", cpu_batches_});
  out.push_back({"device_batches", device_batches_});
  out.push_back({"device_packets", device_packets_});
  out.push_back({"tasks", tasks_});
  out.push_back({"tasks_failed", tasks_failed_});
  out.push_back({"no_device_batches", no_device_batches_});
  out.push_back({"affinity_packets", affinity_packets_});
  out.push_back({"affinity_cpu_packets", affinity_cpu_packets_});
  out.push_back({"waits", waits_});
  out.push_back({"tasks_timed_out", tasks_timed_out_});
  out.push_back({"chained_stages", followers_.size()});
  out.push_back({"chained_packets", chained_packets_});
}

void OffloadStage::process_batch(PacketBatch& batch) {
  if (batch.empty()) return;
  if (head_ != nullptr && batch.anno().chained == static_cast<const void*>(head_))
    return pass_chained(batch);
  const int32_t dev = batch.anno().device;
  const bool to_device = dev != kRunOnCpu && static_cast<size_t>(dev) < devices_.size() &&
                         devices_[static_cast<size_t>(dev)].usable &&
                         service_->device(static_cast<size_t>(dev)).is_up();
  if (dev != kRunOnCpu && !to_device) ++no_device_batches_;
  if (!to_device) return run_cpu(batch, true);
  const auto d = static_cast<size_t>(dev);
  if (open_task(d, batch.live()) == nullptr)  // the device went silent while this batch waited
    return run_cpu(batch, true);
  ++device_batches_;
  ++devices_[d].open->task->task.batches;
  uint32_t left = batch.live();
  batch.for_each([&](uint32_t i, Packet* p) { take(batch, i, p, d, left--); });
  DeviceStats& st = service_->stats(d);
  st.add(st.batches, 1);
  // A balancer may ask for smaller tasks (PolicyBalancer's device batch size), never larger:
  // the task buffers hold AGGREGATE batches.
  const uint32_t want = batch.anno().aggregate;
  const uint32_t limit = want != 0 ? std::min<uint32_t>(want, aggregate_) : aggregate_;
  if (devices_[d].open != nullptr && devices_[d].open->task->task.batches >= limit) submit(d);
  if (!batch.empty()) hooks_.process_cpu(batch);  // packets gather() left to the CPU
}

void OffloadStage::poll_deferred(uint64_t now, PacketBatch& out) {
  for (size_t d = 0; d < devices_.size(); ++d) {
    DevicePool& ds = devices_[d];
    if (ds.open != nullptr && !ds.open->pkts.empty() && now >= ds.open->opened_ns + flush_ns_)
      submit(d);
    collect(d);
  }
  apply_completed();
  while (!queue_.empty() && queue_.front().done && queue_.front().pkts.empty()) queue_.pop();
  if (queue_.empty()) return;
  HeldTask& front = queue_.front();
  abandon_if_timed_out(front, now);
  if (front.done) emit(out);
}

Result<bool> OffloadStage::chain(OffloadStage& next) {
  if (!chain_enabled_ || spec_.region_name.empty() || next.spec_.region_name != spec_.region_name ||
      next.spec_.whole_packet != spec_.whole_packet || followers_.size() + 1 >= kMaxStages ||
      next.head_ != nullptr || !next.followers_.empty())
    return false;
  for (size_t d = 0; d < devices_.size(); ++d)  // the chain needs the next kernel everywhere
    if (devices_[d].usable && !service_->device(d).kernel(next.spec_.kernel)) return false;
  next.head_ = this;
  next.stage_ = followers_.size() + 1;
  followers_.push_back(&next);
  const size_t s = followers_.size();
  const bool write_back = next.region_written() && !writes_;
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (!devices_[d].usable) continue;
    Device& dev = service_->device(d);
    std::vector<TaskArg> args = remap(next.device_args_[d], s);
    std::optional<TaskLaunch> fused;
    if (s == 1 && fuse_enabled_) fused = hooks_.fuse(next.element_, args);
    if (fused && !dev.kernel(fused->kernel)) fused.reset();
    for (std::unique_ptr<TaskBuffers>& t : devices_[d].tasks) {
      if (Status st = add_stage_buffers(dev, *t, s, next.spec_.read_bytes, next.spec_.write_bytes,
                                        write_back);
          !st)
        return make_error(st.error());
      if (fused)
        t->task.launches = {*fused};
      else
        t->task.launches.push_back({std::string(next.spec_.kernel), args});
    }
  }
  writes_ = writes_ || next.region_written();
  emit_verdicts_.resize(size_t{kMaxBatch} * followers_.size());
  return true;
}

void OffloadStage::warm() {
  for (size_t d = 0; d < devices_.size(); ++d) {
    if (!devices_[d].usable || devices_[d].tasks.empty()) continue;
    Device& dev = service_->device(d);
    Result<std::unique_ptr<TaskExecutor>> exec = TaskExecutor::create(dev);
    const Status s = exec ? exec.value()->warm(devices_[d].tasks.front()->task)
                          : Status(make_error(exec.error()));
    if (!s)
      std::fprintf(stderr, "%s: %s: the kernels did not run ahead of traffic: %s\n",
                   element_.name().c_str(), dev.label().c_str(), s.error().c_str());
  }
}

// The open task of device d with room for n more packets; waits for a free task buffer when all
// are in flight. nullptr when none came back within TASK_TIMEOUT_MS: the device is then marked
// down.
HeldTask* OffloadStage::open_task(size_t d, uint32_t n) {
  DevicePool& ds = devices_[d];
  if (ds.open != nullptr && ds.open->pkts.size() + n > ds.open->task->task.capacity) submit(d);
  if (ds.open != nullptr) return ds.open;
  if (ds.free.empty()) {
    ++waits_;
    const uint64_t give_up = now_ns() + timeout_ns_;
    while (ds.free.empty()) {
      collect(d);
      if (apply_completed() > 0) continue;
      if (now_ns() >= give_up) {
        service_->device(d).mark_down();
        return nullptr;
      }
      heartbeat();                // waiting for the device is not a stall (it has a timeout)
      std::this_thread::yield();  // the device thread may share this core
    }
  }
  TaskBuffers* t = ds.free.back();
  ds.free.pop_back();
  t->task.reset();
  cpu_open_ = nullptr;  // CPU packets from now on go behind this task
  HeldTask& h = queue_.open();
  h.task = t;
  h.device = d;
  h.opened_ns = now_ns();
  t->held = &h;
  ds.open = &h;
  return &h;
}

// The element's gather; a region must lie within the packet and fit the region datablock.
bool OffloadStage::gather_one(Packet* p, uint8_t* item, PacketRegion& region) {
  if (!hooks_.gather(p, item, region)) return false;
  if (!spec_.whole_packet) return true;
  const uint32_t len = length(p);
  if (region.offset > len || region.length > len - region.offset ||
      region.length + region.grow > spec_.region.max_bytes)
    return false;
  return region.grow == 0 ||
         (region.offset + region.length == len && rte_pktmbuf_tailroom(p) >= region.grow);
}

// Gathers packet p (batch slot i; `left` packets of the batch still to come, p included) into
// the open task of device d, with the items of every chained stage; `bucket`: p's flow bucket
// when the caller has it (AFFINITY), else -1.
bool OffloadStage::take(PacketBatch& batch, uint32_t i, Packet* p, size_t d, uint32_t left,
                        int32_t bucket) {
  HeldTask* h = devices_[d].open;
  if (h == nullptr) return false;  // the device went silent: this packet stays on the CPU
  size_t k = h->pkts.size();
  PacketRegion r;
  if (!gather_one(p, h->task->in_item(k), r)) return false;
  for (size_t s = 1; s <= followers_.size(); ++s) {
    PacketRegion fr;
    if (!followers_[s - 1]->gather_one(p, h->task->stage_item(s, k), fr) ||
        (spec_.whole_packet &&
         (fr.offset != r.offset || fr.length != r.length || fr.grow != r.grow)))
      return false;  // the chain runs whole on the device or whole on the CPU
  }
  if (spec_.whole_packet) {
    const uint32_t align = spec_.region.align;
    uint32_t at = (h->bytes + align - 1) / align * align;
    if (at + r.length + r.grow > task_bytes_) {  // full: the items move to a new task
      TaskBuffers& full = *h->task;
      submit(d);
      h = open_task(d, left);
      if (h == nullptr) return false;
      move_items(full, *h->task, k);
      k = 0;
      at = 0;
    }
    std::memcpy(h->task->bytes->as<uint8_t>() + at, data(p) + r.offset, r.length);
    h->task->regions->as<Region>()[k] = {at, r.length};
    h->bytes = at + r.length + r.grow;
    h->src.push_back(r);
  }
  h->pkts.push_back(p);
  if (affinity_) {  // flows are tracked only when they steer packets
    const uint16_t b = bucket >= 0 ? static_cast<uint16_t>(bucket) : FlowAffinity::bucket_of(p);
    h->buckets.push_back(b);
    flows_.taken(b, static_cast<int32_t>(h->device));
  }
  ++held_;
  batch.exclude(i);
  return true;
}

// Items of packet k of `from` (gathered, then the task filled up) into slot 0 of `to`.
void OffloadStage::move_items(TaskBuffers& from, TaskBuffers& to, size_t k) {
  std::memcpy(to.in_item(0), from.in_item(k), spec_.read_bytes);
  for (size_t s = 1; s <= followers_.size(); ++s)
    std::memcpy(to.stage_item(s, 0), from.stage_item(s, k), followers_[s - 1]->spec_.read_bytes);
}

// A batch for the CPU function (`count`: as a CPU batch); with AFFINITY, its packets whose flows
// have packets held go behind them first.
void OffloadStage::run_cpu(PacketBatch& batch, bool count) {
  if (affinity_ && held_ > 0) follow_flows(batch);
  if (batch.empty()) return;
  if (count) ++cpu_batches_;
  hooks_.process_cpu(batch);
}

// AFFINITY on a CPU batch: packets of flows with packets held go to the task of their device, or,
// where it cannot take them (down, silent, gather refused) or a CPU entry is already open behind
// the device tasks, into that CPU entry (hold_for_cpu).
void OffloadStage::follow_flows(PacketBatch& batch) {
  batch.for_each([&](uint32_t i, Packet* p) {
    const uint16_t b = FlowAffinity::bucket_of(p);
    const int32_t dev = flows_.device_of(b);
    if (dev < 0) return;
    const auto d = static_cast<size_t>(dev);
    if (cpu_open_ == nullptr && service_->device(d).is_up() && open_task(d, 1) != nullptr &&
        take(batch, i, p, d, 1, b)) {
      ++affinity_packets_;
      return;
    }
    hold_for_cpu(batch, i, p, b, dev);
  });
}

// Packet p (batch slot i, flow bucket `bucket`, whose held packets are `device`'s) joins the
// queue's open CPU entry; a new one is opened behind every device task, which takes no packet
// after it (seal_device_tasks), so nothing taken later leaves before it.
void OffloadStage::hold_for_cpu(PacketBatch& batch, uint32_t i, Packet* p, uint16_t bucket,
                                int32_t device) {
  // Back-pressure, as for task buffers: a full CPU entry waits for the device tasks before it.
  if (cpu_open_ != nullptr && cpu_open_->pkts.size() >= uint64_t{aggregate_} * kMaxBatch)
    wait_behind_cpu_entry();
  if (cpu_open_ == nullptr) {
    seal_device_tasks();
    cpu_open_ = &queue_.open();
    cpu_open_->on_cpu = true;
    cpu_open_->completed = true;
    cpu_open_->device = static_cast<size_t>(device);
  }
  cpu_open_->pkts.push_back(p);
  cpu_open_->buckets.push_back(bucket);
  flows_.taken(bucket, device);
  ++held_;
  ++affinity_cpu_packets_;
  batch.exclude(i);
}

// Waits until the open CPU entry has run (every device task before it back, or abandoned once
// TASK_TIMEOUT_MS passed, as poll_deferred does), so CPU entries hold a bounded number of packets.
void OffloadStage::wait_behind_cpu_entry() {
  ++waits_;
  while (cpu_open_ != nullptr) {
    for (size_t d = 0; d < devices_.size(); ++d) collect(d);
    if (apply_completed() > 0) continue;
    for (HeldTask* h : queue_) {
      if (h->done) continue;
      abandon_if_timed_out(*h, now_ns());
      break;
    }
    heartbeat();                // waiting for the device is not a stall (it has a timeout)
    std::this_thread::yield();  // the device thread may share this core
  }
}

// Every device's open task is closed: submitted when it holds packets, else given back (its
// queue entry leaves empty).
void OffloadStage::seal_device_tasks() {
  for (size_t d = 0; d < devices_.size(); ++d) {
    DevicePool& ds = devices_[d];
    if (ds.open == nullptr) continue;
    if (!ds.open->pkts.empty()) {
      submit(d);
      continue;
    }
    HeldTask& h = *ds.open;
    h.task->held = nullptr;
    ds.free.push_back(h.task);
    h.task = nullptr;
    h.done = true;
    ds.open = nullptr;
  }
}

void OffloadStage::submit(size_t d) {
  DevicePool& ds = devices_[d];
  HeldTask* h = ds.open;
  ds.open = nullptr;
  OffloadTask& t = h->task->task;
  t.items = static_cast<uint32_t>(h->pkts.size());
  t.batches = std::max<uint32_t>(t.batches, 1);
  if (spec_.whole_packet) {
    t.inputs[kBytesInput].bytes = h->bytes;
    if (writes_) t.outputs.back().bytes = h->bytes;
  }
  ++tasks_;
  device_packets_ += h->pkts.size();
  DeviceStats& st = service_->stats(d);
  st.add(st.packets, h->pkts.size());
  h->submitted_ns = now_ns();
  t.submitted_ns = task_clock_ns();
  if (!ds.channel->submit(&t)) {  // this worker's ring is full: the CPU runs the task
    t.status = TaskStatus::kFailed;
    complete(*h->task);
  }
}

// Takes the device's finished tasks; returns how many.
uint32_t OffloadStage::collect(size_t d) {
  uint32_t n = 0;
  while (OffloadTask* t = devices_[d].channel->poll()) {
    complete(*static_cast<TaskBuffers*>(t->context));
    ++n;
  }
  return n;
}

// A task came back: counted, and its packets marked for apply_completed (or, abandoned after a
// timeout, its buffers freed: its packets were re-run already).
void OffloadStage::complete(TaskBuffers& t) {
  if (t.held == nullptr) {
    devices_[t.device].free.push_back(&t);
    return;
  }
  HeldTask& h = *t.held;
  DeviceStats& st = service_->stats(h.device);
  if (t.task.status == TaskStatus::kOk) {
    st.add(st.tasks_ok, 1);
    const OffloadTask& task = t.task;
    const uint64_t now = task_clock_ns();  // one clock read: the parts add up to the total
    st.add(st.task_ns, now - std::min(now, task.submitted_ns));
    st.mark_on(now);
    if (task.submitted_ns != 0 && task.started_ns >= task.submitted_ns &&
        task.finished_ns >= task.started_ns && now >= task.finished_ns) {
      st.add(st.queue_ns, task.started_ns - task.submitted_ns);
      st.add(st.device_ns, task.finished_ns - task.started_ns);
      st.add(st.return_ns, now - task.finished_ns);
    }
  } else {
    st.add(st.tasks_failed, 1);
  }
  h.completed = true;
}

// Applies the completed tasks at the front of the queue, oldest first, so that results reach the
// packets (and stateful post-processing such as an alert log sees them) in the order the
// packets came, whatever order the device finished in; frees their buffers. Returns how many.
uint32_t OffloadStage::apply_completed() {
  uint32_t n = 0;
  for (HeldTask* held : queue_) {
    HeldTask& h = *held;
    if (h.done) continue;
    if (!h.completed) break;
    ++n;
    if (h.on_cpu) {
      if (&h == cpu_open_) cpu_open_ = nullptr;
      run_on_cpu(h);
      h.done = true;
      continue;
    }
    TaskBuffers& t = *h.task;
    h.verdicts.resize(h.pkts.size());
    if (t.task.status == TaskStatus::kOk) {
      apply_results(t, h);
    } else {
      ++tasks_failed_;
      run_on_cpu(h);
    }
    h.task = nullptr;
    h.done = true;
    t.held = nullptr;
    devices_[h.device].free.push_back(&t);
  }
  return n;
}

// A completed task: regions back into the packets (when rewritten), then the verdicts of this
// element and of each chained stage the packet reaches.
void OffloadStage::apply_results(const TaskBuffers& t, HeldTask& h) {
  const size_t n = h.pkts.size();
  if (spec_.whole_packet && writes_) {
    const uint8_t* bytes = t.bytes->as<uint8_t>();
    const Region* packed = t.regions->as<Region>();
    for (size_t k = 0; k < n; ++k) {
      const PacketRegion& r = h.src[k];
      uint8_t* at = data(h.pkts[k]) + r.offset;
      if (r.grow != 0 && rte_pktmbuf_append(h.pkts[k], static_cast<uint16_t>(r.grow)) == nullptr)
        continue;  // cannot happen: gather checked the tailroom
      std::memcpy(at, bytes + packed[k].offset, r.length + r.grow);
    }
  }
  const uint8_t* results = t.out ? t.out->as<uint8_t>() : nullptr;
  auto region = [&](size_t k) { return spec_.whole_packet ? h.src[k] : PacketRegion{}; };
  for (size_t k = 0; k < n; ++k)
    h.verdicts[k] = hooks_.apply(h.pkts[k], results + k * spec_.write_bytes, region(k));
  const size_t f = followers_.size();
  if (f == 0) return;
  h.chained = true;
  h.stage_verdicts.resize(n * f);
  for (size_t k = 0; k < n; ++k) {
    Verdict v = h.verdicts[k];
    for (size_t s = 1; s <= f && !v.is_drop() && v.port() == 0; ++s) {
      const OffloadStage& next = *followers_[s - 1];
      const uint32_t bytes = next.spec_.write_bytes;
      const uint8_t* r = bytes != 0 ? t.stage_out[s - 1]->as<uint8_t>() + k * bytes : nullptr;
      v = next.hooks_.apply(h.pkts[k], r, region(k));
      h.stage_verdicts[k * f + s - 1] = v;
    }
  }
}

// A chained batch from the head: the verdicts it computed for this stage. A packet it has none
// for (it cannot happen: only the head feeds this element) gets the CPU function.
void OffloadStage::pass_chained(PacketBatch& batch) {
  PacketBatch rest;
  uint32_t slots[kMaxBatch];
  batch.for_each([&](uint32_t i, Packet* p) {
    Verdict v;
    if (head_->chained_verdict(stage_, i, p, v)) {
      batch.set_result(i, v);
      ++chained_packets_;
      return;
    }
    slots[rest.count()] = i;
    rest.push(p);
  });
  if (rest.empty()) return;
  hooks_.process_cpu(rest);
  for (uint32_t j = 0; j < rest.count(); ++j) batch.set_result(slots[j], rest.result(j));
}

// The verdict `stage` gets for the packet this head handed on at `slot` of its last batch.
bool OffloadStage::chained_verdict(size_t stage, uint32_t slot, const Packet* p, Verdict& v) const {
  const size_t f = followers_.size();
  if (stage == 0 || stage > f) return false;
  uint32_t k = slot;
  if (k >= emit_count_ || emit_pkts_[k] != p) {
    k = static_cast<uint32_t>(std::find(emit_pkts_.begin(), emit_pkts_.begin() + emit_count_, p) -
                              emit_pkts_.begin());
    if (k == emit_count_) return false;
  }
  v = emit_verdicts_[k * f + stage - 1];
  return true;
}

// The CPU function's verdicts for a task's packets (failed or abandoned task).
void OffloadStage::run_on_cpu(HeldTask& h) {
  h.verdicts.resize(h.pkts.size());
  for (size_t first = 0; first < h.pkts.size(); first += kMaxBatch) {
    PacketBatch b;
    const size_t n = std::min<size_t>(kMaxBatch, h.pkts.size() - first);
    for (size_t k = 0; k < n; ++k) b.push(h.pkts[first + k]);
    hooks_.process_cpu(b);
    std::copy_n(b.results(), n, h.verdicts.begin() + static_cast<std::ptrdiff_t>(first));
  }
}

// A task not back in time: the device is marked down, the packets re-run on the CPU; the
// buffers stay with the device thread until it hands the task back (complete() frees them).
// A submitted task not back TASK_TIMEOUT_MS after its submission is abandoned.
void OffloadStage::abandon_if_timed_out(HeldTask& h, uint64_t now) {
  if (!h.done && h.submitted_ns != 0 && now >= h.submitted_ns + timeout_ns_) abandon(h);
}

void OffloadStage::abandon(HeldTask& h) {
  service_->device(h.device).mark_down();
  ++tasks_timed_out_;
  h.task->held = nullptr;
  h.task = nullptr;
  run_on_cpu(h);
  h.done = true;
}

// Up to one batch of the oldest finished task's packets into `out`, with their verdicts (and
// those of the chained stages, which they pass next).
void OffloadStage::emit(PacketBatch& out) {
  HeldTask& h = queue_.front();
  const size_t n = std::min<size_t>(kMaxBatch, h.pkts.size() - h.emitted);
  const size_t f = followers_.size();
  emit_count_ = 0;
  // The decision the packets were given.
  out.anno().device = h.on_cpu ? kRunOnCpu : static_cast<int32_t>(h.device);
  if (h.chained) {
    out.anno().chained = static_cast<const void*>(this);
    std::copy_n(h.pkts.begin() + static_cast<std::ptrdiff_t>(h.emitted), n, emit_pkts_.begin());
    std::copy_n(h.stage_verdicts.begin() + static_cast<std::ptrdiff_t>(h.emitted * f), n * f,
                emit_verdicts_.begin());
    emit_count_ = static_cast<uint32_t>(n);
  }
  for (size_t k = h.emitted; k < h.emitted + n; ++k) {
    out.push(h.pkts[k]);
    out.set_result(out.count() - 1, h.verdicts[k]);
    if (affinity_) flows_.released(h.buckets[k]);
  }
  h.emitted += n;
  held_ -= n;
  if (h.emitted < h.pkts.size()) return;
  queue_.pop();
}

}  // namespace fulcrum::offload
