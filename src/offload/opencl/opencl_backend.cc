// The OpenCL backend: every device of every platform the ICD loader finds (on these machines,
// PoCL's CPU device). Kernels come from the sources embedded at build time, built with
// clBuildProgram on a device's first kernel lookup and cached with the device.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <CL/cl_ext.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "offload/device.hh"
#include "offload/discovery.hh"
#include "offload/numa.hh"
#include "offload/opencl/opencl_sources.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kDefaultGroupSize = 64;

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

class ClDeviceBuffer final : public DeviceBuffer {
 public:
  ClDeviceBuffer(cl_mem mem, size_t bytes) : DeviceBuffer(bytes), mem_(mem) {}
  ~ClDeviceBuffer() override { clReleaseMemObject(mem_); }
  cl_mem mem() const { return mem_; }

 private:
  cl_mem mem_;
};

// Pinned host memory the OpenCL way: a buffer allocated by the runtime in host memory
// (CL_MEM_ALLOC_HOST_PTR), mapped once for its whole life.
class ClHostBuffer final : public HostBuffer {
 public:
  ClHostBuffer(cl_mem mem, void* data, size_t bytes, cl_command_queue q)
      : HostBuffer(data, bytes, true), mem_(mem), queue_(q) {
    clRetainCommandQueue(queue_);
  }
  ~ClHostBuffer() override {
    clEnqueueUnmapMemObject(queue_, mem_, data(), 0, nullptr, nullptr);
    clFinish(queue_);
    clReleaseMemObject(mem_);
    clReleaseCommandQueue(queue_);
  }

 private:
  cl_mem mem_;
  cl_command_queue queue_;
};

class ClKernel final : public Kernel {
 public:
  ClKernel(std::string name, std::string signature, cl_kernel k)
      : Kernel(std::move(name), std::move(signature)), kernel_(k) {}
  ~ClKernel() override { clReleaseKernel(kernel_); }
  cl_kernel handle() const { return kernel_; }
  // clSetKernelArg + enqueue must not interleave between threads.
  std::mutex& mutex() const { return mu_; }

 private:
  cl_kernel kernel_;
  mutable std::mutex mu_;
};

class ClQueue final : public Queue {
 public:
  explicit ClQueue(cl_command_queue q) : queue_(q) {}
  ~ClQueue() override {
    clFinish(queue_);
    if (mark_ != nullptr) clReleaseEvent(mark_);
    clReleaseCommandQueue(queue_);
  }

  Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                        size_t src_offset, size_t bytes) override {
    if (dst_offset + bytes > dst.size() || src_offset + bytes > src.size())
      return make_error("opencl: copy_to_device out of bounds");
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
    const cl_int rc =
        clEnqueueReadBuffer(queue_, static_cast<const ClDeviceBuffer&>(src).mem(), CL_FALSE,
                            src_offset, bytes, dst.as<char>() + dst_offset, 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clEnqueueReadBuffer", rc);
    return {};
  }

  Status launch(const Kernel& kernel, LaunchDims dims, std::span<const KernelArg> args) override {
    if (Status s = check_args(kernel, args); !s) return s;
    if (dims.items == 0) return {};
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
    const cl_int rc = clFinish(queue_);
    if (rc != CL_SUCCESS) return cl_error("clFinish", rc);
    Result<bool> done = query();
    if (!done) return make_error(done.error());
    return {};
  }

 private:
  cl_command_queue queue_;
  cl_event mark_ = nullptr;
};

class ClDevice final : public Device {
 public:
  ClDevice(cl_platform_id platform, cl_device_id id, cl_context ctx, cl_command_queue setup)
      : id_(id), context_(ctx), setup_(setup) {
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

  ~ClDevice() override {
    kernels_.clear();
    if (program_ != nullptr) clReleaseProgram(program_);
    clReleaseCommandQueue(setup_);
    clReleaseContext(context_);
  }

  const DeviceInfo& info() const override { return info_; }

  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    cl_int rc = CL_SUCCESS;
    cl_mem m = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &rc);
    if (rc != CL_SUCCESS) return cl_error("clCreateBuffer(" + std::to_string(bytes) + ")", rc);
    return std::unique_ptr<DeviceBuffer>(std::make_unique<ClDeviceBuffer>(m, bytes));
  }

  Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) override {
    cl_int rc = CL_SUCCESS;
    cl_mem m =
        clCreateBuffer(context_, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, bytes, nullptr, &rc);
    if (rc != CL_SUCCESS)
      return cl_error("clCreateBuffer(host, " + std::to_string(bytes) + ")", rc);
    void* p = clEnqueueMapBuffer(setup_, m, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0,
                                 nullptr, nullptr, &rc);
    if (rc != CL_SUCCESS) {
      clReleaseMemObject(m);
      return cl_error("clEnqueueMapBuffer", rc);
    }
    return std::unique_ptr<HostBuffer>(std::make_unique<ClHostBuffer>(m, p, bytes, setup_));
  }

  Result<std::unique_ptr<Queue>> create_queue() override {
    cl_int rc = CL_SUCCESS;
    cl_command_queue q = clCreateCommandQueue(context_, id_, 0, &rc);
    if (rc != CL_SUCCESS) return cl_error("clCreateCommandQueue", rc);
    return std::unique_ptr<Queue>(std::make_unique<ClQueue>(q));
  }

  Result<const Kernel*> kernel(std::string_view name) override {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = kernels_.find(name);
    if (it != kernels_.end()) return static_cast<const Kernel*>(it->second.get());
    if (Status s = build_program(); !s) return make_error(s.error());
    const std::string n(name);
    cl_int rc = CL_SUCCESS;
    cl_kernel k = clCreateKernel(program_, n.c_str(), &rc);
    if (rc != CL_SUCCESS) return make_error("opencl: no kernel '" + n + "'");
    Result<std::string> sig = signature(k);
    if (!sig) {
      clReleaseKernel(k);
      return make_error(sig.error());
    }
    auto [pos, added] = kernels_.emplace(n, std::make_unique<ClKernel>(n, sig.value(), k));
    return static_cast<const Kernel*>(pos->second.get());
  }

  Status upload(DeviceBuffer& dst, const void* src, size_t bytes) override {
    if (bytes > dst.size()) return make_error("opencl: upload larger than the buffer");
    const cl_int rc = clEnqueueWriteBuffer(setup_, static_cast<ClDeviceBuffer&>(dst).mem(), CL_TRUE,
                                           0, bytes, src, 0, nullptr, nullptr);
    if (rc != CL_SUCCESS) return cl_error("clEnqueueWriteBuffer", rc);
    return {};
  }

 private:
  Status build_program() {
    if (program_ != nullptr) return {};
    std::vector<const char*> texts;
    for (size_t i = 0; i < kOpenCLSourceCount; ++i) texts.push_back(kOpenCLSources[i].text);
    cl_int rc = CL_SUCCESS;
    cl_program p = clCreateProgramWithSource(context_, static_cast<cl_uint>(texts.size()),
                                             texts.data(), nullptr, &rc);
    if (rc != CL_SUCCESS) return cl_error("clCreateProgramWithSource", rc);
    rc = clBuildProgram(p, 1, &id_, "-cl-kernel-arg-info", nullptr, nullptr);
    if (rc != CL_SUCCESS) {
      size_t n = 0;
      clGetProgramBuildInfo(p, id_, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      clGetProgramBuildInfo(p, id_, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      clReleaseProgram(p);
      return make_error("opencl: building the kernels failed: " + log);
    }
    program_ = p;
    return {};
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

  cl_device_id id_;
  cl_context context_;
  cl_command_queue setup_;  // uploads, host-buffer maps
  DeviceInfo info_;
  std::mutex mu_;
  cl_program program_ = nullptr;
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
