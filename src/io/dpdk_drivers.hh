// What the installed DPDK drivers declare about themselves (the PMD_INFO_STRING that every driver
// embeds, the same data dpdk-pmdinfo.py reads): names and parameters. Used to say why DPDK
// refused a device string, because DPDK itself often refuses without a word.
#pragma once

#include <string>
#include <vector>

namespace fulcrum {

struct PmdInfo {
  std::string name;               // "net_null"
  std::string params;             // "size=<int> copy=<int> no-rx=0|1" as the driver writes it
  std::vector<std::string> keys;  // {"size", "copy", "no-rx"}
  bool is_virtual = false;        // no PCI ids: created from a name (net_null0)
};

// The network drivers in DPDK's driver folder (RTE_EAL_PMD_PATH), sorted by name.
const std::vector<PmdInfo>& network_drivers();

// The keys of a driver's parameter string ("a=<int> b=0|1" -> {a, b}).
std::vector<std::string> param_keys(const std::string& params);

// What is wrong with a virtual-device string before DPDK sees it, "" when nothing is known to
// be: no driver is named like the device (the closest device name; a kernel interface given
// where a DPDK device was expected), or a key the driver does not declare (the closest key and
// what the driver takes).
std::string vdev_spec_problem(const std::string& spec,
                              const std::vector<PmdInfo>& drivers = network_drivers());

// Why rte_vdev_init refused SPEC ("net_nul0", "eth0", "net_null0,norx=1"), as one sentence:
// vdev_spec_problem, or else what DPDK logged (`dpdk_log`, for net_af_packet with the reason this
// process cannot open an AF_PACKET socket), or else `fallback`; with what the driver takes.
std::string explain_vdev_failure(const std::string& spec, const std::string& dpdk_log,
                                 const std::string& fallback,
                                 const std::vector<PmdInfo>& drivers = network_drivers());

}  // namespace fulcrum
