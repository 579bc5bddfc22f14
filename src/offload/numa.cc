#include "offload/numa.hh"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <utility>

namespace fulcrum::offload {
namespace {

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::optional<int> parse_int(std::string_view s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.remove_suffix(1);
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<std::vector<int>> parse_cpulist(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  std::vector<int> cpus;
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view range = text.substr(0, comma);
    const size_t dash = range.find('-');
    const std::optional<int> lo = parse_int(range.substr(0, dash));
    const std::optional<int> hi =
        dash == std::string_view::npos ? lo : parse_int(range.substr(dash + 1));
    if (!lo || !hi || *lo < 0 || *hi < *lo)
      return make_error("cpulist: bad range '" + std::string(range) + "'");
    for (int c = *lo; c <= *hi; ++c) cpus.push_back(c);
    if (comma == std::string_view::npos) break;
    text.remove_prefix(comma + 1);
    if (text.empty()) return make_error("cpulist: trailing ','");
  }
  std::sort(cpus.begin(), cpus.end());
  cpus.erase(std::unique(cpus.begin(), cpus.end()), cpus.end());
  return cpus;
}

std::string pci_bus_id(uint32_t domain, uint32_t bus, uint32_t device, uint32_t function) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x.%x", domain, bus, device, function);
  return buf;
}

std::optional<int> pci_numa_node(const std::string& bus_id, const std::string& sysfs) {
  if (bus_id.empty()) return std::nullopt;
  const std::optional<std::string> text =
      read_file(std::filesystem::path(sysfs) / "bus/pci/devices" / bus_id / "numa_node");
  if (!text) return std::nullopt;
  const std::optional<int> node = parse_int(*text);
  if (!node || *node < 0) return std::nullopt;
  return node;
}

std::vector<NumaNode> numa_nodes(const std::string& sysfs) {
  std::vector<NumaNode> out;
  const std::filesystem::path dir = std::filesystem::path(sysfs) / "devices/system/node";
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("node", 0) != 0) continue;
    const std::optional<int> id = parse_int(std::string_view(name).substr(4));
    const std::optional<std::string> list = read_file(entry.path() / "cpulist");
    if (!id || !list) continue;
    Result<std::vector<int>> cpus = parse_cpulist(*list);
    if (!cpus || cpus.value().empty()) continue;
    out.push_back(NumaNode{*id, std::move(cpus.value())});
  }
  std::sort(out.begin(), out.end(),
            [](const NumaNode& a, const NumaNode& b) { return a.id < b.id; });
  if (!out.empty()) return out;
  NumaNode all;
  const std::optional<std::string> online =
      read_file(std::filesystem::path(sysfs) / "devices/system/cpu/online");
  if (online) {
    if (Result<std::vector<int>> cpus = parse_cpulist(*online); cpus) all.cpus = cpus.value();
  }
  if (all.cpus.empty())
    for (unsigned c = 0; c < std::max(1u, std::thread::hardware_concurrency()); ++c)
      all.cpus.push_back(static_cast<int>(c));
  out.push_back(std::move(all));
  return out;
}

}  // namespace fulcrum::offload
