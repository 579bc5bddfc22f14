#include "offload/emu/emu_device.hh"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <queue>
#include <thread>
#include <vector>

#include "offload/discovery.hh"
#include "offload/emu/emu_kernels.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kAlign = 64;
constexpr uint32_t kDefaultGroup = 64;  // work items per group when a launch leaves it to us

std::atomic<int64_t> hidden_host_ns{0};
std::atomic<uint64_t> native_launches{0};

int64_t steady_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// The emulated devices' clock: the steady clock less the host time of host_free launches.
int64_t now_ns() {
  return steady_ns() - hidden_host_ns.load(std::memory_order_relaxed);
}

struct AlignedFree {
  void operator()(void* p) const { std::free(p); }
};
using AlignedBytes = std::unique_ptr<void, AlignedFree>;

AlignedBytes aligned_bytes(size_t bytes) {
  const size_t rounded = std::max<size_t>(kAlign, (bytes + kAlign - 1) / kAlign * kAlign);
  return AlignedBytes(std::aligned_alloc(kAlign, rounded));
}

class EmuDeviceBuffer final : public DeviceBuffer {
 public:
  EmuDeviceBuffer(AlignedBytes mem, size_t bytes) : DeviceBuffer(bytes), mem_(std::move(mem)) {}
  uint8_t* data() const { return static_cast<uint8_t*>(mem_.get()); }

 private:
  AlignedBytes mem_;
};

class EmuHostBuffer final : public HostBuffer {
 public:
  EmuHostBuffer(AlignedBytes mem, size_t bytes)
      : HostBuffer(mem.get(), bytes, /*pinned=*/false), mem_(std::move(mem)) {}

 private:
  AlignedBytes mem_;
};

class EmuKernel final : public Kernel {
 public:
  EmuKernel(const EmuKernelEntry& e, EmuNativeFn native)
      : Kernel(e.name, e.signature), run_(e.run), native_(native) {}
  EmuKernelFn run() const { return run_; }
  EmuNativeFn native() const { return native_; }

 private:
  EmuKernelFn run_;
  EmuNativeFn native_;
};

// The device's engines: when each is next free (steady-clock nanoseconds).
struct Engines {
  std::mutex mu;
  int64_t h2d_free = 0;
  int64_t d2h_free = 0;
  int64_t kernel_free = 0;
};

class EmuQueue final : public Queue {
 public:
  // `released`: the device's flag (EmuDevice::release); queued work takes the device back.
  EmuQueue(const EmuSpec& spec, Engines& engines, std::atomic<bool>& released)
      : spec_(spec), engines_(engines), released_(released) {}

  Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                        size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("emu: copy out of bounds");
    released_.store(false, std::memory_order_release);
    const int64_t t0 = now_ns();
    std::memcpy(static_cast<EmuDeviceBuffer&>(dst).data() + dst_offset,
                static_cast<const uint8_t*>(src.data()) + src_offset, bytes);
    occupy(&Engines::h2d_free, spec_.h2d_ns(bytes), t0);
    return {};
  }
  Status copy_to_host(HostBuffer& dst, size_t dst_offset, const DeviceBuffer& src,
                      size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("emu: copy out of bounds");
    released_.store(false, std::memory_order_release);
    const int64_t t0 = now_ns();
    std::memcpy(static_cast<uint8_t*>(dst.data()) + dst_offset,
                static_cast<const EmuDeviceBuffer&>(src).data() + src_offset, bytes);
    occupy(&Engines::d2h_free, spec_.d2h_ns(bytes), t0);
    return {};
  }
  Status launch(const Kernel& kernel, LaunchDims dims, std::span<const KernelArg> args) override {
    if (Status s = check_args(kernel, args); !s) return s;
    released_.store(false, std::memory_order_release);
    args_.clear();
    for (const KernelArg& a : args)
      args_.push_back(a.kind == KernelArg::Kind::kBuffer
                          ? EmuArg{static_cast<const EmuDeviceBuffer*>(a.buffer)->data(), 0}
                          : EmuArg{nullptr, a.value});
    const int64_t t0 = now_ns();
    const auto& k = static_cast<const EmuKernel&>(kernel);
    if (spec_.units <= 0) {
      const EmuNativeRun native = spec_.native > 0 && k.native() != nullptr
                                      ? k.native()(args_.data(), dims.items)
                                      : EmuNativeRun::kPortable;
      if (native == EmuNativeRun::kFailed)
        return make_error("emu: the native " + std::string(kernel.name()) + " failed");
      if (native == EmuNativeRun::kPortable)
        k.run()(args_.data(), dims.items);
      else
        native_launches.fetch_add(1, std::memory_order_relaxed);
      occupy(&Engines::kernel_free, spec_.kernel_ns(dims.items), t0);
      return {};
    }
    item_ns_.assign(dims.items, 0);
    emu_item_ns = item_ns_.data();
    const int64_t h0 = steady_ns();
    k.run()(args_.data(), dims.items);
    emu_item_ns = nullptr;
    if (spec_.host_free > 0) hidden_host_ns.fetch_add(steady_ns() - h0, std::memory_order_relaxed);
    occupy(&Engines::kernel_free, simt_ns(dims.group), t0);
    return {};
  }
  Status record() override {
    mark_ = ready_ + static_cast<int64_t>(spec_.lat_us * 1e3);
    return {};
  }
  Result<bool> query() override { return now_ns() >= mark_; }
  Status wait() override {
    for (int64_t left = mark_ - now_ns(); left > 0; left = mark_ - now_ns())
      std::this_thread::sleep_for(std::chrono::nanoseconds(left));
    return {};
  }

 private:
  // An operation enqueued at t0 starts when the queue's earlier work and the engine are done and
  // holds the engine for `ns`; it never ends before the host has done it (now).
  void occupy(int64_t Engines::*engine, double ns, int64_t t0) {
    const int64_t done = now_ns();
    std::lock_guard lock(engines_.mu);
    const int64_t start = std::max({ready_, engines_.*engine, t0});
    ready_ = std::max(start + static_cast<int64_t>(ns), done);
    engines_.*engine = ready_;
  }

  // The SIMT model (emu_spec.hh `units`): groups of `group` items each take their slowest
  // item's time times lane_slowdown; each goes to the first free of `units` compute units.
  double simt_ns(uint32_t group) const {
    group = group == 0 ? kDefaultGroup : group;
    const size_t units = static_cast<size_t>(spec_.units);
    std::priority_queue<double, std::vector<double>, std::greater<>> free_at;
    for (size_t u = 0; u < units; ++u) free_at.push(0);
    double makespan = 0;
    for (size_t first = 0; first < item_ns_.size(); first += group) {
      const size_t last = std::min(item_ns_.size(), first + group);
      const double t = static_cast<double>(
                           *std::max_element(item_ns_.begin() + first, item_ns_.begin() + last)) *
                       spec_.lane_slowdown;
      const double end = free_at.top() + t;
      free_at.pop();
      free_at.push(end);
      makespan = std::max(makespan, end);
    }
    return spec_.launch_us * 1e3 + makespan;
  }

  const EmuSpec& spec_;
  Engines& engines_;
  std::atomic<bool>& released_;
  std::vector<EmuArg> args_;
  std::vector<uint32_t> item_ns_;
  int64_t ready_ = 0;
  int64_t mark_ = 0;
};

class EmuDevice final : public Device {
 public:
  explicit EmuDevice(const EmuSpec& spec) : spec_(spec) {
    info_.backend = Backend::kEmu;
    info_.kind = DeviceKind::kAccelerator;
    info_.name = "emulated(" + (spec.text.empty() ? std::string("defaults") : spec.text) + ")";
    info_.platform = spec.native > 0
                         ? "Fulcrum emulated device (native host compute; a model, not a "
                           "measurement)"
                         : "Fulcrum emulated device (a model, not a measurement)";
    // Its memory is the host's; it computes on the one thread that drives it.
    info_.global_memory = static_cast<uint64_t>(sysconf(_SC_PHYS_PAGES)) *
                          static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    info_.compute_units = spec.units > 0 ? static_cast<uint32_t>(spec.units) : 1;
  }
  const DeviceInfo& info() const override { return info_; }

  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    AlignedBytes mem = aligned_bytes(bytes);
    if (!mem) return make_error("emu: cannot allocate " + std::to_string(bytes) + " bytes");
    return std::unique_ptr<DeviceBuffer>(new EmuDeviceBuffer(std::move(mem), bytes));
  }
  Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) override {
    AlignedBytes mem = aligned_bytes(bytes);
    if (!mem) return make_error("emu: cannot allocate " + std::to_string(bytes) + " bytes");
    return std::unique_ptr<HostBuffer>(new EmuHostBuffer(std::move(mem), bytes));
  }
  Result<std::unique_ptr<Queue>> create_queue() override {
    return std::unique_ptr<Queue>(new EmuQueue(spec_, engines_, released_));
  }
  Result<const Kernel*> kernel(std::string_view name) override {
    std::lock_guard lock(kernels_mu_);
    auto it = kernels_.find(std::string(name));
    if (it != kernels_.end()) return static_cast<const Kernel*>(it->second.get());
    const EmuKernelEntry* entry = find_emu_kernel(name);
    if (entry == nullptr) return make_error("emu: no kernel named '" + std::string(name) + "'");
    auto k = std::make_unique<EmuKernel>(*entry, find_emu_native(name));
    const Kernel* out = k.get();
    kernels_.emplace(std::string(name), std::move(k));
    return out;
  }
  // Nothing to give back (its memory is the host's): release and reacquire only flip a flag,
  // so the device thread's releasing is exercised on machines without a GPU.
  bool releasable() const override { return true; }
  bool released() const override { return released_.load(std::memory_order_acquire); }
  Status release() override {
    released_.store(true, std::memory_order_release);
    return {};
  }
  Status reacquire() override {
    released_.store(false, std::memory_order_release);
    return {};
  }

  Status upload(DeviceBuffer& dst, const void* src, size_t bytes) override {
    if (bytes > dst.size()) return make_error("emu: upload larger than the buffer");
    std::memcpy(static_cast<EmuDeviceBuffer&>(dst).data(), src, bytes);
    return {};
  }

 private:
  std::atomic<bool> released_{false};
  EmuSpec spec_;
  DeviceInfo info_;
  Engines engines_;
  std::mutex kernels_mu_;
  std::map<std::string, std::unique_ptr<EmuKernel>, std::less<>> kernels_;
};

std::vector<EmuKernelEntry>& emu_kernels() {
  static std::vector<EmuKernelEntry> kernels;
  return kernels;
}

std::vector<std::pair<const char*, EmuNativeFn>>& emu_natives() {
  static std::vector<std::pair<const char*, EmuNativeFn>> natives;
  return natives;
}

std::vector<std::unique_ptr<Device>> discover_emulated() {
  std::vector<std::unique_ptr<Device>> out;
  Result<std::vector<EmuSpec>> specs = emulated_devices();
  if (!specs) return out;  // OffloadService and the CLI report the error
  for (const EmuSpec& s : specs.value()) out.push_back(make_emulated_device(s));
  return out;
}

const BackendRegistration kEmuBackend{Backend::kEmu, &discover_emulated};

}  // namespace

EmuKernelRegistration::EmuKernelRegistration(EmuKernelEntry entry) {
  emu_kernels().push_back(entry);
}

const EmuKernelEntry* find_emu_kernel(std::string_view name) {
  for (const EmuKernelEntry& e : emu_kernels())
    if (name == e.name) return &e;
  return nullptr;
}

EmuNativeRegistration::EmuNativeRegistration(const char* name, EmuNativeFn fn) {
  emu_natives().emplace_back(name, fn);
}

EmuNativeFn find_emu_native(std::string_view name) {
  for (const auto& [n, fn] : emu_natives())
    if (name == n) return fn;
  return nullptr;
}

std::unique_ptr<Device> make_emulated_device(const EmuSpec& spec) {
  return std::make_unique<EmuDevice>(spec);
}

uint64_t emu_native_launches() {
  return native_launches.load(std::memory_order_relaxed);
}

int64_t emu_hidden_host_ns() {
  return hidden_host_ns.load(std::memory_order_relaxed);
}

}  // namespace fulcrum::offload
