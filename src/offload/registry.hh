// Finding devices: every backend compiled in registers a discovery function; discover_devices()
// asks them all. A backend with no device (no GPU, no OpenCL platform, no driver) contributes
// nothing and prints nothing.
//
// Failure injection, for the tests of the CPU fallback: with FULCRUM_FAIL_DEVICE_AFTER=N in the
// environment (or DiscoverOptions::fail_after), every device is wrapped so that after N kernel
// launches each further call on it fails, as a device that errors or disappears mid-run would.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "offload/device.hh"

namespace fulcrum::offload {

using DiscoverFn = std::vector<std::unique_ptr<Device>> (*)();

struct BackendRegistration {
  BackendRegistration(Backend backend, DiscoverFn discover);
};

// The backends compiled into this binary, in a fixed order (OpenCL, CUDA).
std::vector<Backend> compiled_backends();
bool backend_compiled(Backend b);

inline constexpr const char* kFailAfterEnv = "FULCRUM_FAIL_DEVICE_AFTER";

struct DiscoverOptions {
  // Only devices of this backend.
  std::optional<Backend> only;
  // Wrap every device to fail after this many kernel launches (FULCRUM_FAIL_DEVICE_AFTER when
  // unset; an unparsable value is ignored).
  std::optional<uint64_t> fail_after;
};

// Every device of every compiled-in backend; each device's index() is its position among its
// backend's devices.
std::vector<std::unique_ptr<Device>> discover_devices(const DiscoverOptions& options = {});

// `inner`, failing every call from its (fail_after + 1)-th kernel launch on.
std::unique_ptr<Device> make_failing_device(std::unique_ptr<Device> inner, uint64_t fail_after);

}  // namespace fulcrum::offload
