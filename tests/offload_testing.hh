// Helpers for the tests of offloadable elements in a pipeline: run a Click text over frames the
// way a worker would (inject a burst, poll deferred packets, drain at the end) and collect what
// leaves, the drops, one element's counters and whether the first device is still up.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "offload/device.hh"

namespace fulcrum::testing {

struct Sent {
  uint16_t tag;   // the packet's index among the frames (carried in in_port)
  uint16_t port;  // out_port
  bool operator==(const Sent&) const = default;
  bool operator<(const Sent& o) const { return tag < o.tag; }
};

struct PipelineOutcome {
  std::vector<Sent> sent;                       // in the order ToOutput got them
  std::vector<std::vector<uint8_t>> frames;     // their bytes, in the same order
  std::vector<std::array<uint64_t, 2>> user01;  // their user[0] and user[1] annotations
  uint64_t dropped = 0;
  std::map<std::string, uint64_t> counters;  // of the element named `counted`
  bool device_up = true;                     // the first offload device, after the run
};

// Runs `text` over `frames` in bursts of `burst` with `ports` ports, in a fresh shared storage
// (so a fresh offload service: FULCRUM_FAIL_DEVICE_AFTER applies to it).
PipelineOutcome run_pipeline(const std::string& text,
                             const std::vector<std::vector<uint8_t>>& frames, int ports,
                             const std::string& counted, uint32_t burst = 64);

// Whether any offload device is present (PoCL's OpenCL CPU device on CI machines).
bool have_offload_device();
// Whether `backend` is compiled in, and whether it found a device.
bool backend_built(bool cuda);
bool backend_has_device(bool cuda);
// The first device `backend` finds; null when none.
std::shared_ptr<offload::Device> first_device(offload::Backend backend);

// For its scope, the emu backend finds one emulated device with the default model
// (offload/emu/emu_spec.hh); found() says discovery sees it.
class ScopedEmulatedDevice {
 public:
  ScopedEmulatedDevice();
  ~ScopedEmulatedDevice();
  bool found() const;
};

}  // namespace fulcrum::testing

// The emulated device runs every kernel on any machine: its tests never skip.
#define WITH_EMULATED_DEVICE()                         \
  const ::fulcrum::testing::ScopedEmulatedDevice emu_; \
  ASSERT_TRUE(emu_.found()) << "the emu backend did not find the emulated device"

#define REQUIRE_OFFLOAD_DEVICE()                                                         \
  if (!::fulcrum::testing::have_offload_device())                                        \
  GTEST_SKIP() << "no offload device (scripts/install-deps.sh installs PoCL, an OpenCL " \
                  "CPU device)"

// Kernel tests per backend: OpenCL built in must have a device (PoCL in CI), so its absence
// fails; CUDA without a GPU skips and says so.
#define REQUIRE_OPENCL_DEVICES()                                                                   \
  if (!::fulcrum::testing::backend_built(false)) GTEST_SKIP() << "OpenCL backend not compiled in"; \
  ASSERT_TRUE(::fulcrum::testing::backend_has_device(false))                                       \
      << "OpenCL is built in but no OpenCL device was found (scripts/install-deps.sh installs "    \
         "PoCL)"
#define REQUIRE_CUDA_DEVICES()                                                                  \
  if (!::fulcrum::testing::backend_built(true)) GTEST_SKIP() << "CUDA backend not compiled in"; \
  if (!::fulcrum::testing::backend_has_device(true)) GTEST_SKIP() << "no CUDA device"
