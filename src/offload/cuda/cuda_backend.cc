// The CUDA backend: every GPU the CUDA runtime sees. The runtime is linked statically, so the
// binary runs where libcudart is not installed; without a driver or a GPU, cudaGetDeviceCount
// fails and the backend contributes no device (silently). Kernels are the ones compiled in from
// kernels/*.cl through the .cu files the build writes (offload/cuda/cuda_kernels.hh), launched by
// name with cudaLaunchKernel.
#include <cuda_runtime_api.h>

#include <map>
#include <memory>
#include <mutex>
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

class CudaDeviceBuffer final : public DeviceBuffer {
 public:
  CudaDeviceBuffer(int ordinal, void* ptr, size_t bytes)
      : DeviceBuffer(bytes), ordinal_(ordinal), ptr_(ptr) {}
  ~CudaDeviceBuffer() override {
    cudaSetDevice(ordinal_);
    cudaFree(ptr_);
  }
  void* ptr() const { return ptr_; }

 private:
  int ordinal_;
  void* ptr_;
};

class CudaHostBuffer final : public HostBuffer {
 public:
  CudaHostBuffer(void* ptr, size_t bytes) : HostBuffer(ptr, bytes, true) {}
  ~CudaHostBuffer() override { cudaFreeHost(data()); }
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
  CudaQueue(int ordinal, cudaStream_t s, cudaEvent_t e) : ordinal_(ordinal), stream_(s), mark_(e) {}
  ~CudaQueue() override {
    cudaSetDevice(ordinal_);
    cudaStreamSynchronize(stream_);
    cudaEventDestroy(mark_);
    cudaStreamDestroy(stream_);
  }

  Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                        size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("cuda: copy_to_device out of bounds");
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
    cudaSetDevice(ordinal_);
    const cudaError_t e = cudaEventRecord(mark_, stream_);
    if (e != cudaSuccess) return cuda_error("cudaEventRecord", e);
    return {};
  }

  Result<bool> query() override {
    const cudaError_t e = cudaEventQuery(mark_);
    if (e == cudaSuccess) return true;
    if (e == cudaErrorNotReady) return false;
    return cuda_error("queued work", e);
  }

  Status wait() override {
    const cudaError_t e = cudaEventSynchronize(mark_);
    if (e != cudaSuccess) return cuda_error("cudaEventSynchronize", e);
    return {};
  }

 private:
  int ordinal_;
  cudaStream_t stream_;
  cudaEvent_t mark_;
};

class CudaDevice final : public Device {
 public:
  CudaDevice(int ordinal, const cudaDeviceProp& prop, int driver) : ordinal_(ordinal) {
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

  const DeviceInfo& info() const override { return info_; }

  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    cudaSetDevice(ordinal_);
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, bytes);
    if (e != cudaSuccess) return cuda_error("cudaMalloc(" + std::to_string(bytes) + ")", e);
    return std::unique_ptr<DeviceBuffer>(std::make_unique<CudaDeviceBuffer>(ordinal_, p, bytes));
  }

  Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) override {
    cudaSetDevice(ordinal_);
    void* p = nullptr;
    const cudaError_t e = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (e != cudaSuccess) return cuda_error("cudaHostAlloc(" + std::to_string(bytes) + ")", e);
    return std::unique_ptr<HostBuffer>(std::make_unique<CudaHostBuffer>(p, bytes));
  }

  Result<std::unique_ptr<Queue>> create_queue() override {
    cudaSetDevice(ordinal_);
    cudaStream_t s = nullptr;
    cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    if (e != cudaSuccess) return cuda_error("cudaStreamCreate", e);
    cudaEvent_t ev = nullptr;
    e = cudaEventCreateWithFlags(&ev, cudaEventDisableTiming);
    if (e != cudaSuccess) {
      cudaStreamDestroy(s);
      return cuda_error("cudaEventCreate", e);
    }
    return std::unique_ptr<Queue>(std::make_unique<CudaQueue>(ordinal_, s, ev));
  }

  Result<const Kernel*> kernel(std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return static_cast<const Kernel*>(it->second.get());
    const CudaKernelEntry* entry = find_cuda_kernel(name);
    if (entry == nullptr) return make_error("cuda: no kernel '" + std::string(name) + "'");
    cudaSetDevice(ordinal_);
    cudaFuncAttributes attr{};
    const cudaError_t e = cudaFuncGetAttributes(&attr, entry->function);
    if (e != cudaSuccess) return cuda_error("loading kernel " + std::string(name), e);
    auto [pos, added] = kernels_.emplace(std::string(name), std::make_unique<CudaKernel>(*entry));
    return static_cast<const Kernel*>(pos->second.get());
  }

  Status upload(DeviceBuffer& dst, const void* src, size_t bytes) override {
    if (bytes > dst.size()) return make_error("cuda: upload larger than the buffer");
    cudaSetDevice(ordinal_);
    const cudaError_t e =
        cudaMemcpy(static_cast<CudaDeviceBuffer&>(dst).ptr(), src, bytes, cudaMemcpyHostToDevice);
    if (e != cudaSuccess) return cuda_error("cudaMemcpy", e);
    return {};
  }

 private:
  int ordinal_;
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
