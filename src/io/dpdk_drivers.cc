#include "io/dpdk_drivers.hh"

#include <linux/if_ether.h>
#include <rte_config.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "core/suggest.hh"
#include "core/text_file.hh"

namespace fulcrum {
namespace {

constexpr size_t kMaxDriverFile = 64u << 20;
constexpr std::string_view kInfoTag = "PMD_INFO_STRING= ";

void read_driver_file(const std::string& path, std::vector<PmdInfo>& out) {
  Result<std::string> bytes = read_input_file(path, "DPDK driver", kMaxDriverFile);
  if (!bytes) return;
  const std::string& b = bytes.value();
  for (size_t pos = b.find(kInfoTag); pos != std::string::npos; pos = b.find(kInfoTag, pos + 1)) {
    const size_t start = pos + kInfoTag.size();
    const size_t end = b.find('\0', start);
    nlohmann::json j = nlohmann::json::parse(b.substr(start, end - start), nullptr, false);
    if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) continue;
    PmdInfo info;
    info.name = j["name"].get<std::string>();
    if (j.contains("params") && j["params"].is_string())
      info.params = j["params"].get<std::string>();
    info.keys = param_keys(info.params);
    info.is_virtual = !j.contains("pci_ids") || (j["pci_ids"].is_array() && j["pci_ids"].empty());
    out.push_back(std::move(info));
  }
}

bool is_kernel_interface(const std::string& name) {
  struct stat st {};
  return name.find('/') == std::string::npos && !name.empty() &&
         ::stat(("/sys/class/net/" + name).c_str(), &st) == 0;
}

// Why this process cannot open an AF_PACKET socket ("" when it can): the usual reason
// net_af_packet refuses, which the driver logs without its errno.
std::string af_packet_problem() {
  const int fd = ::socket(AF_PACKET, SOCK_RAW, 0);
  if (fd >= 0) {
    ::close(fd);
    return "";
  }
  const int err = errno;
  std::string why = std::string(" (AF_PACKET socket: ") + std::strerror(err);
  if (err == EPERM || err == EACCES)
    why += "; it needs CAP_NET_RAW: run as root or `setcap cap_net_raw,cap_net_admin+ep fulcrum`";
  return why + ")";
}

}  // namespace

std::vector<std::string> param_keys(const std::string& params) {
  // Keys start the string or follow a space or the '>' of a value placeholder (some drivers
  // forget the space: "phy_mac=<int>infinite_rx=<0|1>").
  static const std::regex key(R"((?:^|[\s>])([A-Za-z_][A-Za-z0-9_-]*)=)");
  std::vector<std::string> keys;
  for (auto it = std::sregex_iterator(params.begin(), params.end(), key);
       it != std::sregex_iterator(); ++it)
    keys.push_back((*it)[1].str());
  return keys;
}

const std::vector<PmdInfo>& network_drivers() {
  static const std::vector<PmdInfo> drivers = [] {
    std::vector<PmdInfo> all;
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(RTE_EAL_PMD_PATH, ec)) {
      const std::string file = entry.path().filename().string();
      if (file.rfind("librte_net_", 0) == 0 && entry.path().extension() == ".so")
        read_driver_file(entry.path().string(), all);
    }
    std::sort(all.begin(), all.end(),
              [](const PmdInfo& a, const PmdInfo& b) { return a.name < b.name; });
    return all;
  }();
  return drivers;
}

namespace {

// The virtual driver DPDK would bind NAME to: the one whose name starts it (net_null0 ->
// net_null), the longest when several do.
const PmdInfo* driver_for(const std::string& name, const std::vector<PmdInfo>& drivers) {
  const PmdInfo* driver = nullptr;
  for (const PmdInfo& d : drivers)
    if (d.is_virtual && name.rfind(d.name, 0) == 0 &&
        (driver == nullptr || d.name.size() > driver->name.size()))
      driver = &d;
  return driver;
}

std::string takes(const PmdInfo& driver) {
  return driver.params.empty() ? "" : "; " + driver.name + " takes: " + driver.params;
}

}  // namespace

std::string vdev_spec_problem(const std::string& spec, const std::vector<PmdInfo>& drivers) {
  if (drivers.empty()) return "";  // nothing known to compare with
  const std::string name = spec.substr(0, spec.find(','));
  const PmdInfo* driver = driver_for(name, drivers);
  if (driver == nullptr) {
    if (is_kernel_interface(name))
      return "'" + name +
             "' is a kernel network interface, not a DPDK device; to use it through the kernel: "
             "--port net_af_packet0,iface=" +
             name + " (or net_pcap0,iface=" + name + ")";
    // Every virtual driver is a candidate for the suggestion; the list names the ones that need
    // no special hardware.
    static const std::vector<std::string> kCommon = {"net_af_packet", "net_memif",      "net_null",
                                                     "net_pcap",      "net_ring",       "net_tap",
                                                     "net_vhost",     "net_virtio_user"};
    std::vector<std::string> devices;
    std::string listed;
    for (const PmdInfo& d : drivers) {
      if (!d.is_virtual) continue;
      devices.push_back(d.name + "0");
      if (std::find(kCommon.begin(), kCommon.end(), d.name) != kCommon.end())
        listed += (listed.empty() ? "" : ", ") + d.name;
    }
    std::string stem = name;
    while (!stem.empty() && std::isdigit(static_cast<unsigned char>(stem.back()))) stem.pop_back();
    std::string msg = "no DPDK driver for a device named '" + name + "'" +
                      did_you_mean(stem + "0", devices) +
                      "; a virtual device is a driver name and a number (net_null0, net_pcap1)";
    if (!listed.empty()) msg += "; common virtual-device drivers here: " + listed;
    return msg;
  }
  std::vector<std::string> unknown;
  size_t pos = spec.find(',');
  while (pos != std::string::npos && !driver->keys.empty()) {
    const size_t next = spec.find(',', pos + 1);
    const std::string kv = spec.substr(pos + 1, next == std::string::npos ? next : next - pos - 1);
    const std::string key = kv.substr(0, kv.find('='));
    if (!key.empty() &&
        std::find(driver->keys.begin(), driver->keys.end(), key) == driver->keys.end())
      unknown.push_back(key);
    pos = next;
  }
  if (!unknown.empty())
    return "driver " + driver->name + " does not take '" + unknown.front() + "'" +
           did_you_mean(unknown.front(), driver->keys) + takes(*driver);
  return "";
}

std::string explain_vdev_failure(const std::string& spec, const std::string& dpdk_log,
                                 const std::string& fallback, const std::vector<PmdInfo>& drivers) {
  if (std::string problem = vdev_spec_problem(spec, drivers); !problem.empty()) return problem;
  const PmdInfo* driver = driver_for(spec.substr(0, spec.find(',')), drivers);
  if (driver == nullptr) return dpdk_log.empty() ? fallback : dpdk_log;
  const std::string extra = driver->name == "net_af_packet" ? af_packet_problem() : "";
  return (dpdk_log.empty() ? "driver " + driver->name + " refused it (" + fallback + ")"
                           : dpdk_log) +
         extra + takes(*driver);
}

}  // namespace fulcrum
