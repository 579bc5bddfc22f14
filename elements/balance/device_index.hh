// The check of a balancer's device index against the devices of the run (OffloadService, the
// order of `fulcrum devices`): an index past them is a configuration error, never a silent run
// on the CPU. A run with no device at all is the documented fallback instead: every batch runs
// on the CPU (the offloadable elements count no_device_batches) and worker 0's replica leaves a
// note saying so (printed by `fulcrum run` and `fulcrum check`).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "core/element.hh"
#include "core/result.hh"

namespace fulcrum {

// The number of devices of the run; with none, the note "`who`: no offload device in this run:
// its batches run on the CPU".
Result<size_t> run_devices(const InitContext& ctx, const std::string& who);

// An error naming `what` (e.g. "DEVICE 2") when the run has devices and `device` is not one of
// them; `devices` from run_devices.
Status check_device_index(int32_t device, size_t devices, const std::string& what);

}  // namespace fulcrum
