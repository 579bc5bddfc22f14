// The emulated device (backend "emu"): an accelerator modelled on the host, for tests and
// reproducible experiments on machines with no GPU (the balancers, NBA Fig. 11's shapes).
//
// It behaves as a device through the same API (offload/device.hh): buffers are host memory,
// copies are memcpy, and launches run the kernels/*.cl kernels compiled as host C++
// (offload/emu/host_kernel.hh) on the calling thread, so its results are the real kernels'
// results, byte for byte. Its timing is the model's (offload/emu/emu_spec.hh): each copy occupies
// the device's copy engine of that direction for bytes / bandwidth, each launch its kernel engine
// for launch_us + items / kernel_mpps, after the queue's earlier work; a queue's record() completes
// lat_us after its last operation. query() answers false until that moment, so tasks hold their
// device-thread slots for the modelled time: the back-pressure is real. A kernel the host computes
// more slowly than the model says completes when the host is done (the model is a lower bound).
#pragma once

#include <cstdint>
#include <memory>

#include "offload/device.hh"
#include "offload/emu/emu_spec.hh"

namespace fulcrum::offload {

std::unique_ptr<Device> make_emulated_device(const EmuSpec& spec);

// The host time the emulated devices with host_free (emu_spec.hh) spent computing kernels, so
// far, nanoseconds: their clock and the L7 batch processor's are the steady clock less this
// (virtual time: the device's work costs the host thread nothing, only the model's time).
int64_t emu_hidden_host_ns();

}  // namespace fulcrum::offload
