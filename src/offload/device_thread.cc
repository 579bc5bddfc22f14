#include "offload/device_thread.hh"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <chrono>
#include <string>

namespace fulcrum::offload {

bool Channel::submit(OffloadTask* task) {
  if (outstanding_ >= done_.capacity()) return false;
  task->channel = id_;
  task->status = TaskStatus::kPending;
  if (!submitted_.push(task)) return false;
  ++outstanding_;
  return true;
}

OffloadTask* Channel::poll() {
  OffloadTask* t = nullptr;
  if (!done_.pop(t)) return nullptr;
  --outstanding_;
  return t;
}

Result<std::unique_ptr<DeviceThread>> DeviceThread::create(Device& device,
                                                           const DeviceThreadConfig& config) {
  if (config.queues == 0 || config.ring_size == 0 || config.max_channels == 0)
    return make_error("device thread: queues, ring_size and max_channels must be positive");
  std::unique_ptr<DeviceThread> t(new DeviceThread(device, config));
  for (uint32_t i = 0; i < config.queues; ++i) {
    Result<std::unique_ptr<TaskExecutor>> exec = TaskExecutor::create(device);
    if (!exec) return make_error(device.label() + ": " + exec.error());
    t->slots_.push_back(Slot{std::move(exec.value()), nullptr});
  }
  return t;
}

DeviceThread::DeviceThread(Device& device, const DeviceThreadConfig& config)
    : device_(device),
      config_(config),
      channels_(std::make_unique<std::unique_ptr<Channel>[]>(config.max_channels)),
      release_after_ms_(config.release_after_ms) {}

DeviceThread::~DeviceThread() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

Result<Channel*> DeviceThread::attach() {
  std::lock_guard<std::mutex> lock(attach_mu_);
  const uint32_t n = channel_count_.load(std::memory_order_relaxed);
  if (n >= config_.max_channels)
    return make_error("device thread: more than " + std::to_string(config_.max_channels) +
                      " channels");
  channels_[n] = std::make_unique<Channel>(n, config_.ring_size);
  channel_count_.store(n + 1, std::memory_order_release);
  return channels_[n].get();
}

void DeviceThread::start() {
  if (thread_.joinable()) return;
  thread_ = std::thread([this] { loop(); });
  if (!config_.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c : config_.cpus)
      if (c >= 0 && c < CPU_SETSIZE) CPU_SET(c, &set);
    pthread_setaffinity_np(thread_.native_handle(), sizeof(set), &set);
  }
}

void DeviceThread::loop() {
  uint32_t idle = 0;
  uint64_t idle_since = 0;
  for (;;) {
    const bool stopping = stop_.load(std::memory_order_acquire);
    bool busy = gather();
    busy |= poll_slots();
    busy |= start_tasks();
    if (stopping && !busy && pending_.empty() && in_flight_ == 0) return;
    if (busy) {
      idle = 0;
      idle_since = 0;
      continue;
    }
    // Taken back by another thread (an element's upload or allocation): the spell ends.
    if (released() && !device_.released()) end_release();
    if (release_after_ms() > 0) maybe_release(idle_since);
    if (++idle >= config_.idle_spins && config_.idle_sleep_us > 0)
      std::this_thread::sleep_for(std::chrono::microseconds(config_.idle_sleep_us));
  }
}

void DeviceThread::maybe_release(uint64_t& idle_since) {
  if (released() || in_flight_ != 0 || !pending_.empty() || !device_.is_up() ||
      !device_.releasable())
    return;
  constexpr uint64_t kNsPerMs = 1000000;
  const uint64_t now = task_clock_ns();
  if (idle_since == 0) {
    idle_since = now;
    return;
  }
  if (now - idle_since < uint64_t{release_after_ms()} * kNsPerMs) return;
  if (Status st = device_.release(); !st) {
    fail_device(st.error());
    return;
  }
  releases_.fetch_add(1, std::memory_order_relaxed);
  released_since_ns_.store(std::max<uint64_t>(now, 1), std::memory_order_release);
}

bool DeviceThread::reacquire() {
  if (Status st = device_.reacquire(); !st) {
    fail_device(st.error());
    return false;
  }
  end_release();
  return true;
}

void DeviceThread::end_release() {
  const uint64_t since = released_since_ns_.exchange(0, std::memory_order_acq_rel);
  if (since == 0) return;
  released_total_ns_.fetch_add(task_clock_ns() - since, std::memory_order_relaxed);
  reacquires_.fetch_add(1, std::memory_order_relaxed);
}

void DeviceThread::end_busy(uint64_t now) {
  const uint64_t since = busy_since_ns_.exchange(0, std::memory_order_acq_rel);
  if (since != 0 && now > since) busy_total_ns_.fetch_add(now - since, std::memory_order_relaxed);
}

uint64_t DeviceThread::busy_ns() const {
  const uint64_t since = busy_since_ns_.load(std::memory_order_acquire);
  const uint64_t now = task_clock_ns();
  return busy_total_ns_.load(std::memory_order_relaxed) +
         (since != 0 && now > since ? now - since : 0);
}

uint64_t DeviceThread::released_ns() const {
  const uint64_t since = released_since_ns_.load(std::memory_order_acquire);
  return released_total_ns_.load(std::memory_order_relaxed) +
         (since != 0 ? task_clock_ns() - since : 0);
}

// Moves every submitted task to pending_.
bool DeviceThread::gather() {
  bool any = false;
  const uint32_t n = channel_count_.load(std::memory_order_acquire);
  for (uint32_t i = 0; i < n; ++i) {
    OffloadTask* t = nullptr;
    while (channels_[i]->submitted_.pop(t)) {
      pending_.push_back(t);
      any = true;
    }
  }
  return any;
}

bool DeviceThread::poll_slots() {
  bool any = false;
  for (Slot& s : slots_) {
    if (s.task == nullptr) continue;
    Result<bool> done = s.exec->poll();
    if (!done) {
      fail_device(done.error());
      return true;
    }
    if (!done.value()) continue;
    OffloadTask* t = s.task;
    s.task = nullptr;
    --in_flight_;
    t->finished_ns = task_clock_ns();
    if (in_flight_ == 0) end_busy(t->finished_ns);
    complete(t, TaskStatus::kOk);
    any = true;
  }
  return any;
}

bool DeviceThread::start_tasks() {
  if (!pending_.empty() && released() && device_.is_up() && !reacquire()) return true;
  bool any = false;
  for (Slot& s : slots_) {
    if (pending_.empty()) break;
    if (s.task != nullptr) continue;
    OffloadTask* t = pending_.front();
    pending_.pop_front();
    any = true;
    if (!device_.is_up()) {
      complete(t, TaskStatus::kFailed, device_.label() + " is down");
      continue;
    }
    s.task = t;
    ++in_flight_;
    t->started_ns = task_clock_ns();
    if (in_flight_ == 1)
      busy_since_ns_.store(std::max<uint64_t>(t->started_ns, 1), std::memory_order_release);
    if (in_flight_ > max_in_flight_.load(std::memory_order_relaxed))
      max_in_flight_.store(in_flight_, std::memory_order_relaxed);
    if (Status st = s.exec->start(*t); !st) {
      fail_device(st.error());
      return true;
    }
  }
  // Once the device is down, tasks are failed as fast as they arrive.
  while (!device_.is_up() && !pending_.empty()) {
    complete(pending_.front(), TaskStatus::kFailed, device_.label() + " is down");
    pending_.pop_front();
    any = true;
  }
  return any;
}

void DeviceThread::complete(OffloadTask* task, TaskStatus status, const std::string& error) {
  task->status = status;
  task->error = error;
  (status == TaskStatus::kOk ? ok_ : failed_).fetch_add(1, std::memory_order_relaxed);
  // Cannot fail: a channel never has more tasks outstanding than its completion ring holds.
  channels_[task->channel]->done_.push(task);
}

// Marks the device down and hands every task in flight or waiting back as failed. The other
// queues are drained first (errors ignored), so no late copy writes into a task's host buffers
// after its worker has taken it back.
void DeviceThread::fail_device(const std::string& error) {
  device_.mark_down();
  const std::string why = device_.label() + " failed: " + error;
  for (Slot& s : slots_) {
    if (s.task == nullptr) continue;
    static_cast<void>(s.exec->wait());
    complete(s.task, TaskStatus::kFailed, why);
    s.task = nullptr;
  }
  if (in_flight_ != 0) end_busy(task_clock_ns());
  in_flight_ = 0;
  while (!pending_.empty()) {
    complete(pending_.front(), TaskStatus::kFailed, why);
    pending_.pop_front();
  }
}

}  // namespace fulcrum::offload
