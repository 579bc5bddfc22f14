// OffloadService: the devices one run offloads to and their device threads, built once per
// process (through SharedStorage) by the first offloadable element that needs them.
//
// Devices come from discover_devices() (FULCRUM_FAIL_DEVICE_AFTER applies, for fallback tests;
// FULCRUM_OFFLOAD_BACKEND=opencl|cuda|emu keeps one backend; FULCRUM_EMU_DEVICES or
// --device emu:... adds emulated devices, offload/emu/emu_spec.hh). A balancer's device index is
// the position in devices(). Each element replica attaches its own channel to each device thread.
//
// NUMA (NBA §3.2): one device thread per device per NUMA node that has CPUs, each pinned to its
// node's cores, so a worker talks to a device thread on its own node; thread(d, worker) picks
// the one of the worker's node. On a single-node machine that is one unpinned thread per device
// (pinning to every core would change nothing). Devices report their own node
// (DeviceInfo::numa_node, from the PCI bus id; -1 when the backend cannot tell).
// FULCRUM_DEVICE_THREAD_CPUS=LIST (a CPU list such as 1 or 2-3) pins every device thread to those
// CPUs instead, for experiments where the workers (`--cores`) and the device threads must not
// share a core (an emulated device computing on a core of its own); a list that cannot be read
// is an error. FULCRUM_DEVICE_RELEASE_MS (below) releases an idle device.
// The service also keeps the per-device statistics an adaptive balancer reads (the system
// inspector: batches and packets sent, tasks completed and failed, device time per task).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hh"
#include "offload/device.hh"
#include "offload/device_thread.hh"

namespace fulcrum {
class SharedStorage;
}

namespace fulcrum::offload {

// The default TASK_TIMEOUT_MS of offloadable elements: kDefaultTaskTimeoutMs, or
// FULCRUM_TASK_TIMEOUT_MS from the environment when it holds a positive integer. The tests set it
// high: on a loaded 2-core machine a CPU-run OpenCL device can take seconds per task, which must
// not be taken for a silent device (the timeout path is tested with an explicit TASK_TIMEOUT_MS).
inline constexpr uint32_t kDefaultTaskTimeoutMs = 1000;
inline constexpr const char* kTaskTimeoutEnv = "FULCRUM_TASK_TIMEOUT_MS";
inline constexpr const char* kDeviceThreadCpusEnv = "FULCRUM_DEVICE_THREAD_CPUS";
// FULCRUM_DEVICE_RELEASE_MS=N: device threads release their device after N ms with nothing to do
// (DeviceThreadConfig::release_after_ms; unset or 0: never). Not on machines with several NUMA
// nodes (a device driven by several threads is never released).
inline constexpr const char* kDeviceReleaseEnv = "FULCRUM_DEVICE_RELEASE_MS";
// The same set by the command line (`fulcrum run --release-idle-ms N`), before the service is
// built; it wins over the environment.
void set_device_release_ms(uint32_t ms);
uint32_t default_task_timeout_ms();

struct DeviceStats {
  std::atomic<uint64_t> batches{0};
  std::atomic<uint64_t> packets{0};
  std::atomic<uint64_t> tasks_ok{0};
  std::atomic<uint64_t> tasks_failed{0};
  std::atomic<uint64_t> task_ns{0};  // submit-to-completion time, summed over completed tasks
  // The same time in three parts, summed over completed tasks (OffloadTask's timestamps): waiting
  // for the device thread, on the device (copies and kernels), waiting for the worker to collect.
  std::atomic<uint64_t> queue_ns{0};
  std::atomic<uint64_t> device_ns{0};
  std::atomic<uint64_t> return_ns{0};
  // Windows of kOnWindowNs (the thesis' 40 ms quantum) in which a task completed: the time the
  // device was on, for the energy model (a device the balancer leaves alone for a window counts
  // as off in it, as paper 001 powers an unused GPU off).
  static constexpr uint64_t kOnWindowNs = 40'000'000;
  std::atomic<uint64_t> on_windows{0};
  std::atomic<uint64_t> last_on_window{0};

  void add(std::atomic<uint64_t>& c, uint64_t n) { c.fetch_add(n, std::memory_order_relaxed); }
  // A task completed at `now_ns` (steady clock): counts its window once, whichever worker sees
  // it first (a window older than the last counted is not counted again).
  void mark_on(uint64_t now_ns) {
    const uint64_t w = now_ns / kOnWindowNs;
    uint64_t last = last_on_window.load(std::memory_order_relaxed);
    while (w > last)
      if (last_on_window.compare_exchange_weak(last, w, std::memory_order_relaxed)) {
        on_windows.fetch_add(1, std::memory_order_relaxed);
        return;
      }
  }
};

class OffloadService {
 public:
  static inline const std::string kSharedKey = "offload.service";

  // The process' service (built on first use), or one of the caller's own without storage.
  static Result<std::shared_ptr<const OffloadService>> get(SharedStorage* shared);
  static Result<std::shared_ptr<OffloadService>> create();
  ~OffloadService();

  size_t devices() const { return devices_.size(); }
  Device& device(size_t i) const { return *devices_[i]; }
  // The device thread of the first node (the only one on a single-node machine).
  DeviceThread& thread(size_t i) const { return *threads_[i].front().thread; }
  // The device thread for pipeline replica `worker`: the one on the NUMA node of the CPU that
  // worker runs on (the runtime's i-th EAL worker lcore), else the first.
  DeviceThread& thread(size_t i, int worker) const;
  // Every device thread of device i, one per NUMA node.
  size_t threads(size_t i) const { return threads_[i].size(); }
  DeviceThread& thread_at(size_t i, size_t k) const { return *threads_[i][k].thread; }
  DeviceStats& stats(size_t i) const { return stats_[i]; }
  // Device i is released after `ms` idle from now on (0: never), when one thread drives it;
  // false when several do (a machine with several NUMA nodes: never released).
  bool release_when_idle(size_t i, uint32_t ms) const;

 private:
  OffloadService() = default;

  std::vector<std::unique_ptr<Device>> devices_;
  struct NodeThread {
    int node = -1;
    std::unique_ptr<DeviceThread> thread;
  };
  std::vector<std::vector<NodeThread>> threads_;  // [device][one per node]
  std::vector<int> cpu_node_;                     // NUMA node of each CPU id, -1 unknown
  std::unique_ptr<DeviceStats[]> stats_;
};

}  // namespace fulcrum::offload
