// NUMA placement (NBA §3.2): backends report a device's PCI bus id; pci_numa_node() reads the
// node it hangs off from sysfs, numa_nodes() lists the machine's nodes and their CPUs, and the
// offload service runs one device thread per device per node on that node's cores.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"

namespace fulcrum::offload {

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

}  // namespace fulcrum::offload
