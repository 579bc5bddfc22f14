// `fulcrum devices [--json] [--device emu:...]`: the offload backends compiled in and the devices
// they find; emulated devices are marked so.
#include <cstdio>
#include <string>

#include "cli/commands.hh"
#include "cli/device_option.hh"
#include "offload/discovery.hh"
#include "offload/numa.hh"

namespace fulcrum::cli {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    out += c;
  }
  return out + "\"";
}

}  // namespace

int cmd_devices(const std::vector<std::string>& args) {
  bool json = false;
  DeviceOption emulated;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--json") {
      json = true;
    } else if (a == "--device" && i + 1 < args.size()) {
      if (Status st = emulated.add(args[++i]); !st) {
        std::fprintf(stderr, "fulcrum devices: %s\n", st.error().c_str());
        return 2;
      }
    } else {
      std::fprintf(stderr,
                   "fulcrum devices: unknown option '%s' (usage: fulcrum devices [--json] "
                   "[--device emu:K=V,...])\n",
                   a.c_str());
      return 2;
    }
  }
  emulated.apply();
  if (Result<std::vector<offload::EmuSpec>> emu = offload::emulated_devices(); !emu) {
    std::fprintf(stderr, "fulcrum devices: %s\n", emu.error().c_str());
    return 1;
  }
  const std::vector<offload::Backend> backends = offload::compiled_backends();
  const auto devices = offload::discover_devices();
  if (json) {
    std::printf("{\"backends\": [");
    for (size_t i = 0; i < backends.size(); ++i)
      std::printf("%s\"%s\"", i ? ", " : "", offload::backend_name(backends[i]).data());
    std::printf("],\n \"devices\": [");
    for (size_t i = 0; i < devices.size(); ++i) {
      const offload::DeviceInfo& d = devices[i]->info();
      std::printf(
          "%s\n  {\"backend\": \"%s\", \"index\": %d, \"name\": %s, \"platform\": %s, "
          "\"kind\": \"%s\", \"global_memory_bytes\": %llu, \"compute_units\": %u, "
          "\"pci_bus_id\": %s, \"numa_node\": %d, \"emulated\": %s}",
          i ? "," : "", offload::backend_name(d.backend).data(), devices[i]->index(),
          json_string(d.name).c_str(), json_string(d.platform).c_str(),
          offload::device_kind_name(d.kind).data(),
          static_cast<unsigned long long>(d.global_memory), d.compute_units,
          d.pci_bus_id.empty() ? "null" : json_string(d.pci_bus_id).c_str(), d.numa_node,
          d.backend == offload::Backend::kEmu ? "true" : "false");
    }
    std::printf("],\n \"numa_nodes\": [");
    const std::vector<offload::NumaNode> nodes = offload::numa_nodes();
    for (size_t i = 0; i < nodes.size(); ++i)
      std::printf("%s{\"node\": %d, \"cpus\": %zu}", i ? ", " : "", nodes[i].id,
                  nodes[i].cpus.size());
    std::printf("]}\n");
    return 0;
  }
  std::printf("backends compiled in:");
  if (backends.empty()) std::printf(" none");
  for (offload::Backend b : backends) std::printf(" %s", offload::backend_name(b).data());
  std::printf("\n");
  if (devices.empty()) {
    std::printf("no offload devices found; offloadable elements run on the CPU\n");
    return 0;
  }
  for (const auto& dev : devices) {
    const offload::DeviceInfo& d = dev->info();
    const std::string node = d.numa_node < 0 ? "?" : std::to_string(d.numa_node);
    std::printf("%-10s %-12s %-5s %9.0f MiB %4u units  node %s  %s\n",
                dev->label().substr(0, dev->label().find(' ')).c_str(), d.name.c_str(),
                offload::device_kind_name(d.kind).data(),
                static_cast<double>(d.global_memory) / kMiB, d.compute_units, node.c_str(),
                d.platform.c_str());
  }
  return 0;
}

}  // namespace fulcrum::cli
