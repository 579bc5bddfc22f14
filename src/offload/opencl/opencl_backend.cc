// The OpenCL backend: every device of every platform the ICD loader finds (on these machines,
// PoCL's CPU device). Kernels come from the sources embedded at build time, built with
// clBuildProgram on a device's first kernel lookup and cached with the device. A device can be
// released when idle and taken back (Device::release; docs/offload.md "Releasing an idle device").
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "offload/device.hh"
#include "offload/discovery.hh"
#include "offload/numa.hh"
#include "offload/opencl/opencl_sources.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kDefaultGroupSize = 64;
constexpr size_t kPage = 4096;

Error cl_error(const std::string& what, cl_int code) {
  return make_error("opencl: " + what + " failed (error " + std::to_string(code) + ")");
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t n = 0;
  if (clGetDeviceInfo(d, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetDeviceInfo(d, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t n = 0;
  if (clGetPlatformInfo(p, what, 0, nullptr, &n) != CL_SUCCESS || n == 0) return {};
  std::string s(n, '\0');
  if (clGetPlatformInfo(p, what, n, s.data(), nullptr) != CL_SUCCESS) return {};
  s.resize(s.find('\0') == std::string::npos ? n : s.find('\0'));
  return s;
}

class ClDeviceBuffer;
class ClHostBuffer;
class ClQueue;
class ClKernel;

// What one device has handed out, so that release() can give the device back to the driver and
// reacquire() can put everything back (Device::release). `mu` guards the handles, the sets and
// `released`; buffers, queues and kernels register themselves when made and leave when
// destroyed. The context lives as long as anything made in it (shared ownership).
struct ClResources {
  ClResources(cl_device_id d, cl_context c, cl_command_queue q) : id(d), context(c), setup(q) {}
  ~ClResources() {
    if (program != nullptr) clReleaseProgram(program);
    if (setup != nullptr) clReleaseCommandQueue(setup);
    if (context != nullptr) clReleaseContext(context);
  }
  const cl_device_id id;
  std::mutex mu;
  std::atomic<bool> released{false};
  cl_context context;
  cl_command_queue setup;  // uploads, host-buffer maps, the copies of a release
  cl_program program = nullptr;
  // The program built for the device, kept across a release: reacquire() loads it again without
  // compiling (a rebuild from source when the driver gives no binary).
  std::vector<unsigned char> binary;
  std::set<ClDeviceBuffer*> buffers;
  std::set<ClHostBuffer*> hosts;
  std::set<ClQueue*> queues;
  std::set<ClKernel*> kernels;
};

Status take_device(ClResources& r);

class ClDeviceBuffer final : public DeviceBuffer {
 public:
  // Registered by the device, under its lock.
  ClDeviceBuffer(std::shared_ptr<ClResources> r, cl_mem mem, size_t bytes)
      : DeviceBuffer(bytes), r_(std::move(r)), mem_(mem) {}
  ~ClDeviceBuffer() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    r_->buffers.erase(this);
    if (mem_ != nullptr) clReleaseMemObject(mem_);
  }
  cl_mem mem() const { return mem_; }

  // release(): the contents to the host, the device memory freed; reacquire(): back again.
  cl_int evict() {
    if (mem_ == nullptr) return CL_SUCCESS;
    shadow_.resize(size());
    cl_int rc = clEnqueueReadBuffer(r_->setup, mem_, CL_TRUE, 0, size(), shadow_.data(), 0, nullptr,
                                    nullptr);
    if (rc != CL_SUCCESS) return rc;
    rc = clReleaseMemObject(mem_);
    mem_ = nullptr;
    return rc;
  }
  cl_int restore() {
    if (mem_ != nullptr) return CL_SUCCESS;
    cl_int rc = CL_SUCCESS;
    mem_ = clCreateBuffer(r_->context, CL_MEM_READ_WRITE, size(), nullptr, &rc);
    if (rc != CL_SUCCESS) {
      mem_ = nullptr;
      return rc;
    }
    rc = clEnqueueWriteBuffer(r_->setup, mem_, CL_TRUE, 0, size(), shadow_.data(), 0, nullptr,
                              nullptr);
    std::vector<char>().swap(shadow_);
    return rc;
  }

 private:
  std::shared_ptr<ClResources> r_;
  cl_mem mem_;
  std::vector<char> shadow_;
};

// Page-aligned host memory of the process's own, wrapped in a buffer object the runtime may pin
// (CL_MEM_USE_HOST_PTR, mapped for its whole life). Not CL_MEM_ALLOC_HOST_PTR: that memory
// belongs to the context and would go with it at release(); this memory stays where it is and is
// only unwrapped, then wrapped again at reacquire().
class ClHostBuffer final : public HostBuffer {
 public:
  ClHostBuffer(std::shared_ptr<ClResources> r, void* data, size_t bytes, size_t wrapped)
      : HostBuffer(data, bytes, true), r_(std::move(r)), wrapped_(wrapped) {}
  ~ClHostBuffer() override {
    {
      std::lock_guard<std::mutex> lock(r_->mu);
      r_->hosts.erase(this);
      evict();
    }
    std::free(data());
  }
  cl_int evict() {
    if (mem_ == nullptr) return CL_SUCCESS;
    cl_int rc = clEnqueueUnmapMemObject(r_->setup, mem_, data(), 0, nullptr, nullptr);
    if (rc == CL_SUCCESS) rc = clFinish(r_->setup);
    clReleaseMemObject(mem_);
    mem_ = nullptr;
    return rc;
  }
  cl_int restore() {
    if (mem_ != nullptr) return CL_SUCCESS;
    cl_int rc = CL_SUCCESS;
    cl_mem m =
        clCreateBuffer(r_->context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, wrapped_, data(), &rc);
    if (rc != CL_SUCCESS) return rc;
    void* p = clEnqueueMapBuffer(r_->setup, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, wrapped_, 0,
                                 nullptr, nullptr, &rc);
    if (rc != CL_SUCCESS || p != data()) {  // the map of host memory is that memory
      if (rc == CL_SUCCESS) clEnqueueUnmapMemObject(r_->setup, m, p, 0, nullptr, nullptr);
      clFinish(r_->setup);
      clReleaseMemObject(m);
      return rc != CL_SUCCESS ? rc : CL_MAP_FAILURE;
    }
    mem_ = m;
    return CL_SUCCESS;
  }

 private:
  std::shared_ptr<ClResources> r_;
  size_t wrapped_;
  cl_mem mem_ = nullptr;
};

class ClKernel final : public Kernel {
 public:
  // Registered by the device, under its lock.
  ClKernel(std::shared_ptr<ClResources> r, std::string name, std::string signature, cl_kernel k)
      : Kernel(std::move(name), std::move(signature)), r_(std::move(r)), kernel_(k) {}
  ~ClKernel() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    r_->kernels.erase(this);
    if (kernel_ != nullptr) clReleaseKernel(kernel_);
  }
  cl_kernel handle() const { return kernel_; }
  // clSetKernelArg + enqueue must not interleave between threads.
  std::mutex& mutex() const { return mu_; }

  cl_int evict() {
    const cl_int rc = kernel_ != nullptr ? clReleaseKernel(kernel_) : CL_SUCCESS;
    kernel_ = nullptr;
    return rc;
  }
  cl_int restore() {
    if (kernel_ != nullptr) return CL_SUCCESS;
    cl_int rc = CL_SUCCESS;
    kernel_ = clCreateKernel(r_->program, name().c_str(), &rc);
    if (rc != CL_SUCCESS) kernel_ = nullptr;
    return rc;
  }

 private:
  std::shared_ptr<ClResources> r_;
  cl_kernel kernel_;
  mutable std::mutex mu_;
};

class ClQueue final : public Queue {
 public:
  // Registered by the device, under its lock.
  ClQueue(std::shared_ptr<ClResources> r, cl_command_queue q) : r_(std::move(r)), queue_(q) {}
  ~ClQueue() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    r_->queues.erase(this);
    evict();
  }

  // release(): the queue finished and destroyed; reacquire(): made again. A released queue has
  // nothing in flight: its mark reads complete.
  cl_int evict() {
    if (queue_ == nullptr) return CL_SUCCESS;
    const cl_int rc = clFinish(queue_);
    if (mark_ != nullptr) clReleaseEvent(mark_);
    clReleaseCommandQueue(queue_);
    mark_ = nullptr;
    queue_ = nullptr;
    return rc;
  }
  cl_int restore() {
    if (queue_ != nullptr) return CL_SUCCESS;
    cl_int rc = CL_SUCCESS;
    queue_ = clCreateCommandQueue(r_->context, r_->id, 0, &rc);
    if (rc != CL_SUCCESS) queue_ = nullptr;
    return rc;
  }
  // A released device is taken back before work is queued on it (Device::release).
  Status ensure() {
    if (!r_->released.load(std::memory_order_acquire)) return {};
    std::lock_guard<std::mutex> lock(r_->mu);
    return take_device(*r_);
  }

  Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                        size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("opencl: copy_to_device out of bounds");
    if (Status st = ensure(); !st) return st;
    const cl_int rc =
        clEnqueueWriteBuffer(queue_, static_cast<ClDeviceBuffer&>(dst).mem(), CL_FALSE, dst_offset,
                             bytes, src.as<const char>() + src_offset, 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clEnqueueWriteBuffer", rc);
    return {};
  }

  Status copy_to_host(HostBuffer& dst, size_t dst_offset, const DeviceBuffer& src,
                      size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("opencl: copy_to_host out of bounds");
    if (Status st = ensure(); !st) return st;
    const cl_int rc =
        clEnqueueReadBuffer(queue_, static_cast<const ClDeviceBuffer&>(src).mem(), CL_FALSE,
                            src_offset, bytes, dst.as<char>() + dst_offset, 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clEnqueueReadBuffer", rc);
    return {};
  }

  Status launch(const Kernel& kernel, LaunchDims dims, std::span<const KernelArg> args) override {
    if (Status s = check_args(kernel, args); !s) return s;
    if (dims.items == 0) return {};
    if (Status st = ensure(); !st) return st;  // before the buffers' handles are read
    const auto& k = static_cast<const ClKernel&>(kernel);
    std::lock_guard<std::mutex> lock(k.mutex());
    for (size_t i = 0; i < args.size(); ++i) {
      cl_int rc;
      if (args[i].kind == KernelArg::Kind::kBuffer) {
        cl_mem m = static_cast<const ClDeviceBuffer*>(args[i].buffer)->mem();
        rc = clSetKernelArg(k.handle(), static_cast<cl_uint>(i), sizeof(m), &m);
      } else {
        cl_uint v = args[i].value;
        rc = clSetKernelArg(k.handle(), static_cast<cl_uint>(i), sizeof(v), &v);
      }
      if (rc != CL_SUCCESS) return cl_error("clSetKernelArg(" + kernel.name() + ")", rc);
    }
    // Always an explicit work-group size: left to the driver, it follows the global size, and
    // PoCL compiles the kernel again for every work-group size it meets (tasks of varying item
    // counts then spend their time in LLVM).
    const size_t local = dims.group != 0 ? dims.group : kDefaultGroupSize;
    const size_t global = (dims.items + local - 1) / local * local;
    const cl_int rc = clEnqueueNDRangeKernel(queue_, k.handle(), 1, nullptr, &global, &local, 0,
                                             nullptr, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clEnqueueNDRangeKernel(" + kernel.name() + ")", rc);
    return {};
  }

  Status record() override {
    if (Status st = ensure(); !st) return st;
    cl_event e = nullptr;
    cl_int rc = clEnqueueMarkerWithWaitList(queue_, 0, nullptr, &e);
    if (rc != CL_SUCCESS) return cl_error("clEnqueueMarkerWithWaitList", rc);
    if (mark_ != nullptr) clReleaseEvent(mark_);
    mark_ = e;
    rc = clFlush(queue_);
    if (rc != CL_SUCCESS) return cl_error("clFlush", rc);
    return {};
  }

  Result<bool> query() override {
    if (mark_ == nullptr) return true;
    cl_int status = CL_COMPLETE;
    const cl_int rc =
        clGetEventInfo(mark_, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(status), &status, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clGetEventInfo", rc);
    if (status < 0) return cl_error("queued work", status);
    return status == CL_COMPLETE;
  }

  Status wait() override {
    if (queue_ == nullptr) return {};
    const cl_int rc = clFinish(queue_);
    if (rc != CL_SUCCESS) return cl_error("clFinish", rc);
    Result<bool> done = query();
    if (!done) return make_error(done.error());
    return {};
  }

 private:
  std::shared_ptr<ClResources> r_;
  cl_command_queue queue_;
  cl_event mark_ = nullptr;
};

Status build_program(ClResources& r);

// Evicts or restores (`step`) every resource of one kind; the first failure is reported as `what`.
template <class T>
Status each(const std::set<T*>& resources, cl_int (T::*step)(), const char* what) {
  for (T* x : resources)
    if (cl_int e = (x->*step)(); e != CL_SUCCESS) return cl_error(what, e);
  return {};
}

// Takes the device back when released: a new context and setup queue, the program loaded from
// its binary, the host memory wrapped again, the buffers made and filled from their host copies,
// the queues and kernels made again; under r.mu.
Status take_device(ClResources& r) {
  if (!r.released.load(std::memory_order_relaxed)) return {};
  cl_int rc = CL_SUCCESS;
  r.context = clCreateContext(nullptr, 1, &r.id, nullptr, nullptr, &rc);
  if (rc != CL_SUCCESS) {
    r.context = nullptr;
    return cl_error("reacquire: clCreateContext", rc);
  }
  r.setup = clCreateCommandQueue(r.context, r.id, 0, &rc);
  if (rc != CL_SUCCESS) {
    r.setup = nullptr;
    return cl_error("reacquire: clCreateCommandQueue", rc);
  }
  if (!r.kernels.empty())
    if (Status s = build_program(r); !s) return s;
  if (Status s = each(r.hosts, &ClHostBuffer::restore, "reacquire: a host buffer"); !s) return s;
  if (Status s = each(r.buffers, &ClDeviceBuffer::restore, "reacquire: a buffer"); !s) return s;
  if (Status s = each(r.queues, &ClQueue::restore, "reacquire: a queue"); !s) return s;
  if (Status s = each(r.kernels, &ClKernel::restore, "reacquire: a kernel"); !s) return s;
  r.released.store(false, std::memory_order_release);
  return {};
}

// Builds the embedded kernels for the device, from the binary of an earlier build when there is
// one; under r.mu.
Status build_program(ClResources& r) {
  if (r.program != nullptr) return {};
  cl_int rc = CL_SUCCESS;
  cl_program p = nullptr;
  if (!r.binary.empty()) {
    const unsigned char* bin = r.binary.data();
    const size_t n = r.binary.size();
    cl_int status = CL_SUCCESS;
    p = clCreateProgramWithBinary(r.context, 1, &r.id, &n, &bin, &status, &rc);
    if (rc != CL_SUCCESS || status != CL_SUCCESS) {
      if (p != nullptr) clReleaseProgram(p);
      p = nullptr;
    }
  }
  if (p == nullptr) {
    std::vector<const char*> texts;
    for (size_t i = 0; i < kOpenCLSourceCount; ++i) texts.push_back(kOpenCLSources[i].text);
    p = clCreateProgramWithSource(r.context, static_cast<cl_uint>(texts.size()), texts.data(),
                                  nullptr, &rc);
    if (rc != CL_SUCCESS) return cl_error("clCreateProgramWithSource", rc);
  }
  rc = clBuildProgram(p, 1, &r.id, "-cl-kernel-arg-info", nullptr, nullptr);
  if (rc != CL_SUCCESS) {
    size_t n = 0;
    clGetProgramBuildInfo(p, r.id, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
    std::string log(n, '\0');
    clGetProgramBuildInfo(p, r.id, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
    clReleaseProgram(p);
    return make_error("opencl: building the kernels failed: " + log);
  }
  r.program = p;
  return {};
}

class ClDevice final : public Device {
 public:
  ClDevice(cl_platform_id platform, cl_device_id id, cl_context ctx, cl_command_queue setup)
      : r_(std::make_shared<ClResources>(id, ctx, setup)) {
    cl_device_type type = 0;
    clGetDeviceInfo(id, CL_DEVICE_TYPE, sizeof(type), &type, nullptr);
    info_.backend = Backend::kOpenCL;
    info_.kind = (type & CL_DEVICE_TYPE_GPU)           ? DeviceKind::kGpu
                 : (type & CL_DEVICE_TYPE_ACCELERATOR) ? DeviceKind::kAccelerator
                                                       : DeviceKind::kCpu;
    info_.name = device_string(id, CL_DEVICE_NAME);
    info_.platform = platform_string(platform, CL_PLATFORM_NAME) + " " +
                     platform_string(platform, CL_PLATFORM_VERSION);
    cl_ulong mem = 0;
    clGetDeviceInfo(id, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, nullptr);
    info_.global_memory = mem;
    cl_uint units = 0;
    clGetDeviceInfo(id, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(units), &units, nullptr);
    info_.compute_units = units;
    // Where the device sits (cl_khr_pci_bus_info; PoCL's CPU device has none).
    if (device_string(id, CL_DEVICE_EXTENSIONS).find("cl_khr_pci_bus_info") != std::string::npos) {
      cl_device_pci_bus_info_khr pci{};
      const cl_int rc = clGetDeviceInfo(id, CL_DEVICE_PCI_BUS_INFO_KHR, sizeof(pci), &pci, nullptr);
      if (rc == CL_SUCCESS)
        info_.pci_bus_id =
            pci_bus_id(pci.pci_domain, pci.pci_bus, pci.pci_device, pci.pci_function);
    }
    info_.numa_node = pci_numa_node(info_.pci_bus_id).value_or(-1);
  }

  ~ClDevice() override { kernels_.clear(); }

  const DeviceInfo& info() const override { return info_; }

  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take_device(*r_); !st) return make_error(st.error());
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(r_->context, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    if (rc != CL_SUCCESS) return cl_error("clCreateBuffer(" + std::to_string(bytes) + ")", rc);
    auto b = std::make_unique<ClDeviceBuffer>(r_, m, bytes);
    r_->buffers.insert(b.get());
    return std::unique_ptr<DeviceBuffer>(std::move(b));
  }

  Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) override {
    const size_t wrapped = std::max(kPage, (bytes + kPage - 1) / kPage * kPage);
    void* p = std::aligned_alloc(kPage, wrapped);
    if (p == nullptr)
      return make_error("opencl: cannot allocate " + std::to_string(bytes) + " bytes");
    std::unique_ptr<ClHostBuffer> h;  // made before the lock: a failed one is freed after it
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take_device(*r_); !st) {
      std::free(p);
      return make_error(st.error());
    }
    h = std::make_unique<ClHostBuffer>(r_, p, bytes, wrapped);
    if (cl_int rc = h->restore(); rc != CL_SUCCESS)
      return cl_error("clCreateBuffer(host, " + std::to_string(bytes) + ")", rc);
    r_->hosts.insert(h.get());
    return std::unique_ptr<HostBuffer>(std::move(h));
  }

  Result<std::unique_ptr<Queue>> create_queue() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take_device(*r_); !st) return make_error(st.error());
    cl_int rc = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(r_->context, r_->id, 0, &rc);
    if (rc != CL_SUCCESS) return cl_error("clCreateCommandQueue", rc);
    auto queue = std::make_unique<ClQueue>(r_, q);
    r_->queues.insert(queue.get());
    return std::unique_ptr<Queue>(std::move(queue));
  }

  Result<const Kernel*> kernel(std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return static_cast<const Kernel*>(it->second.get());
    std::lock_guard<std::mutex> taken(r_->mu);
    if (Status st = take_device(*r_); !st) return make_error(st.error());
    if (Status s = build_program(*r_); !s) return make_error(s.error());
    const std::string n(name);
    cl_int rc = CL_SUCCESS;
    cl_kernel k = clCreateKernel(r_->program, n.c_str(), &rc);
    if (rc != CL_SUCCESS) return make_error("opencl: no kernel '" + n + "'");
    Result<std::string> sig = signature(k);
    if (!sig) {
      clReleaseKernel(k);
      return make_error(sig.error());
    }
    auto made = std::make_unique<ClKernel>(r_, n, sig.value(), k);
    r_->kernels.insert(made.get());
    auto [pos, added] = kernels_.emplace(n, std::move(made));
    return static_cast<const Kernel*>(pos->second.get());
  }

  Status upload(DeviceBuffer& dst, const void* src, size_t bytes) override {
    if (bytes > dst.size()) return make_error("opencl: upload larger than the buffer");
    std::lock_guard<std::mutex> lock(r_->mu);
    if (Status st = take_device(*r_); !st) return st;
    const cl_int rc = clEnqueueWriteBuffer(r_->setup, static_cast<ClDeviceBuffer&>(dst).mem(),
                                           CL_TRUE, 0, bytes, src, 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clEnqueueWriteBuffer", rc);
    return {};
  }

  bool releasable() const override { return true; }
  bool released() const override { return r_->released.load(std::memory_order_acquire); }

  // The queues finished and destroyed, the kernels released, the buffers' contents copied to the
  // host and their memory freed, the host memory unwrapped, the program's binary kept, then the
  // context released: the driver holds nothing of this process (a GPU may drop its clocks).
  Status release() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    ClResources& r = *r_;
    if (r.released.load(std::memory_order_relaxed)) return {};
    if (Status s = each(r.queues, &ClQueue::evict, "release: a queue"); !s) return s;
    if (Status s = each(r.kernels, &ClKernel::evict, "release: a kernel"); !s) return s;
    if (Status s = each(r.buffers, &ClDeviceBuffer::evict, "release: a buffer"); !s) return s;
    if (Status s = each(r.hosts, &ClHostBuffer::evict, "release: a host buffer"); !s) return s;
    if (r.program != nullptr) {
      if (r.binary.empty()) keep_binary(r);
      clReleaseProgram(r.program);
      r.program = nullptr;
    }
    clReleaseCommandQueue(r.setup);
    r.setup = nullptr;
    const cl_int rc = clReleaseContext(r.context);
    r.context = nullptr;
    r.released.store(true, std::memory_order_release);
    if (rc != CL_SUCCESS) return cl_error("release: clReleaseContext", rc);
    return {};
  }

  Status reacquire() override {
    std::lock_guard<std::mutex> lock(r_->mu);
    return take_device(*r_);
  }

 private:
  // The program's binary for the one device, when the driver gives one (left empty if not).
  static void keep_binary(ClResources& r) {
    size_t n = 0;
    if (clGetProgramInfo(r.program, CL_PROGRAM_BINARY_SIZES, sizeof(n), &n, nullptr) !=
            CL_SUCCESS ||
        n == 0)
      return;
    std::vector<unsigned char> bin(n);
    unsigned char* ptr = bin.data();
    if (clGetProgramInfo(r.program, CL_PROGRAM_BINARIES, sizeof(ptr), &ptr, nullptr) == CL_SUCCESS)
      r.binary = std::move(bin);
  }

  // 'b' for each __global pointer parameter, 'u' for each uint (see KernelArg): spelled uint, or
  // uint32_t as kernels/common/portable.h names it (the compiler reports the typedef's name).
  static Result<std::string> signature(cl_kernel k) {
    cl_uint n = 0;
    cl_int rc = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof(n), &n, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clGetKernelInfo", rc);
    std::string sig;
    for (cl_uint i = 0; i < n; ++i) {
      cl_kernel_arg_address_qualifier q = 0;
      rc = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(q), &q, nullptr);
      if (rc != CL_SUCCESS) return cl_error("clGetKernelArgInfo", rc);
      if (q == CL_KERNEL_ARG_ADDRESS_GLOBAL) {
        sig += 'b';
        continue;
      }
      char type[64] = {};
      rc = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof(type) - 1, type, nullptr);
      if (rc != CL_SUCCESS) return cl_error("clGetKernelArgInfo", rc);
      if (std::string_view(type) != "uint" && std::string_view(type) != "uint32_t")
        return make_error("opencl: kernel parameter " + std::to_string(i) + " has type '" + type +
                          "'; kernels take __global pointers and uint32_t only");
      sig += 'u';
    }
    return sig;
  }

  std::shared_ptr<ClResources> r_;
  DeviceInfo info_;
  std::mutex mu_;
  std::map<std::string, std::unique_ptr<ClKernel>, std::less<>> kernels_;
};

std::vector<std::unique_ptr<Device>> discover_opencl() {
  std::vector<std::unique_ptr<Device>> out;
  cl_uint nplat = 0;
  if (clGetPlatformIDs(0, nullptr, &nplat) != CL_SUCCESS || nplat == 0) return out;
  std::vector<cl_platform_id> plats(nplat);
  if (clGetPlatformIDs(nplat, plats.data(), nullptr) != CL_SUCCESS) return out;
  for (cl_platform_id p : plats) {
    cl_uint ndev = 0;
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 0, nullptr, &ndev) != CL_SUCCESS || ndev == 0)
      continue;
    std::vector<cl_device_id> devs(ndev);
    if (clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, ndev, devs.data(), nullptr) != CL_SUCCESS) continue;
    for (cl_device_id d : devs) {
      cl_int rc = CL_SUCCESS;
      cl_context ctx = clCreateContext(nullptr, 1, &d, nullptr, nullptr, &rc);
      if (rc != CL_SUCCESS) continue;
      cl_command_queue setup = clCreateCommandQueue(ctx, d, 0, &rc);
      if (rc != CL_SUCCESS) {
        clReleaseContext(ctx);
        continue;
      }
      out.push_back(std::make_unique<ClDevice>(p, d, ctx, setup));
    }
  }
  return out;
}

const BackendRegistration kRegistration{Backend::kOpenCL, discover_opencl};

}  // namespace
}  // namespace fulcrum::offload
