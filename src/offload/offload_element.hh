// OffloadElement<Derived>: an element that runs either its CPU function or a device kernel, with
// the framework moving the data (NBA §3.3). The per-batch decision comes from a balancer element
// upstream (CPUOnly, DeviceOnly, FixedFraction: the batch annotation's device).
//
// Derived provides its datablocks (NBA Table 2) and the functions around them:
//   static constexpr uint32_t kInputBytes, kOutputBytes;   read item and write item per packet
//                                            (partial_pkt / user datablocks; either may be 0)
//   static constexpr offload::WholePacketBlock kWholePacket;   optional: a region of the packet's
//                                            bytes goes to the device (whole_pkt), rewritten in
//                                            place and copied back when .write
//   void process_cpu(PacketBatch&);          the CPU function, on the batch's live packets
//   bool gather(Packet*, uint8_t* item);     writes the packet's read item; false: not for the
//                                            device (it stays for the CPU function). With
//                                            kWholePacket: gather(Packet*, uint8_t* item,
//                                            offload::PacketRegion& region), region within the
//                                            packet
//   Verdict apply(Packet*, const uint8_t* result);   post-processing from the write item, after
//                                            the region was copied back (with kWholePacket it
//                                            may also take the packet's PacketRegion)
//   Result<std::vector<offload::TaskArg>> device_args(const InitContext&, size_t device);
//                                            the kernel's arguments on that device (tables
//                                            resident there, uploaded once per process); the
//                                            task's buffers are offload::kItemsInput,
//                                            kBytesInput, kRegionsInput and kResultsOutput
//   static constexpr std::string_view kKernel;
//   static constexpr std::string_view kChainKey;   optional: the datablock it shares (below)
//   std::optional<offload::TaskLaunch> fuse(const Element& next, const std::vector<TaskArg>&);
//                                            optional: one kernel for this element and `next`
// and calls configure_offload(args) as the last step of configure() (it reads AGGREGATE,
// FLUSH_US, AFFINITY, TASK_TIMEOUT_MS, TASK_BYTES, CHAIN and FUSE and finishes the arguments)
// and initialize_offload(ctx) from initialize().
//
// Chaining (datablock reuse, NBA §3.3): when this element's only output feeds an offloadable
// element with the same kChainKey and no other input (Element::chain), this element's tasks also
// carry that element's items and results and run its kernel right after its own, on the same
// device buffers: no copy back and forth in between. The next element's gather is called with
// this one's (so it must not depend on what this kernel writes; its region must be the same, or
// the packet stays on the CPU for both), its apply after this one's, and it passes the packets
// with those verdicts (BatchAnno::chained). Its items are input 2 + s and its results output s
// for the s-th element of the chain. With `fuse` (FlowShader §III-E), one launch replaces the
// two kernels. CHAIN false and FUSE false turn either off.
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
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "core/element.hh"
#include "core/heartbeat.hh"
#include "offload/service.hh"
#include "offload/task.hh"

namespace fulcrum {

// What the head of a chain needs from the elements it chained (every OffloadElement is one).
class OffloadStage {
 public:
  virtual ~OffloadStage() = default;
  virtual std::string_view chain_key() const = 0;
  virtual bool whole_packet() const = 0;
  virtual bool writes_packet() const = 0;
  virtual uint32_t stage_input_bytes() const = 0;
  virtual uint32_t stage_output_bytes() const = 0;
  virtual bool stage_gather(Packet* p, uint8_t* item, offload::PacketRegion& region) = 0;
  virtual Verdict stage_apply(Packet* p, const uint8_t* result,
                              const offload::PacketRegion& region) = 0;
  virtual const std::vector<offload::TaskArg>& stage_args(size_t device) const = 0;
  virtual std::string_view stage_kernel() const = 0;
  // This stage is the `stage`-th (1..) after `head`; false when it is chained already.
  virtual bool set_head(const OffloadStage* head, size_t stage) = 0;
  // The verdict `stage` gets for the packet the head handed on at `slot` of its last batch.
  virtual bool chained_verdict(size_t stage, uint32_t slot, const Packet* p, Verdict& v) const = 0;
};

template <class Derived>
class OffloadElement : public ElementBase<Derived>, public OffloadStage {
 public:
  static constexpr uint32_t kDefaultFlushUs = 100;
  static constexpr uint32_t kTasksPerDevice = 8;
  static constexpr uint32_t kFlowBuckets = 4096;
  static constexpr uint32_t kDefaultTaskBytes = 2u << 20;

  // Task buffers still with a device thread (abandoned after a timeout) must outlive it: wait
  // for them, and if the device stays silent, leak them rather than free memory it may write.
  ~OffloadElement() override {
    for (Held* h : fifo_)  // back from the device, not applied: the buffers are free
      if (h->completed && !h->done && h->task != nullptr) {
        devices_[h->device].free.push_back(h->task);
        h->task = nullptr;
      }
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
    out.push_back({"chained_stages", followers_.size()});
    out.push_back({"chained_packets", chained_packets_});
  }

  void process_batch(PacketBatch& batch) override {
    if (batch.empty()) return;
    if (head_ != nullptr && batch.anno().chained == static_cast<const void*>(head_))
      return pass_chained(batch);
    const int32_t dev = batch.anno().device;
    const bool to_device = dev != kRunOnCpu && static_cast<size_t>(dev) < devices_.size() &&
                           devices_[static_cast<size_t>(dev)].usable &&
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
    if (open_task(d, batch.live()) == nullptr) {  // the device went silent while this batch waited
      ++cpu_batches_;
      self().process_cpu(batch);
      return;
    }
    ++device_batches_;
    ++devices_[d].open->task->task.batches;
    uint32_t left = batch.live();
    batch.for_each([&](uint32_t i, Packet* p) { take(batch, i, p, d, left--); });
    offload::DeviceStats& st = service_->stats(d);
    st.add(st.batches, 1);
    if (devices_[d].open != nullptr && devices_[d].open->task->task.batches >= aggregate_)
      submit(d);
    if (!batch.empty()) self().process_cpu(batch);  // packets gather() left to the CPU
  }

  void poll_deferred(uint64_t now_ns, PacketBatch& out) override {
    for (size_t d = 0; d < devices_.size(); ++d) {
      DeviceState& ds = devices_[d];
      if (ds.open != nullptr && !ds.open->pkts.empty() && now_ns >= ds.open->opened_ns + flush_ns_)
        submit(d);
      collect(d);
    }
    apply_completed();
    if (fifo_.empty()) return;
    Held& front = *fifo_.front();
    if (!front.done && front.submitted_ns != 0 && now_ns >= front.submitted_ns + timeout_ns_)
      abandon(front);
    if (front.done) emit(out);
  }

  Result<bool> chain(Element& next) override {
    auto* stage = dynamic_cast<OffloadStage*>(&next);
    if (!chain_enabled_ || stage == nullptr || chain_key().empty() ||
        stage->chain_key() != chain_key() || stage->whole_packet() != has_whole() ||
        followers_.size() + 1 >= kMaxStages || !stage->set_head(this, followers_.size() + 1))
      return false;
    for (size_t d = 0; d < devices_.size(); ++d)  // the chain needs the next kernel everywhere
      if (devices_[d].usable && !service_->device(d).kernel(stage->stage_kernel())) return false;
    followers_.push_back(stage);
    const size_t s = followers_.size();
    for (size_t d = 0; d < devices_.size(); ++d) {
      if (!devices_[d].usable) continue;
      offload::Device& dev = service_->device(d);
      std::vector<offload::TaskArg> args = remap(stage->stage_args(d), s);
      std::optional<offload::TaskLaunch> fused;
      if constexpr (requires { self().fuse(next, args); })
        if (s == 1 && fuse_enabled_) fused = self().fuse(next, args);
      if (fused && !dev.kernel(fused->kernel)) fused.reset();
      for (std::unique_ptr<TaskBuffers>& t : devices_[d].tasks) {
        offload::OffloadTask& task = t->task;
        auto in = alloc(dev, task.capacity * stage->stage_input_bytes());
        if (!in) return make_error(dev.label() + ": " + in.error());
        auto out = alloc(dev, task.capacity * stage->stage_output_bytes());
        if (!out) return make_error(dev.label() + ": " + out.error());
        task.inputs.push_back({in.value().get(), stage->stage_input_bytes()});
        task.outputs.insert(task.outputs.begin() + static_cast<std::ptrdiff_t>(s),
                            {out.value().get(), stage->stage_output_bytes()});
        if (stage->writes_packet() && !writes_)
          task.outputs.push_back(
              {t->bytes.get(), 0, 0, static_cast<int32_t>(offload::kBytesInput)});
        if (fused)
          task.launches = {*fused};
        else
          task.launches.push_back({std::string(stage->stage_kernel()), args});
        t->stage_in.push_back(std::move(in.value()));
        t->stage_out.push_back(std::move(out.value()));
      }
    }
    writes_ = writes_ || stage->writes_packet();
    emit_verdicts_.resize(size_t{kMaxBatch} * followers_.size());
    return true;
  }

  // OffloadStage
  std::string_view chain_key() const override {
    if constexpr (requires { Derived::kChainKey; })
      return Derived::kChainKey;
    else
      return {};
  }
  bool whole_packet() const override { return has_whole(); }
  bool writes_packet() const override { return region_written(); }
  uint32_t stage_input_bytes() const override { return Derived::kInputBytes; }
  uint32_t stage_output_bytes() const override { return Derived::kOutputBytes; }
  bool stage_gather(Packet* p, uint8_t* item, offload::PacketRegion& region) override {
    return gather_one(p, item, region);
  }
  Verdict stage_apply(Packet* p, const uint8_t* result,
                      const offload::PacketRegion& region) override {
    return apply_one(p, result, region);
  }
  const std::vector<offload::TaskArg>& stage_args(size_t device) const override {
    return device_args_[device];
  }
  std::string_view stage_kernel() const override { return Derived::kKernel; }
  bool set_head(const OffloadStage* head, size_t stage) override {
    if (head_ != nullptr || !followers_.empty()) return false;
    head_ = head;
    stage_ = stage;
    return true;
  }
  bool chained_verdict(size_t stage, uint32_t slot, const Packet* p, Verdict& v) const override {
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

 protected:
  Status configure_offload(Args& args) {
    args.key("AGGREGATE", aggregate_).key("FLUSH_US", flush_us_).key("AFFINITY", affinity_);
    args.key("TASK_TIMEOUT_MS", timeout_ms_)
        .key("CHAIN", chain_enabled_)
        .key("FUSE", fuse_enabled_);
    if constexpr (has_whole()) args.key("TASK_BYTES", task_bytes_);
    if (Status s = args.finish(); !s) return s;
    if (aggregate_ == 0 || aggregate_ > kMaxAggregate)
      return args.error("AGGREGATE must be 1.." + std::to_string(kMaxAggregate));
    if (has_whole() && task_bytes_ < max_region())
      return args.error("TASK_BYTES must hold one region of " + std::to_string(max_region()) +
                        " bytes");
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
      Result<offload::Channel*> ch = service_->thread(d, ctx.worker).attach();
      if (!ch) return make_error(ch.error());
      ds.channel = ch.value();
      // The kernel is built now (not at the first task, which would wait for the compiler).
      // A device that cannot build it is not used by this element; the others are.
      if (Result<const offload::Kernel*> k = dev.kernel(Derived::kKernel); !k) {
        std::fprintf(stderr, "%s: %s: kernel %s unavailable, its batches run on the CPU: %s\n",
                     this->name().c_str(), dev.label().c_str(),
                     std::string(Derived::kKernel).c_str(), k.error().c_str());
        ds.usable = false;
        device_args_.emplace_back();
        continue;
      }
      Result<std::vector<offload::TaskArg>> args = self().device_args(ctx, d);
      if (!args) return make_error(dev.label() + ": " + args.error());
      device_args_.push_back(args.value());
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
  // Derived is complete only inside member functions: these are functions, not constants.
  static constexpr bool has_whole() {
    return requires {
      Derived::kWholePacket;
    };
  }
  static constexpr bool whole_writes() {
    if constexpr (has_whole())
      return Derived::kWholePacket.write;
    else
      return false;
  }
  // The regions come back from the device: rewritten (kWholePacket.write), or grown (Derived's
  // optional `bool grows() const`, for an element whose gather asks for PacketRegion::grow).
  bool region_written() const {
    if constexpr (has_whole()) {
      if constexpr (requires(const Derived& d) { d.grows(); })
        if (static_cast<const Derived&>(*this).grows()) return true;
      return whole_writes();
    } else {
      return false;
    }
  }
  static constexpr uint32_t max_region() {
    if constexpr (has_whole())
      return Derived::kWholePacket.max_bytes;
    else
      return 0;
  }
  static constexpr uint32_t kMaxAggregate = 256;
  static constexpr size_t kMaxStages = 8;
  static constexpr uint64_t kNsPerUs = 1000;
  static constexpr uint64_t kNsPerMs = 1000000;
  static constexpr uint64_t kShutdownGraceNs = 1000000000;

  struct Held;
  // A task's pinned buffers, reused task after task.
  struct TaskBuffers {
    offload::OffloadTask task;
    std::unique_ptr<offload::HostBuffer> in;       // items
    std::unique_ptr<offload::HostBuffer> out;      // results
    std::unique_ptr<offload::HostBuffer> bytes;    // packed regions (has_whole())
    std::unique_ptr<offload::HostBuffer> regions;  // offload::Region per packet (has_whole())
    std::vector<std::unique_ptr<offload::HostBuffer>> stage_in, stage_out;  // chained stages
    Held* held = nullptr;  // the packets of the task in flight; nullptr once abandoned
    size_t device = 0;

    uint8_t* in_item(size_t k) const {
      return in ? in->as<uint8_t>() + k * Derived::kInputBytes : nullptr;
    }
    uint8_t* stage_item(size_t s, size_t k) const {
      const uint32_t n = task.inputs[offload::kRegionsInput + s].item_bytes;
      return n != 0 ? stage_in[s - 1]->as<uint8_t>() + k * n : nullptr;
    }
  };
  // Packets taken for one task, in order; their verdicts once the task is back.
  struct Held {
    std::vector<Packet*> pkts;
    std::vector<uint16_t> buckets;           // flow bucket per packet (AFFINITY only)
    std::vector<offload::PacketRegion> src;  // region within each packet (has_whole())
    std::vector<Verdict> verdicts;
    std::vector<Verdict> stage_verdicts;  // per packet, per chained stage
    TaskBuffers* task = nullptr;          // until the results are applied
    size_t device = 0;
    size_t emitted = 0;
    uint32_t bytes = 0;         // packed region bytes so far (has_whole())
    uint64_t opened_ns = 0;     // first packet in (for FLUSH_US)
    uint64_t submitted_ns = 0;  // handed to the device thread
    bool completed = false;     // the task came back (not yet applied)
    bool done = false;          // verdicts set, ready to leave
    bool chained = false;       // stage_verdicts are valid
  };
  struct DeviceState {
    offload::Channel* channel = nullptr;
    std::vector<std::unique_ptr<TaskBuffers>> tasks;
    std::vector<TaskBuffers*> free;
    Held* open = nullptr;
    bool usable = true;  // this element's kernel built on the device
  };
  struct FlowBucket {
    uint32_t in_flight = 0;
    int32_t device = 0;
  };

  Derived& self() { return static_cast<Derived&>(*this); }

  static Result<std::unique_ptr<offload::HostBuffer>> alloc(offload::Device& dev, size_t bytes) {
    if (bytes == 0) return std::unique_ptr<offload::HostBuffer>();
    return dev.alloc_host(bytes);
  }

  // A chained stage's arguments in the head's task: its items are input 2 + s, its results
  // output s.
  static std::vector<offload::TaskArg> remap(std::vector<offload::TaskArg> args, size_t s) {
    for (offload::TaskArg& a : args) {
      if (a.kind == offload::TaskArg::Kind::kInput && a.index == offload::kItemsInput)
        a.index = static_cast<uint32_t>(offload::kRegionsInput + s);
      else if (a.kind == offload::TaskArg::Kind::kOutput && a.index == offload::kResultsOutput)
        a.index = static_cast<uint32_t>(s);
    }
    return args;
  }

  Result<std::unique_ptr<TaskBuffers>> make_task(offload::Device& dev, size_t index,
                                                 const std::vector<offload::TaskArg>& args) {
    auto t = std::make_unique<TaskBuffers>();
    t->device = index;
    const uint32_t capacity = aggregate_ * kMaxBatch;
    auto in = alloc(dev, size_t{capacity} * Derived::kInputBytes);
    if (!in) return make_error(in.error());
    auto out = alloc(dev, size_t{capacity} * Derived::kOutputBytes);
    if (!out) return make_error(out.error());
    t->in = std::move(in.value());
    t->out = std::move(out.value());
    offload::OffloadTask& task = t->task;
    task.inputs = {{t->in.get(), Derived::kInputBytes}, {}, {}};
    task.outputs = {{t->out.get(), Derived::kOutputBytes}};
    if constexpr (has_whole()) {
      auto bytes = alloc(dev, task_bytes_);
      if (!bytes) return make_error(bytes.error());
      auto regions = alloc(dev, size_t{capacity} * sizeof(offload::Region));
      if (!regions) return make_error(regions.error());
      t->bytes = std::move(bytes.value());
      t->regions = std::move(regions.value());
      task.inputs[offload::kBytesInput] = {t->bytes.get(), 0};
      task.inputs[offload::kRegionsInput] = {t->regions.get(), sizeof(offload::Region)};
      if (region_written())
        task.outputs.push_back({t->bytes.get(), 0, 0, static_cast<int32_t>(offload::kBytesInput)});
    }
    writes_ = region_written();
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
    h->src.clear();
    h->verdicts.clear();
    h->stage_verdicts.clear();
    h->emitted = 0;
    h->bytes = 0;
    h->submitted_ns = 0;
    h->completed = false;
    h->done = false;
    h->chained = false;
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

  // Derived's gather; a region must lie within the packet and fit max_bytes.
  bool gather_one(Packet* p, uint8_t* item, offload::PacketRegion& region) {
    if constexpr (has_whole()) {
      if (!self().gather(p, item, region)) return false;
      const uint32_t len = length(p);
      if (region.offset > len || region.length > len - region.offset ||
          region.length + region.grow > Derived::kWholePacket.max_bytes)
        return false;
      return region.grow == 0 ||
             (region.offset + region.length == len && rte_pktmbuf_tailroom(p) >= region.grow);
    } else {
      return self().gather(p, item);
    }
  }

  // Gathers packet p (batch slot i; `left` packets of the batch still to come, p included) into
  // the open task of device d, with the items of every chained stage.
  bool take(PacketBatch& batch, uint32_t i, Packet* p, size_t d, uint32_t left) {
    Held* h = devices_[d].open;
    if (h == nullptr) return false;  // the device went silent: this packet stays on the CPU
    size_t k = h->pkts.size();
    offload::PacketRegion r;
    if (!gather_one(p, h->task->in_item(k), r)) return false;
    for (size_t s = 1; s <= followers_.size(); ++s) {
      offload::PacketRegion fr;
      if (!followers_[s - 1]->stage_gather(p, h->task->stage_item(s, k), fr) ||
          (has_whole() && (fr.offset != r.offset || fr.length != r.length || fr.grow != r.grow)))
        return false;  // the chain runs whole on the device or whole on the CPU
    }
    if constexpr (has_whole()) {
      const uint32_t align = Derived::kWholePacket.align;
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
      std::memcpy(h->task->bytes->template as<uint8_t>() + at, data(p) + r.offset, r.length);
      h->task->regions->template as<offload::Region>()[k] = {at, r.length};
      h->bytes = at + r.length + r.grow;
      h->src.push_back(r);
    }
    h->pkts.push_back(p);
    if (affinity_) {  // flows are tracked only when they steer packets
      const uint16_t b = bucket_of(p);
      h->buckets.push_back(b);
      ++flows_[b].in_flight;
      flows_[b].device = static_cast<int32_t>(h->device);
    }
    ++held_;
    batch.exclude(i);
    return true;
  }

  // Items of packet k of `from` (gathered, then the task filled up) into slot 0 of `to`.
  void move_items(TaskBuffers& from, TaskBuffers& to, size_t k) {
    std::memcpy(to.in_item(0), from.in_item(k), Derived::kInputBytes);
    for (size_t s = 1; s <= followers_.size(); ++s)
      std::memcpy(to.stage_item(s, 0), from.stage_item(s, k),
                  followers_[s - 1]->stage_input_bytes());
  }

  // AFFINITY on a CPU batch: packets of flows in flight on a device go to that device's task.
  void follow_flows(PacketBatch& batch) {
    batch.for_each([&](uint32_t i, Packet* p) {
      const FlowBucket& f = flows_[bucket_of(p)];
      if (f.in_flight == 0) return;
      const auto d = static_cast<size_t>(f.device);
      if (open_task(d, 1) != nullptr && take(batch, i, p, d, 1)) ++affinity_packets_;
    });
  }

  void submit(size_t d) {
    DeviceState& ds = devices_[d];
    Held* h = ds.open;
    ds.open = nullptr;
    offload::OffloadTask& t = h->task->task;
    t.items = static_cast<uint32_t>(h->pkts.size());
    t.batches = std::max<uint32_t>(t.batches, 1);
    if constexpr (has_whole()) {
      t.inputs[offload::kBytesInput].bytes = h->bytes;
      if (writes_) t.outputs.back().bytes = h->bytes;
    }
    ++tasks_;
    device_packets_ += h->pkts.size();
    offload::DeviceStats& st = service_->stats(d);
    st.add(st.packets, h->pkts.size());
    h->submitted_ns = now_ns();
    if (!ds.channel->submit(&t)) {  // this worker's ring is full: the CPU runs the task
      t.status = offload::TaskStatus::kFailed;
      complete(*h->task);
    }
  }

  // Takes the device's finished tasks; returns how many.
  uint32_t collect(size_t d) {
    uint32_t n = 0;
    while (offload::OffloadTask* t = devices_[d].channel->poll()) {
      complete(*static_cast<TaskBuffers*>(t->context));
      ++n;
    }
    return n;
  }

  // Applies a finished task's results (or, when it failed, runs the CPU function) to its
  // packets and frees its buffers.
  void complete(TaskBuffers& t) {
    if (t.held == nullptr) {  // abandoned after a timeout: its packets were re-run already
      devices_[t.device].free.push_back(&t);
      return;
    }
    Held& h = *t.held;
    offload::DeviceStats& st = service_->stats(h.device);
    if (t.task.status == offload::TaskStatus::kOk) {
      st.add(st.tasks_ok, 1);
      st.add(st.task_ns, now_ns() - h.submitted_ns);
    } else {
      st.add(st.tasks_failed, 1);
    }
    h.completed = true;
  }

  // Applies the completed tasks at the head of the order, oldest first, so that results reach
  // the packets (and stateful post-processing such as an alert log sees them) in the order the
  // packets came, whatever order the device finished in; frees their buffers. Returns how many.
  uint32_t apply_completed() {
    uint32_t n = 0;
    for (Held* h : fifo_) {
      if (h->done) continue;
      if (!h->completed) break;
      TaskBuffers& t = *h->task;
      h->verdicts.resize(h->pkts.size());
      if (t.task.status == offload::TaskStatus::kOk) {
        apply_results(t, *h);
      } else {
        ++tasks_failed_;
        run_on_cpu(*h);
      }
      h->task = nullptr;
      h->done = true;
      t.held = nullptr;
      devices_[h->device].free.push_back(&t);
      ++n;
    }
    return n;
  }

  // Derived's apply, with the packet's region when it takes one.
  Verdict apply_one(Packet* p, const uint8_t* result, const offload::PacketRegion& region) {
    if constexpr (requires { self().apply(p, result, region); })
      return self().apply(p, result, region);
    else
      return self().apply(p, result);
  }

  // A completed task: regions back into the packets (when rewritten), then the verdicts of this
  // element and of each chained stage the packet reaches.
  void apply_results(const TaskBuffers& t, Held& h) {
    const size_t n = h.pkts.size();
    if constexpr (has_whole()) {
      if (writes_) {
        const uint8_t* bytes = t.bytes->template as<uint8_t>();
        const offload::Region* packed = t.regions->template as<offload::Region>();
        for (size_t k = 0; k < n; ++k) {
          const offload::PacketRegion& r = h.src[k];
          uint8_t* at = data(h.pkts[k]) + r.offset;
          if (r.grow != 0 &&
              rte_pktmbuf_append(h.pkts[k], static_cast<uint16_t>(r.grow)) == nullptr)
            continue;  // cannot happen: gather checked the tailroom
          std::memcpy(at, bytes + packed[k].offset, r.length + r.grow);
        }
      }
    }
    const uint8_t* results = t.out ? t.out->template as<uint8_t>() : nullptr;
    auto region = [&h](size_t k) { return has_whole() ? h.src[k] : offload::PacketRegion{}; };
    for (size_t k = 0; k < n; ++k)
      h.verdicts[k] = apply_one(h.pkts[k], results + k * Derived::kOutputBytes, region(k));
    const size_t f = followers_.size();
    if (f == 0) return;
    h.chained = true;
    h.stage_verdicts.resize(n * f);
    for (size_t k = 0; k < n; ++k) {
      Verdict v = h.verdicts[k];
      for (size_t s = 1; s <= f && !v.is_drop() && v.port() == 0; ++s) {
        const uint32_t bytes = followers_[s - 1]->stage_output_bytes();
        const uint8_t* r =
            bytes != 0 ? t.stage_out[s - 1]->template as<uint8_t>() + k * bytes : nullptr;
        v = followers_[s - 1]->stage_apply(h.pkts[k], r, region(k));
        h.stage_verdicts[k * f + s - 1] = v;
      }
    }
  }

  // A chained batch from the head: the verdicts it computed for this stage. A packet it has none
  // for (it cannot happen: only the head feeds this element) gets the CPU function.
  void pass_chained(PacketBatch& batch) {
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
    self().process_cpu(rest);
    for (uint32_t j = 0; j < rest.count(); ++j) batch.set_result(slots[j], rest.result(j));
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
  // buffers stay with the device thread until it hands the task back (complete() frees them).
  void abandon(Held& h) {
    service_->device(h.device).mark_down();
    ++tasks_timed_out_;
    h.task->held = nullptr;
    h.task = nullptr;
    run_on_cpu(h);
    h.done = true;
  }

  // Up to one batch of the oldest finished task's packets into `out`, with their verdicts (and
  // those of the chained stages, which they pass next).
  void emit(PacketBatch& out) {
    Held& h = *fifo_.front();
    const size_t n = std::min<size_t>(kMaxBatch, h.pkts.size() - h.emitted);
    const size_t f = followers_.size();
    emit_count_ = 0;
    out.anno().device = static_cast<int32_t>(h.device);  // the decision the packets were given
    if (h.chained) {
      out.anno().chained = static_cast<const OffloadStage*>(this);
      std::copy_n(h.pkts.begin() + static_cast<std::ptrdiff_t>(h.emitted), n, emit_pkts_.begin());
      std::copy_n(h.stage_verdicts.begin() + static_cast<std::ptrdiff_t>(h.emitted * f), n * f,
                  emit_verdicts_.begin());
      emit_count_ = static_cast<uint32_t>(n);
    }
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
  uint32_t timeout_ms_ = offload::default_task_timeout_ms();
  uint64_t timeout_ns_ = 0;
  bool affinity_ = false;
  bool chain_enabled_ = true, fuse_enabled_ = true;
  uint32_t task_bytes_ = kDefaultTaskBytes;
  bool writes_ = false;  // some stage rewrites the packet regions
  std::vector<std::vector<offload::TaskArg>> device_args_;
  std::vector<OffloadStage*> followers_;  // the stages this element chained, in order
  const OffloadStage* head_ = nullptr;    // the element that chained this one
  size_t stage_ = 0;
  std::array<Packet*, kMaxBatch> emit_pkts_{};  // the last chained batch handed on
  std::vector<Verdict> emit_verdicts_;          // and its stage verdicts, f per packet
  uint32_t emit_count_ = 0;
  uint64_t chained_packets_ = 0;
  uint64_t held_ = 0;
  uint64_t cpu_batches_ = 0, device_batches_ = 0, device_packets_ = 0, tasks_ = 0,
           tasks_failed_ = 0, no_device_batches_ = 0, affinity_packets_ = 0, waits_ = 0,
           tasks_timed_out_ = 0;
};

}  // namespace fulcrum
