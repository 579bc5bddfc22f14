// Finding devices: every backend compiled in registers a discovery function; discover_devices()
// asks them all. A backend with no device (no GPU, no OpenCL platform, no driver) contributes
// nothing and prints nothing.
//
// Failure injection, for the tests of the CPU fallback: with FULCRUM_FAIL_DEVICE_AFTER=N in the
// environment (or DiscoverOptions::fail_after), every device is wrapped so that after N kernel
// launches each further call on it fails, as a device that errors or disappears mid-run would.
//
// NUMA placement (NBA §3.2): backends report a device's PCI bus id; pci_numa_node() reads the
// node it hangs off from sysfs, numa_nodes() lists the machine's nodes and their CPUs, and the
// offload service runs one device thread per device per node on that node's cores.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
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

inline constexpr const char* kSysfsRoot = "/sys";

// The CPUs of a sysfs cpulist ("0-3,8-11", "5", "" for none; a trailing newline is fine),
// ascending; an error for anything else.
Result<std::vector<int>> parse_cpulist(std::string_view text);

// "dddd:bb:dd.f" in lower-case hex, as sysfs names PCI devices.
std::string pci_bus_id(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function);

// The NUMA node a PCI device is attached to (/sys/bus/pci/devices/BUS_ID/numa_node), or
// nullopt when the file is missing, unreadable or says -1 (no NUMA information).
std::optional<int> pci_numa_node(const std::string& bus_id, const std::string& sysfs = kSysfsRoot);

struct NumaNode {
  int id = 0;
  std::vector<int> cpus;
};
// The machine's NUMA nodes that have CPUs (/sys/devices/system/node/nodeN/cpulist), by id;
// one node holding every online CPU when sysfs has no node directory.
std::vector<NumaNode> numa_nodes(const std::string& sysfs = kSysfsRoot);

// `inner`, failing every call from its (fail_after + 1)-th kernel launch on.
std::unique_ptr<Device> make_failing_device(std::unique_ptr<Device> inner, uint64_t fail_after);

}  // namespace fulcrum::offload
