// Finding devices: every backend compiled in registers a discovery function
// (BackendRegistration, a static object in its backend file); discover_devices() asks them all.
// A backend with no device (no GPU, no OpenCL platform, no driver) contributes nothing and
// prints nothing. Devices found are wrapped for failure injection when asked
// (offload/failure_injection.hh).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "offload/device.hh"

namespace fulcrum::offload {

using DiscoverFn = std::vector<std::unique_ptr<Device>> (*)();

struct BackendRegistration {
  BackendRegistration(Backend backend, DiscoverFn discover);
};

// The backends compiled into this binary, in a fixed order (OpenCL, CUDA, emu). The emulated
// backend is always compiled in; it finds the devices configured (offload/emu/emu_spec.hh).
std::vector<Backend> compiled_backends();
bool backend_compiled(Backend b);

struct DiscoverOptions {
  // Only devices of this backend (unset: FULCRUM_OFFLOAD_BACKEND's, when it names one).
  std::optional<Backend> only;
  // Wrap every device to fail after this many kernel launches (FULCRUM_FAIL_DEVICE_AFTER when
  // unset; an unparsable value is ignored).
  std::optional<uint64_t> fail_after;
};

// Every device of every compiled-in backend; each device's index() is its position among its
// backend's devices.
std::vector<std::unique_ptr<Device>> discover_devices(const DiscoverOptions& options = {});

}  // namespace fulcrum::offload
