// The device API: one small interface that every offload backend (CUDA, OpenCL, emulated)
// implements.
//
//   Device        one accelerator (or a CPU seen through OpenCL): allocates buffers, makes
//                 queues, looks kernels up by name (built once per device, then cached).
//   DeviceBuffer  memory on the device.
//   HostBuffer    host memory the device copies from and to; pinned (page-locked / mapped)
//                 where the backend can, so copies are DMA and asynchronous.
//   Queue         a CUDA stream or an OpenCL in-order command queue: copies and launches run in
//                 the order they are enqueued; record() marks the work so far, query() polls it
//                 without blocking (NBA found polling the cheapest way to learn of completion),
//                 wait() blocks.
//
// Every call returns a Status or Result: backends never throw, abort or print. Once a call has
// failed the device may be unusable; callers mark it down (Device::mark_down) and run the work
// on the CPU instead. Backends are optional at build time and found at run time
// (offload/discovery.hh).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "core/result.hh"

namespace fulcrum::offload {

// kEmu: the emulated device (offload/emu/emu_device.hh), a model on the host, never a GPU.
enum class Backend : uint8_t { kOpenCL, kCuda, kEmu };
enum class DeviceKind : uint8_t { kCpu, kGpu, kAccelerator };

std::string_view backend_name(Backend b);
std::string_view device_kind_name(DeviceKind k);

struct DeviceInfo {
  Backend backend = Backend::kOpenCL;
  DeviceKind kind = DeviceKind::kCpu;
  std::string name;      // as the driver reports it
  std::string platform;  // OpenCL platform, or the CUDA driver version
  uint64_t global_memory = 0;
  uint32_t compute_units = 0;  // OpenCL compute units, CUDA streaming multiprocessors
  std::string pci_bus_id;      // "0000:3b:00.0"; empty when the backend cannot tell
  int numa_node = -1;          // the node the device is attached to; -1 unknown
};

class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  size_t size() const { return bytes_; }

 protected:
  explicit DeviceBuffer(size_t bytes) : bytes_(bytes) {}

 private:
  size_t bytes_;
};

class HostBuffer {
 public:
  virtual ~HostBuffer() = default;
  void* data() const { return data_; }
  size_t size() const { return bytes_; }
  // True when the memory is page-locked (copies are DMA without a staging copy).
  bool pinned() const { return pinned_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(data_);
  }

 protected:
  HostBuffer(void* data, size_t bytes, bool pinned) : data_(data), bytes_(bytes), pinned_(pinned) {}

 private:
  void* data_;
  size_t bytes_;
  bool pinned_;
};

// A kernel argument: a device buffer or a 32-bit unsigned value. Kernels declare their
// parameter list as a signature string, one letter a parameter: 'b' buffer, 'u' uint32.
struct KernelArg {
  enum class Kind : uint8_t { kBuffer, kU32 };
  Kind kind;
  const DeviceBuffer* buffer = nullptr;
  uint32_t value = 0;

  static KernelArg of(const DeviceBuffer& b) { return {Kind::kBuffer, &b, 0}; }
  static KernelArg of(uint32_t v) { return {Kind::kU32, nullptr, v}; }
};

// A kernel, looked up by name on one device.
class Kernel {
 public:
  virtual ~Kernel() = default;
  const std::string& name() const { return name_; }
  const std::string& signature() const { return signature_; }

 protected:
  Kernel(std::string name, std::string signature)
      : name_(std::move(name)), signature_(std::move(signature)) {}

 private:
  std::string name_;
  std::string signature_;
};

// Checks `args` against the kernel's signature (count and kinds).
Status check_args(const Kernel& kernel, std::span<const KernelArg> args);

// A 1-D launch: `items` work items in groups of `group` (0: the backend's default). Kernels get
// the item count as an argument and ignore the work items past it (the grid is rounded up).
struct LaunchDims {
  uint32_t items = 0;
  uint32_t group = 0;
};

class Queue {
 public:
  virtual ~Queue() = default;
  // Asynchronous copies: the host buffer must stay alive and unchanged until completion.
  virtual Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                                size_t src_offset, size_t bytes) = 0;
  virtual Status copy_to_host(HostBuffer& dst, size_t dst_offset, const DeviceBuffer& src,
                              size_t src_offset, size_t bytes) = 0;
  virtual Status launch(const Kernel& kernel, LaunchDims dims, std::span<const KernelArg> args) = 0;
  // Marks everything enqueued so far; query() and wait() refer to the last mark.
  virtual Status record() = 0;
  // Non-blocking: true when the work up to the last record() has finished. An error means the
  // work failed (or the device went away).
  virtual Result<bool> query() = 0;
  virtual Status wait() = 0;
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceInfo& info() const = 0;

  virtual Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) = 0;
  virtual Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) = 0;
  virtual Result<std::unique_ptr<Queue>> create_queue() = 0;
  // The kernel called `name`, built for this device on first use and cached. The pointer lives
  // as long as the device.
  virtual Result<const Kernel*> kernel(std::string_view name) = 0;
  // Synchronous copy of plain host memory into `dst` (tables uploaded once, not per task).
  virtual Status upload(DeviceBuffer& dst, const void* src, size_t bytes) = 0;

  // Releasing an idle device (docs/offload.md, "Releasing an idle device"). A CUDA context held
  // with nothing to do keeps an NVIDIA H200 at its boost clock: 125 W, against 80 W with no
  // context (measured, docs/benchmarks.md). release() hands the device's resources back to the
  // driver while nothing is queued on it; every buffer, host buffer, queue and kernel object stays
  // valid, the contents of device buffers kept on the host. reacquire() takes the device again
  // and puts everything back; any other call on a released device reacquires it first. The
  // device thread drives both (DeviceThreadConfig::release_after_ms); no copy, launch or poll
  // may be in progress on any queue while release() runs. CUDA and OpenCL devices release their
  // context; a backend with nothing to give back keeps the defaults: releasable() is false and
  // both calls do nothing.
  virtual bool releasable() const { return false; }
  virtual Status release() { return {}; }
  virtual Status reacquire() { return {}; }
  virtual bool released() const { return false; }

  // A device is up until someone marks it down after an error; nothing marks it up again.
  bool is_up() const { return up_.load(std::memory_order_acquire); }
  void mark_down() { up_.store(false, std::memory_order_release); }

  // "opencl:0 pthread-cpu" — backend, index among that backend's devices, name.
  std::string label() const;
  int index() const { return index_; }
  void set_index(int index) { index_ = index; }

 private:
  std::atomic<bool> up_{true};
  int index_ = 0;
};

}  // namespace fulcrum::offload
