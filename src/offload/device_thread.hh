// DeviceThread: the thread that drives one device (NBA §3.2: one per device per NUMA node).
//
// Workers attach once and get a Channel: a pair of single-producer single-consumer lock-free
// rings, tasks in and finished tasks out, so workers never contend with each other. The device
// thread gathers submitted tasks, runs each on the next free one of its `queues` command queues
// (CUDA streams / OpenCL queues), so copies and kernels of several tasks overlap, polls their
// completion without blocking, and returns each task to its own worker's completion ring, which
// the worker checks in its I/O loop.
//
// Failure: when any call on the device fails, the device is marked down and every task in
// flight or waiting comes back with status kFailed (the worker re-runs it on the CPU); tasks
// submitted after that come back failed at once. Every submitted task comes back exactly once.
//
// Releasing an idle device (Device::release; docs/offload.md): with release_after_ms > 0, once
// nothing has been submitted, queued or in flight for that long, the thread releases its device
// (a CUDA context held idle keeps a GPU at its boost clock); the next task reacquires it before
// it starts (the first task after a release waits for that: a new context and the tables copied
// back, milliseconds to hundreds). A failed release or reacquire marks the device down, as any
// failed device call does. Only devices that can give something back (Device::releasable) and
// only when one thread drives the device (a device with threads on several NUMA nodes is never
// released: the service leaves release_after_ms at 0 there). set_release_after_ms changes it
// while the thread runs (PolicyBalancer's energy policy turns it on for the devices it uses).
//
// Lifetime: create(), attach() the workers, start(). The destructor stops the thread after it
// has run or failed every task submitted before; channels stay valid until then, so workers
// must stop submitting and collect their tasks first.
#pragma once

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/result.hh"
#include "offload/device.hh"
#include "offload/spsc_ring.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

struct DeviceThreadConfig {
  uint32_t queues = 4;         // tasks in flight on the device at once
  uint32_t ring_size = 256;    // tasks in flight per channel (submitted, not yet collected)
  uint32_t max_channels = 64;  // workers that can attach
  std::vector<int> cpus;       // pin the thread to these CPUs (empty: do not pin)
  int numa_node = -1;          // the node whose workers attach (-1: any; for reports)
  // Polling loops with nothing to do before the thread sleeps idle_sleep_us between polls;
  // 0 for pure polling (a dedicated core, as NBA runs it).
  uint32_t idle_spins = 4096;
  uint32_t idle_sleep_us = 50;
  // Release the device after this long with nothing to do (0: never); see the top.
  uint32_t release_after_ms = 0;
};

class Channel {
 public:
  explicit Channel(uint32_t id, uint32_t ring_size)
      : id_(id), submitted_(ring_size), done_(ring_size) {}

  // Worker side (one thread per channel). False when this worker already has ring_size tasks
  // outstanding: run the batches on the CPU or collect completions first.
  bool submit(OffloadTask* task);
  // A finished task (status kOk or kFailed), or nullptr.
  OffloadTask* poll();
  // Submitted and not yet collected.
  uint32_t outstanding() const { return outstanding_; }

 private:
  friend class DeviceThread;
  uint32_t id_;
  uint32_t outstanding_ = 0;  // worker-only
  SpscRing<OffloadTask*> submitted_;
  SpscRing<OffloadTask*> done_;
};

class DeviceThread {
 public:
  static Result<std::unique_ptr<DeviceThread>> create(Device& device,
                                                      const DeviceThreadConfig& config = {});
  ~DeviceThread();
  DeviceThread(const DeviceThread&) = delete;
  DeviceThread& operator=(const DeviceThread&) = delete;

  // A channel for one worker; fails when max_channels are attached. Safe while running.
  Result<Channel*> attach();
  void start();

  Device& device() { return device_; }
  const DeviceThreadConfig& config() const { return config_; }
  uint64_t tasks_ok() const { return ok_.load(std::memory_order_relaxed); }
  uint64_t tasks_failed() const { return failed_.load(std::memory_order_relaxed); }
  // The most tasks that were on the device at the same time.
  uint32_t max_in_flight() const { return max_in_flight_.load(std::memory_order_relaxed); }
  // The time at least one task was on the device (the union of the tasks' spans, from start to
  // the poll that saw it done) up to now: tasks overlap on the device's queues, so the sum of
  // their times overstates how long the device worked.
  uint64_t busy_ns() const;
  // Releases of the device, reacquisitions (by this thread before a task, or by another thread
  // that needed the device: an upload, an allocation), and the time it spent released up to now.
  uint64_t releases() const { return releases_.load(std::memory_order_relaxed); }
  uint64_t reacquires() const { return reacquires_.load(std::memory_order_relaxed); }
  uint64_t released_ns() const;
  bool released() const { return released_since_ns_.load(std::memory_order_acquire) != 0; }
  // The idle time after which the device is released (0: never); starts at the config's.
  uint32_t release_after_ms() const { return release_after_ms_.load(std::memory_order_relaxed); }
  void set_release_after_ms(uint32_t ms) { release_after_ms_.store(ms, std::memory_order_relaxed); }

 private:
  struct Slot {
    std::unique_ptr<TaskExecutor> exec;
    OffloadTask* task = nullptr;
  };

  DeviceThread(Device& device, const DeviceThreadConfig& config);
  void loop();
  bool gather();
  bool poll_slots();
  bool start_tasks();
  void complete(OffloadTask* task, TaskStatus status, const std::string& error = {});
  void fail_device(const std::string& error);
  // Releases the device once it has been idle for release_after_ms; `idle_since` is when this
  // idle spell began (0: it begins now).
  void maybe_release(uint64_t& idle_since);
  // Takes a released device back before a task starts; false when that failed (device down).
  bool reacquire();
  // The released spell ends (the device was taken back, by this thread or another).
  void end_release();
  // The busy spell ends at `now` (the last task on the device finished or failed).
  void end_busy(uint64_t now);

  Device& device_;
  DeviceThreadConfig config_;
  std::vector<Slot> slots_;
  std::unique_ptr<std::unique_ptr<Channel>[]> channels_;
  std::atomic<uint32_t> channel_count_{0};
  std::mutex attach_mu_;
  std::deque<OffloadTask*> pending_;  // device thread only
  uint32_t in_flight_ = 0;            // device thread only
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> ok_{0};
  std::atomic<uint64_t> failed_{0};
  std::atomic<uint32_t> max_in_flight_{0};
  std::atomic<uint64_t> busy_since_ns_{0};  // start of the busy spell in progress; 0: idle
  std::atomic<uint64_t> busy_total_ns_{0};  // busy spells that have ended
  std::atomic<uint32_t> release_after_ms_{0};
  std::atomic<uint64_t> releases_{0};
  std::atomic<uint64_t> reacquires_{0};
  std::atomic<uint64_t> released_since_ns_{0};  // task_clock_ns() at the release; 0: not released
  std::atomic<uint64_t> released_total_ns_{0};  // released spells that have ended
  std::thread thread_;
};

}  // namespace fulcrum::offload
