// The CUDA backend: every GPU the CUDA runtime sees. The runtime is linked statically, so the
// binary runs where libcudart is not installed; without a driver or a GPU, cudaGetDeviceCount
// fails and the backend contributes no device (silently). Kernels are the ones compiled in from
// kernels/*.cl through the .cu files the build writes (offload/cuda/cuda_kernels.hh), launched by
// name with cudaLaunchKernel.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "offload/cuda/cuda_kernels.hh"
#include "offload/device.hh"
#include "offload/discovery.hh"
#include "offload/numa.hh"

namespace fulcrum::offload {
namespace {

constexpr uint32_t kDefaultBlock = 256;
constexpr size_t kMaxKernelArgs = 16;

std::vector<CudaKernelEntry>& kernel_table() {
  static std::vector<CudaKernelEntry> table;
  return table;
}

Error cuda_error(const std::string& what, cudaError_t e) {
  return make_error("cuda: " + what + " failed: " + cudaGetErrorString(e));
}

class CudaDeviceBuffer;
class CudaHostBuffer;
class CudaQueue;

// What one device has handed out, so that release() can give the device back to the driver and
// reacquire() can put everything back (Device::release). `mu` guards the sets and `released`;
// buffers and queues register themselves when made and leave when destroyed.
struct CudaResources {
  explicit CudaResources(int o) : ordinal(o) {}
  const int ordinal;
  std::mutex mu;
  std::atomic<bool> released{false};
  std::set<CudaDeviceBuffer*> buffers;
  std::set<CudaHostBuffer*> hosts;
  std::set<CudaQueue*> queues;
};

constexpr size_t kPage = 4096;

Status take_device(CudaResources& r);

// How many device objects of this process hold each GPU. Every discovery makes new ones (two
// offload services at once, a test binary's), and each keeps its own resources, but all of them
// share the GPU's primary context: release() resets it (cudaDeviceReset), which would destroy
// the streams and memory of the others under them (seen on an H200: a test binary that released
// a GPU another service held died at exit in cudaStreamSynchronize). A GPU held twice is not
// releasable. Never destroyed: device objects may be destroyed at exit.
struct Holders {
  std::mutex mu;
  std::map<int, int> count;  // ordinal -> live device objects
};

Holders& holders() {
  static auto* h = new Holders;
  return *h;
}

class CudaDeviceBuffer final : public DeviceBuffer {
 public:
  // Registered by the device, under its lock.
  CudaDeviceBuffer(std::shared_ptr<CudaResources> r, void* ptr, size_t bytes)
      : DeviceBuffer(bytes), r_(std::move(r)), ptr_(ptr) {}
  ~CudaDeviceBuffer() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    r_->buffers.erase(this);
    if (ptr_ == nullptr) return;
    cudaSetDevice(r_->ordinal);
    cudaFree(ptr_);
  }
  void* ptr() const { return ptr_; }

  // release(): the contents to the host, the device memory freed; reacquire(): back again.
  cudaError_t evict() {
    if (ptr_ == nullptr) return cudaSuccess;
    shadow_.resize(size());
    cudaError_t e = cudaMemcpy(shadow_.data(), ptr_, size(), cudaMemcpyDeviceToHost);
    if (e != cudaSuccess) return e;
    e = cudaFree(ptr_);
    ptr_ = nullptr;
    return e;
  }
  cudaError_t restore() {
    if (ptr_ != nullptr || size() == 0) return cudaSuccess;
    cudaError_t e = cudaMalloc(&ptr_, size());
    if (e != cudaSuccess) {
      ptr_ = nullptr;
      return e;
    }
    e = cudaMemcpy(ptr_, shadow_.data(), size(), cudaMemcpyHostToDevice);
    std::vector<char>().swap(shadow_);
    return e;
  }

 private:
  std::shared_ptr<CudaResources> r_;
  void* ptr_;
  std::vector<char> shadow_;
};

// Page-aligned host memory registered with the driver (page-locked, so copies are DMA). Not
// cudaHostAlloc: that memory would go with the context at release(); registered memory stays
// the process's own and is only unregistered, then registered again at reacquire().
class CudaHostBuffer final : public HostBuffer {
 public:
  CudaHostBuffer(std::shared_ptr<CudaResources> r, void* ptr, size_t bytes, size_t registered)
      : HostBuffer(ptr, bytes, true), r_(std::move(r)), registered_(registered) {}
  ~CudaHostBuffer() override {
    {
      std::lock_guard<std::mutex> lock(r_->mu);
      r_->hosts.erase(this);
      if (!r_->released.load(std::memory_order_relaxed)) cudaHostUnregister(data());
    }
    std::free(data());
  }
  cudaError_t evict() { return cudaHostUnregister(data()); }
  cudaError_t restore() { return cudaHostRegister(data(), registered_, cudaHostRegisterPortable); }

 private:
  std::shared_ptr<CudaResources> r_;
  size_t registered_;
};

class CudaKernel final : public Kernel {
 public:
  explicit CudaKernel(const CudaKernelEntry& e)
      : Kernel(e.name, e.signature), function_(e.function) {}
  const void* function() const { return function_; }

 private:
  const void* function_;
};

class CudaQueue final : public Queue {
 public:
  // Registered by the device, under its lock.
  CudaQueue(std::shared_ptr<CudaResources> r, cudaStream_t s, cudaEvent_t e)
      : r_(std::move(r)), ordinal_(r_->ordinal), stream_(s), mark_(e) {}
  ~CudaQueue() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    r_->queues.erase(this);
    evict();
  }

  // release(): the stream and its event destroyed once idle; reacquire(): made again.
  cudaError_t evict() {
    if (stream_ == nullptr) return cudaSuccess;
    cudaSetDevice(ordinal_);
    const cudaError_t e = cudaStreamSynchronize(stream_);
    cudaEventDestroy(mark_);
    cudaStreamDestroy(stream_);
    stream_ = nullptr;
    mark_ = nullptr;
    return e;
  }
  // A released device is taken back before work is queued on it (Device::release).
  Status ensure() {
    if (!r_->released.load(std::memory_order_acquire)) return {};
    std::lock_guard<std::mutex> lock(r_->mu);
    return take_device(*r_);
  }

  cudaError_t restore() {
    if (stream_ != nullptr) return cudaSuccess;
    cudaError_t e = cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking);
    if (e != cudaSuccess) return e;
    e = cudaEventCreateWithFlags(&mark_, cudaEventDisableTiming);
    // An event never recorded reads as complete, as a fresh queue's does.
    return e;
  }

  Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                        size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("cuda: copy_to_device out of bounds");
    if (Status st = ensure(); !st) return st;
    cudaSetDevice(ordinal_);
    const cudaError_t e =
        cudaMemcpyAsync(static_cast<char*>(static_cast<CudaDeviceBuffer&>(dst).ptr()) + dst_offset,
                        src.as<const char>() + src_offset, bytes, cudaMemcpyHostToDevice, stream_);
    if (e != cudaSuccess) return cuda_error("cudaMemcpyAsync(to device)", e);
    return {};
  }

  Status copy_to_host(HostBuffer& dst, size_t dst_offset, const DeviceBuffer& src,
                      size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("cuda: copy_to_host out of bounds");
    if (Status st = ensure(); !st) return st;
    cudaSetDevice(ordinal_);
    const cudaError_t e = cudaMemcpyAsync(
        dst.as<char>() + dst_offset,
        static_cast<const char*>(static_cast<const CudaDeviceBuffer&>(src).ptr()) + src_offset,
        bytes, cudaMemcpyDeviceToHost, stream_);
    if (e != cudaSuccess) return cuda_error("cudaMemcpyAsync(to host)", e);
    return {};
  }

  Status launch(const Kernel& kernel, LaunchDims dims, std::span<const KernelArg> args) override {
    if (Status s = check_args(kernel, args); !s) return s;
    if (args.size() > kMaxKernelArgs) return make_error("cuda: too many kernel arguments");
    if (dims.items == 0) return {};
    if (Status st = ensure(); !st) return st;  // before the buffers' addresses are read
    void* ptrs[kMaxKernelArgs];
    uint32_t values[kMaxKernelArgs];
    void* slots[kMaxKernelArgs];
    for (size_t i = 0; i < args.size(); ++i) {
      if (args[i].kind == KernelArg::Kind::kBuffer) {
        ptrs[i] = static_cast<const CudaDeviceBuffer*>(args[i].buffer)->ptr();
        slots[i] = &ptrs[i];
      } else {
        values[i] = args[i].value;
        slots[i] = &values[i];
      }
    }
    const uint32_t block = dims.group != 0 ? dims.group : kDefaultBlock;
    const dim3 grid((dims.items + block - 1) / block);
    cudaSetDevice(ordinal_);
    const cudaError_t e = cudaLaunchKernel(static_cast<const CudaKernel&>(kernel).function(), grid,
                                           dim3(block), slots, 0, stream_);
    if (e != cudaSuccess) return cuda_error("cudaLaunchKernel(" + kernel.name() + ")", e);
    return {};
  }

  Status record() override {
    if (Status st = ensure(); !st) return st;
    cudaSetDevice(ordinal_);
    const cudaError_t e = cudaEventRecord(mark_, stream_);
    if (e != cudaSuccess) return cuda_error("cudaEventRecord", e);
    return {};
  }

  // Released: nothing can be queued, so everything recorded has finished.
  Result<bool> query() override {
    if (mark_ == nullptr) return true;
    const cudaError_t e = cudaEventQuery(mark_);
    if (e == cudaSuccess) return true;
    if (e == cudaErrorNotReady) return false;
    return cuda_error("queued work", e);
  }

  Status wait() override {
    if (mark_ == nullptr) return {};
    const cudaError_t e = cudaEventSynchronize(mark_);
    if (e != cudaSuccess) return cuda_error("cudaEventSynchronize", e);
    return {};
  }

 private:
  std::shared_ptr<CudaResources> r_;
  int ordinal_;
  cudaStream_t stream_;
  cudaEvent_t mark_;
};

// Makes the device current, reacquiring it first when released; under r.mu.
Status take_device(CudaResources& r) {
  if (cudaError_t e = cudaSetDevice(r.ordinal); e != cudaSuccess)
    return cuda_error("cudaSetDevice", e);
  if (!r.released.load(std::memory_order_relaxed)) return {};
  for (CudaHostBuffer* h : r.hosts)
    if (cudaError_t e = h->restore(); e != cudaSuccess)
      return cuda_error("reacquire: cudaHostRegister", e);
  for (CudaDeviceBuffer* b : r.buffers)
    if (cudaError_t e = b->restore(); e != cudaSuccess) return cuda_error("reacquire: a buffer", e);
  for (CudaQueue* q : r.queues)
    if (cudaError_t e = q->restore(); e != cudaSuccess) return cuda_error("reacquire: a queue", e);
  r.released.store(false, std::memory_order_release);
  return {};
}

class CudaDevice final : public Device {
 public:
  CudaDevice(int ordinal, const cudaDeviceProp& prop, int driver)
      : ordinal_(ordinal), r_(std::make_shared<CudaResources>(ordinal)) {
    {
      std::lock_guard<std::mutex> lock(holders().mu);
      ++holders().count[ordinal_];
    }
    info_.backend = Backend::kCuda;
    info_.kind = DeviceKind::kGpu;
    info_.name = prop.name;
    info_.platform = "CUDA driver " + std::to_string(driver / 1000) + "." +
                     std::to_string(driver % 1000 / 10) + ", sm_" + std::to_string(prop.major) +
                     std::to_string(prop.minor);
    info_.global_memory = prop.totalGlobalMem;
    info_.compute_units = static_cast<uint32_t>(prop.multiProcessorCount);
    info_.pci_bus_id =
        pci_bus_id(static_cast<uint32_t>(prop.pciDomainID), static_cast<uint32_t>(prop.pciBusID),
                   static_cast<uint32_t>(prop.pciDeviceID), 0);
    info_.numa_node = pci_numa_node(info_.pci_bus_id).value_or(-1);
  }

  ~CudaDevice() override {
    std::lock_guard<std::mutex> lock(holders().mu);
    --holders().count[ordinal_];
  }

  const DeviceInfo& info() const override { return info_; }

  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take(); !st) return make_error(st.error());
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) return cuda_error("cudaMalloc(" + std::to_string(bytes) + ")", e);
    auto b = std::make_unique<CudaDeviceBuffer>(r_, p, bytes);
    r_->buffers.insert(b.get());
    return std::unique_ptr<DeviceBuffer>(std::move(b));
  }

  Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) override {
    const size_t registered = std::max(kPage, (bytes + kPage - 1) / kPage * kPage);
    void* p = std::aligned_alloc(kPage, registered);
    if (p == nullptr)
      return make_error("cuda: cannot allocate " + std::to_string(bytes) + " bytes");
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take(); !st) {
      std::free(p);
      return make_error(st.error());
    }
    const cudaError_t e = cudaHostRegister(p, registered, cudaHostRegisterPortable);
    if (e != cudaSuccess) {
      std::free(p);
      return cuda_error("cudaHostRegister(" + std::to_string(bytes) + ")", e);
    }
    auto h = std::make_unique<CudaHostBuffer>(r_, p, bytes, registered);
    r_->hosts.insert(h.get());
    return std::unique_ptr<HostBuffer>(std::move(h));
  }

  Result<std::unique_ptr<Queue>> create_queue() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take(); !st) return make_error(st.error());
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) return cuda_error("cudaStreamCreate", e);
    cudaEvent_t ev = nullptr;
    e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      cudaStreamDestroy(s);
      return cuda_error("cudaEventCreate", e);
    }
    auto q = std::make_unique<CudaQueue>(r_, s, ev);
    r_->queues.insert(q.get());
    return std::unique_ptr<Queue>(std::move(q));
  }

  Result<const Kernel*> kernel(std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return static_cast<const Kernel*>(it->second.get());
    const CudaKernelEntry* entry = find_cuda_kernel(name);
    if (entry == nullptr) return make_error("cuda: no kernel '" + std::string(name) + "'");
    std::lock_guard<std::mutex> taken(r_->mu);
    if (Status st = take(); !st) return make_error(st.error());
    cudaFuncAttributes attr{};
    const cudaError_t e = cudaFuncGetAttributes(&attr, entry->function);
    if (e != cudaSuccess) return cuda_error("loading kernel " + std::string(name), e);
    auto [pos, added] = kernels_.emplace(std::string(name), std::make_unique<CudaKernel>(*entry));
    return static_cast<const Kernel*>(pos->second.get());
  }

  Status upload(DeviceBuffer& dst, const void* src, size_t bytes) override {
    if (bytes > dst.size()) return make_error("cuda: upload larger than the buffer");
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take(); !st) return st;
    const cudaError_t e =
        cudaMemcpy(static_cast<CudaDeviceBuffer&>(dst).ptr(), src, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return cuda_error("cudaMemcpy", e);
    return {};
  }

  bool releasable() const override {
    std::lock_guard<std::mutex> lock(holders().mu);
    return holders().count[ordinal_] == 1;
  }
  bool released() const override { return r_->released.load(std::memory_order_acquire); }

  Status release() override {
    // Held across the reset: no other device object of this GPU is made meanwhile.
    std::lock_guard<std::mutex> held(holders().mu);
    if (holders().count[ordinal_] != 1)
      return make_error("cuda: device " + std::to_string(ordinal_) +
                        " is held by another device object of this process; releasing it "
                        "would reset the context under the other's streams and memory");
    std::lock_guard<std::mutex> lock(r_->mu);
    if (r_->released.load(std::memory_order_relaxed)) return {};
    cudaSetDevice(ordinal_);
    for (CudaQueue* q : r_->queues)
      if (cudaError_t e = q->evict(); e != cudaSuccess) return cuda_error("release: a queue", e);
    for (CudaDeviceBuffer* b : r_->buffers)
      if (cudaError_t e = b->evict(); e != cudaSuccess) return cuda_error("release: a buffer", e);
    for (CudaHostBuffer* h : r_->hosts)
      if (cudaError_t e = h->evict(); e != cudaSuccess)
        return cuda_error("release: cudaHostUnregister", e);
    if (cudaError_t e = cudaDeviceReset(); e != cudaSuccess)
      return cuda_error("release: cudaDeviceReset", e);
    r_->released.store(true, std::memory_order_release);
    return {};
  }

  Status reacquire() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    return take();
  }

 private:
  Status take() { return take_device(*r_); }

  int ordinal_;
  std::shared_ptr<CudaResources> r_;
  DeviceInfo info_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<CudaKernel>, std::less<>> kernels_;
};

std::vector<std::unique_ptr<Device>> discover_cuda() {
  std::vector<std::unique_ptr<Device>> out;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device / no driver" error
    return out;
  }
  int driver = 0;
  cudaDriverGetVersion(&driver);
  for (int i = 0; i < count; ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    out.push_back(std::make_unique<CudaDevice>(i, prop, driver));
  }
  return out;
}

const BackendRegistration kRegistration{Backend::kCuda, discover_cuda};

}  // namespace

CudaKernelRegistration::CudaKernelRegistration(CudaKernelEntry entry) {
  kernel_table().push_back(entry);
}

const CudaKernelEntry* find_cuda_kernel(std::string_view name) {
  for (const CudaKernelEntry& e : kernel_table())
    if (name == e.name) return &e;
  return nullptr;
}

}  // namespace fulcrum::offload
