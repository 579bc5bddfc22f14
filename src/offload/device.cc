#include "offload/device.hh"

#include <string>

namespace fulcrum::offload {

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::kOpenCL:
      return "opencl";
    case Backend::kCuda:
      return "cuda";
    case Backend::kEmu:
      return "emu";
  }
  return "unknown";
}

std::string_view device_kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kAccelerator:
      return "accelerator";
  }
  return "unknown";
}

std::string Device::label() const {
  return std::string(backend_name(info().backend)) + ":" + std::to_string(index_) + " " +
         info().name;
}

Status check_args(const Kernel& kernel, std::span<const KernelArg> args) {
  const std::string& sig = kernel.signature();
  if (args.size() != sig.size())
    return make_error("kernel " + kernel.name() + " takes " + std::to_string(sig.size()) +
                      " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const char want = args[i].kind == KernelArg::Kind::kBuffer ? 'b' : 'u';
    if (sig[i] != want || (want == 'b' && args[i].buffer == nullptr))
      return make_error("kernel " + kernel.name() + ": argument " + std::to_string(i) +
                        " should be " + (sig[i] == 'b' ? "a buffer" : "a uint32"));
  }
  return {};
}

}  // namespace fulcrum::offload
