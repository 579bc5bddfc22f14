// OffloadElement<Derived>: an element that runs either its CPU function or a device kernel, with
// the framework moving the data (NBA §3.3). The per-batch decision comes from a balancer element
// upstream (CPUOnly, DeviceOnly, FixedFraction: the batch annotation's device).
//
// Derived provides its datablocks as two per-packet items and the functions around them:
//   static constexpr uint32_t kInputBytes, kOutputBytes;   read item and write item per packet
//   void process_cpu(PacketBatch&);          the CPU function, on the batch's live packets
//   bool gather(Packet*, uint8_t* item);     writes the packet's read item; false: not for the
//                                            device (it stays for the CPU function)
//   Verdict apply(Packet*, const uint8_t* result);   post-processing from the write item
//   Result<std::vector<offload::TaskArg>> device_args(const InitContext&, size_t device);
//                                            the kernel's arguments on that device (tables
//                                            resident there, uploaded once per process)
//   static constexpr std::string_view kKernel;
// and calls configure_offload(args) as the last step of configure() (it reads AGGREGATE,
// FLUSH_US and AFFINITY and finishes the arguments) and initialize_offload(ctx) from
// initialize().
//
// Device path: packets are gathered into the open task of their device (pinned host buffers),
// which aggregates up to AGGREGATE batches and is handed to the device thread when full or
// FLUSH_US after it opened. The packets are held (taken out of their batch) until the task comes
// back and their verdicts are applied; they leave in the order their tasks were opened, so the
// device path never reorders. A task that failed (the device errored or went away; the device
// thread marks it down) is re-run by the CPU function: nothing is lost. A task not back
// TASK_TIMEOUT_MS after it was submitted counts as a device gone silent: the device is marked
// down and the task's packets are re-run on the CPU (its buffers are reused only once the device
// thread hands the task back). When all of a device's
// task buffers are in flight the worker waits for one (back-pressure, as NBA: the device sets
// the pace of the batches given to it).
//
// AFFINITY (paper 001 §4.3.1): a packet whose flow has packets in flight on a device follows
// them there even when its batch was given to the CPU, so no flow runs on two processors at once
// and per-flow order is kept. Flows are told apart by a hash of the IPv4 addresses and ports (the
// RSS hash when the NIC gave one) into 4096 buckets.
#pragma once

#include <rte_cycles.h>
#include <rte_hash_crc.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "core/element.hh"
#include "offload/service.hh"
#include "offload/task.hh"

namespace fulcrum {

template <class Derived>
class OffloadElement : public ElementBase<Derived> {
 public:
  static constexpr uint32_t kDefaultFlushUs = 100;
  static constexpr uint32_t kTasksPerDevice = 8;
  static constexpr uint32_t kFlowBuckets = 4096;

  // Task buffers still with a device thread (abandoned after a timeout) must outlive it: wait
  // for them, and if the device stays silent, leak them rather than free memory it may write.
  ~OffloadElement() override {
    for (size_t d = 0; d < devices_.size(); ++d) {
      DeviceState& ds = devices_[d];
      auto in_flight = [&ds] { return ds.tasks.size() - ds.free.size() - (ds.open ? 1 : 0); };
      const uint64_t give_up = now_ns() + timeout_ns_ + kShutdownGraceNs;
      while (in_flight() > 0 && now_ns() < give_up) {
        // Derived is gone: take the tasks back without applying them.
        offload::OffloadTask* t = ds.channel->poll();
        if (t == nullptr) {
          std::this_thread::yield();
          continue;
        }
        ds.free.push_back(static_cast<TaskBuffers*>(t->context));
      }
      if (in_flight() == 0) continue;
      for (std::unique_ptr<TaskBuffers>& t : ds.tasks)
        if (std::find(ds.free.begin(), ds.free.end(), t.get()) == ds.free.end() &&
            (ds.open == nullptr || ds.open->task != t.get()))
          static_cast<void>(t.release());
    }
  }

  bool defers() const override { return true; }
  uint64_t held() const override { return held_; }

  void counters(std::vector<Counter>& out) const override {
    out.push_back({"cpu_batches", cpu_batches_});
    out.push_back({"device_batches", device_batches_});
    out.push_back({"device_packets", device_packets_});
    out.push_back({"tasks", tasks_});
    out.push_back({"tasks_failed", tasks_failed_});
    out.push_back({"no_device_batches", no_device_batches_});
    out.push_back({"affinity_packets", affinity_packets_});
    out.push_back({"waits", waits_});
    out.push_back({"tasks_timed_out", tasks_timed_out_});
  }

  void process_batch(PacketBatch& batch) override {
    const int32_t dev = batch.anno().device;
    const bool to_device = dev != kRunOnCpu && static_cast<size_t>(dev) < devices_.size() &&
                           service_->device(static_cast<size_t>(dev)).is_up();
    if (dev != kRunOnCpu && !to_device) ++no_device_batches_;
    if (!to_device) {
      if (affinity_ && held_ > 0) follow_flows(batch);
      if (!batch.empty()) {
        ++cpu_batches_;
        self().process_cpu(batch);
      }
      return;
    }
    const auto d = static_cast<size_t>(dev);
    Held* open = open_task(d, batch.live());
    if (open == nullptr) {  // the device went silent while this batch waited for it
      ++cpu_batches_;
      self().process_cpu(batch);
      return;
    }
    Held& h = *open;
    ++device_batches_;
    ++h.task->task.batches;
    batch.for_each([&](uint32_t i, Packet* p) { take(batch, i, p, h); });
    offload::DeviceStats& st = service_->stats(d);
    st.add(st.batches, 1);
    if (h.task->task.batches >= aggregate_) submit(d);
    if (!batch.empty()) self().process_cpu(batch);  // packets gather() left to the CPU
  }

  void poll_deferred(uint64_t now_ns, PacketBatch& out) override {
    for (size_t d = 0; d < devices_.size(); ++d) {
      DeviceState& ds = devices_[d];
      if (ds.open != nullptr && !ds.open->pkts.empty() && now_ns >= ds.open->opened_ns + flush_ns_)
        submit(d);
      collect(d);
    }
    if (fifo_.empty()) return;
    Held& front = *fifo_.front();
    if (!front.done && front.submitted_ns != 0 && now_ns >= front.submitted_ns + timeout_ns_)
      abandon(front);
    if (front.done) emit(out);
  }

 protected:
  Status configure_offload(Args& args) {
    args.key("AGGREGATE", aggregate_).key("FLUSH_US", flush_us_).key("AFFINITY", affinity_);
    args.key("TASK_TIMEOUT_MS", timeout_ms_);
    if (Status s = args.finish(); !s) return s;
    if (aggregate_ == 0 || aggregate_ > kMaxAggregate)
      return args.error("AGGREGATE must be 1.." + std::to_string(kMaxAggregate));
    return {};
  }

  Status initialize_offload(const InitContext& ctx) {
    flush_ns_ = uint64_t{flush_us_} * kNsPerUs;
    timeout_ns_ = uint64_t{timeout_ms_} * kNsPerMs;
    Result<std::shared_ptr<const offload::OffloadService>> svc =
        offload::OffloadService::get(ctx.shared);
    if (!svc) return make_error(svc.error());
    service_ = svc.value();
    devices_.resize(service_->devices());
    for (size_t d = 0; d < devices_.size(); ++d) {
      DeviceState& ds = devices_[d];
      offload::Device& dev = service_->device(d);
      Result<offload::Channel*> ch = service_->thread(d).attach();
      if (!ch) return make_error(ch.error());
      ds.channel = ch.value();
      Result<std::vector<offload::TaskArg>> args = self().device_args(ctx, d);
      if (!args) return make_error(dev.label() + ": " + args.error());
      for (uint32_t k = 0; k < kTasksPerDevice; ++k) {
        Result<std::unique_ptr<TaskBuffers>> t = make_task(dev, d, args.value());
        if (!t) return make_error(dev.label() + ": " + t.error());
        ds.free.push_back(t.value().get());
        ds.tasks.push_back(std::move(t.value()));
      }
    }
    return {};
  }

  const offload::OffloadService& service() const { return *service_; }

 private:
  static constexpr uint32_t kMaxAggregate = 256;
  static constexpr uint64_t kNsPerUs = 1000;
  static constexpr uint64_t kNsPerMs = 1000000;
  static constexpr uint32_t kDefaultTimeoutMs = 1000;
  static constexpr uint64_t kShutdownGraceNs = 1000000000;

  struct Held;
  // A task's pinned buffers, reused task after task.
  struct TaskBuffers {
    offload::OffloadTask task;
    std::unique_ptr<offload::HostBuffer> in;
    std::unique_ptr<offload::HostBuffer> out;
    Held* held = nullptr;  // the packets of the task in flight; nullptr once abandoned
    size_t device = 0;
  };
  // Packets taken for one task, in order; their verdicts once the task is back.
  struct Held {
    std::vector<Packet*> pkts;
    std::vector<uint16_t> buckets;  // flow bucket per packet (AFFINITY only)
    std::vector<Verdict> verdicts;
    TaskBuffers* task = nullptr;  // until the results are applied
    size_t device = 0;
    size_t emitted = 0;
    uint64_t opened_ns = 0;     // first packet in (for FLUSH_US)
    uint64_t submitted_ns = 0;  // handed to the device thread
    bool done = false;
  };
  struct DeviceState {
    offload::Channel* channel = nullptr;
    std::vector<std::unique_ptr<TaskBuffers>> tasks;
    std::vector<TaskBuffers*> free;
    Held* open = nullptr;
  };
  struct FlowBucket {
    uint32_t in_flight = 0;
    int32_t device = 0;
  };

  Derived& self() { return static_cast<Derived&>(*this); }

  Result<std::unique_ptr<TaskBuffers>> make_task(offload::Device& dev, size_t index,
                                                 const std::vector<offload::TaskArg>& args) {
    auto t = std::make_unique<TaskBuffers>();
    t->device = index;
    const uint32_t capacity = aggregate_ * kMaxBatch;
    auto in = dev.alloc_host(capacity * Derived::kInputBytes);
    if (!in) return make_error(in.error());
    auto out = dev.alloc_host(capacity * Derived::kOutputBytes);
    if (!out) return make_error(out.error());
    t->in = std::move(in.value());
    t->out = std::move(out.value());
    offload::OffloadTask& task = t->task;
    task.inputs = {{t->in.get(), Derived::kInputBytes}};
    task.outputs = {{t->out.get(), Derived::kOutputBytes}};
    task.launches = {{std::string(Derived::kKernel), args}};
    task.capacity = capacity;
    task.max_batches = aggregate_;
    task.context = t.get();
    return t;
  }

  // The open task of device d with room for n more packets; waits for a free task buffer when
  // all are in flight. nullptr when none came back within TASK_TIMEOUT_MS: the device is then
  // marked down.
  Held* open_task(size_t d, uint32_t n) {
    DeviceState& ds = devices_[d];
    if (ds.open != nullptr && ds.open->pkts.size() + n > ds.open->task->task.capacity) submit(d);
    if (ds.open != nullptr) return ds.open;
    if (ds.free.empty()) {
      ++waits_;
      const uint64_t give_up = now_ns() + timeout_ns_;
      while (ds.free.empty()) {
        if (collect(d) > 0) continue;
        if (now_ns() >= give_up) {
          service_->device(d).mark_down();
          return nullptr;
        }
        std::this_thread::yield();  // the device thread may share this core
      }
    }
    TaskBuffers* t = ds.free.back();
    ds.free.pop_back();
    t->task.reset();
    Held* h = new_held();
    h->task = t;
    h->device = d;
    h->opened_ns = now_ns();
    t->held = h;
    ds.open = h;
    fifo_.push_back(h);
    return h;
  }

  Held* new_held() {
    Held* h;
    if (spare_.empty()) {
      owned_.push_back(std::make_unique<Held>());
      h = owned_.back().get();
    } else {
      h = spare_.back();
      spare_.pop_back();
    }
    h->pkts.clear();
    h->buckets.clear();
    h->verdicts.clear();
    h->emitted = 0;
    h->submitted_ns = 0;
    h->done = false;
    return h;
  }

  uint16_t bucket_of(Packet* p) const {
    uint32_t h = anno(p).flow_hash;
    if (h == 0) {
      constexpr uint32_t kAddrsOffset = 26, kAddrsAndPorts = 12;
      if (length(p) >= kAddrsOffset + kAddrsAndPorts) {
        alignas(8) uint8_t key[kAddrsAndPorts];  // rte_hash_crc loads whole words
        std::memcpy(key, data(p) + kAddrsOffset, kAddrsAndPorts);
        h = rte_hash_crc(key, kAddrsAndPorts, 0);
      }
    }
    return static_cast<uint16_t>(h % kFlowBuckets);
  }

  void take(PacketBatch& batch, uint32_t i, Packet* p, Held& h) {
    uint8_t* item = h.task->in->template as<uint8_t>() + h.pkts.size() * Derived::kInputBytes;
    if (!self().gather(p, item)) return;
    h.pkts.push_back(p);
    if (affinity_) {  // flows are tracked only when they steer packets
      const uint16_t b = bucket_of(p);
      h.buckets.push_back(b);
      ++flows_[b].in_flight;
      flows_[b].device = static_cast<int32_t>(h.device);
    }
    ++held_;
    batch.exclude(i);
  }

  // AFFINITY on a CPU batch: packets of flows in flight on a device go to that device's task.
  void follow_flows(PacketBatch& batch) {
    batch.for_each([&](uint32_t i, Packet* p) {
      const FlowBucket& f = flows_[bucket_of(p)];
      if (f.in_flight == 0) return;
      Held* h = open_task(static_cast<size_t>(f.device), 1);
      if (h == nullptr) return;  // the device went silent: this packet stays on the CPU
      take(batch, i, p, *h);
      ++affinity_packets_;
    });
  }

  void submit(size_t d) {
    DeviceState& ds = devices_[d];
    Held* h = ds.open;
    ds.open = nullptr;
    offload::OffloadTask& t = h->task->task;
    t.items = static_cast<uint32_t>(h->pkts.size());
    t.batches = std::max<uint32_t>(t.batches, 1);
    ++tasks_;
    device_packets_ += h->pkts.size();
    offload::DeviceStats& st = service_->stats(d);
    st.add(st.packets, h->pkts.size());
    h->submitted_ns = now_ns();
    if (!ds.channel->submit(&t)) {  // this worker's ring is full: the CPU runs the task
      t.status = offload::TaskStatus::kFailed;
      finish(*h->task);
    }
  }

  // Takes the device's finished tasks; returns how many.
  uint32_t collect(size_t d) {
    uint32_t n = 0;
    while (offload::OffloadTask* t = devices_[d].channel->poll()) {
      finish(*static_cast<TaskBuffers*>(t->context));
      ++n;
    }
    return n;
  }

  // Applies a finished task's results (or, when it failed, runs the CPU function) to its
  // packets and frees its buffers.
  void finish(TaskBuffers& t) {
    if (t.held == nullptr) {  // abandoned after a timeout: its packets were re-run already
      devices_[t.device].free.push_back(&t);
      return;
    }
    Held& h = *t.held;
    offload::DeviceStats& st = service_->stats(h.device);
    h.verdicts.resize(h.pkts.size());
    if (t.task.status == offload::TaskStatus::kOk) {
      st.add(st.tasks_ok, 1);
      st.add(st.task_ns, now_ns() - h.submitted_ns);
      const uint8_t* results = t.out->template as<uint8_t>();
      for (size_t k = 0; k < h.pkts.size(); ++k)
        h.verdicts[k] = self().apply(h.pkts[k], results + k * Derived::kOutputBytes);
    } else {
      st.add(st.tasks_failed, 1);
      ++tasks_failed_;
      run_on_cpu(h);
    }
    h.task = nullptr;
    h.done = true;
    t.held = nullptr;
    devices_[h.device].free.push_back(&t);
  }

  // The CPU function's verdicts for a task's packets (failed or abandoned task).
  void run_on_cpu(Held& h) {
    h.verdicts.resize(h.pkts.size());
    for (size_t first = 0; first < h.pkts.size(); first += kMaxBatch) {
      PacketBatch b;
      const size_t n = std::min<size_t>(kMaxBatch, h.pkts.size() - first);
      for (size_t k = 0; k < n; ++k) b.push(h.pkts[first + k]);
      self().process_cpu(b);
      std::copy_n(b.results(), n, h.verdicts.begin() + static_cast<std::ptrdiff_t>(first));
    }
  }

  // A task not back in time: the device is marked down, the packets re-run on the CPU; the
  // buffers stay with the device thread until it hands the task back (finish() frees them).
  void abandon(Held& h) {
    service_->device(h.device).mark_down();
    ++tasks_timed_out_;
    h.task->held = nullptr;
    h.task = nullptr;
    run_on_cpu(h);
    h.done = true;
  }

  // Up to one batch of the oldest finished task's packets into `out`, with their verdicts.
  void emit(PacketBatch& out) {
    Held& h = *fifo_.front();
    const size_t n = std::min<size_t>(kMaxBatch, h.pkts.size() - h.emitted);
    for (size_t k = h.emitted; k < h.emitted + n; ++k) {
      out.push(h.pkts[k]);
      out.set_result(out.count() - 1, h.verdicts[k]);
      if (affinity_) --flows_[h.buckets[k]].in_flight;
    }
    h.emitted += n;
    held_ -= n;
    if (h.emitted < h.pkts.size()) return;
    fifo_.pop_front();
    spare_.push_back(&h);
  }

  static uint64_t now_ns() {
    return static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * 1e9 /
                                 static_cast<double>(rte_get_tsc_hz()));
  }

  std::shared_ptr<const offload::OffloadService> service_;
  std::vector<DeviceState> devices_;
  std::deque<Held*> fifo_;
  std::vector<std::unique_ptr<Held>> owned_;
  std::vector<Held*> spare_;
  std::array<FlowBucket, kFlowBuckets> flows_{};
  uint32_t aggregate_ = offload::kDefaultAggregateBatches;
  uint32_t flush_us_ = kDefaultFlushUs;
  uint64_t flush_ns_ = 0;
  uint32_t timeout_ms_ = kDefaultTimeoutMs;
  uint64_t timeout_ns_ = 0;
  bool affinity_ = false;
  uint64_t held_ = 0;
  uint64_t cpu_batches_ = 0, device_batches_ = 0, device_packets_ = 0, tasks_ = 0,
           tasks_failed_ = 0, no_device_batches_ = 0, affinity_packets_ = 0, waits_ = 0,
           tasks_timed_out_ = 0;
};

}  // namespace fulcrum
