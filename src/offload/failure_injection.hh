// Failure injection, for the tests of the CPU fallback: with FULCRUM_FAIL_DEVICE_AFTER=N in the
// environment (or DiscoverOptions::fail_after, offload/discovery.hh), every device is wrapped so
// that after N kernel launches each further call on it fails, as a device that errors or
// disappears mid-run would.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>

#include "offload/device.hh"

namespace fulcrum::offload {

inline constexpr const char* kFailAfterEnv = "FULCRUM_FAIL_DEVICE_AFTER";

// N from FULCRUM_FAIL_DEVICE_AFTER=N; nullopt when unset or not a number.
std::optional<uint64_t> fail_after_from_env();

// `inner`, failing every call from its (fail_after + 1)-th kernel launch on.
std::unique_ptr<Device> make_failing_device(std::unique_ptr<Device> inner, uint64_t fail_after);

}  // namespace fulcrum::offload
