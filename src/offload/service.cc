#include "offload/service.hh"

#include <cstdlib>
#include <string_view>

#include "core/shared_storage.hh"
#include "offload/registry.hh"

namespace fulcrum::offload {

Result<std::shared_ptr<OffloadService>> OffloadService::create() {
  std::shared_ptr<OffloadService> s(new OffloadService());
  DiscoverOptions options;
  if (const char* only = std::getenv("FULCRUM_OFFLOAD_BACKEND"); only != nullptr) {
    const std::string_view b(only);
    if (b == "opencl")
      options.only = Backend::kOpenCL;
    else if (b == "cuda")
      options.only = Backend::kCuda;
    else
      return make_error("FULCRUM_OFFLOAD_BACKEND: expected opencl or cuda, got '" + std::string(b) +
                        "'");
  }
  s->devices_ = discover_devices(options);
  s->stats_ = std::make_unique<DeviceStats[]>(s->devices_.size());
  for (std::unique_ptr<Device>& d : s->devices_) {
    Result<std::unique_ptr<DeviceThread>> t = DeviceThread::create(*d);
    if (!t) return make_error(d->label() + ": " + t.error());
    t.value()->start();
    s->threads_.push_back(std::move(t.value()));
  }
  return s;
}

OffloadService::~OffloadService() {
  threads_.clear();  // each finishes (or fails) its tasks before its device goes
}

Result<std::shared_ptr<const OffloadService>> OffloadService::get(SharedStorage* shared) {
  return shared_or_own<OffloadService>(shared, kSharedKey, [] { return create(); });
}

}  // namespace fulcrum::offload
