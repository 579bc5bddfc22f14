#include "io/port.hh"

#include <cctype>
#include <string_view>

#include "io/dpdk_port.hh"
#include "io/gen_port.hh"
#include "io/replay_port.hh"

namespace fulcrum {
namespace {

bool is_replay(const std::string& spec) {
  return spec.rfind("replay:", 0) == 0 || spec == "replay";
}

bool hex_run(std::string_view s, size_t n) {
  if (s.size() != n) return false;
  for (char c : s)
    if (!std::isxdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// [DOMAIN:]BUS:DEVICE.FUNCTION, e.g. 0000:01:00.0 or 01:00.0, optionally ",devargs".
bool is_pci_address(std::string_view s) {
  s = s.substr(0, s.find(','));
  const size_t dot = s.rfind('.');
  if (dot == std::string_view::npos || dot + 2 != s.size() || s[dot + 1] < '0' || s[dot + 1] > '7')
    return false;
  std::string_view head = s.substr(0, dot);
  constexpr size_t kDomain = 4, kBus = 2, kDevice = 2;
  if (head.size() == kDomain + 1 + kBus + 1 + kDevice) {
    if (!hex_run(head.substr(0, kDomain), kDomain) || head[kDomain] != ':') return false;
    head.remove_prefix(kDomain + 1);
  }
  return head.size() == kBus + 1 + kDevice && hex_run(head.substr(0, kBus), kBus) &&
         head[kBus] == ':' && hex_run(head.substr(kBus + 1), kDevice);
}

}  // namespace

EalDevice eal_device_for(const std::string& spec) {
  EalDevice d;
  if (spec.rfind("gen:", 0) == 0 || spec == "gen" || is_replay(spec)) return d;
  if (is_pci_address(spec)) {
    d.is_pci = true;
  } else {
    d.is_vdev = true;
  }
  d.arg = spec;
  return d;
}

bool ports_copy_frames(const std::vector<std::string>& specs) {
  static constexpr std::string_view kCopying[] = {"net_pcap", "net_null", "net_ring",
                                                  "net_af_packet", "net_tap"};
  for (const std::string& spec : specs) {
    const EalDevice d = eal_device_for(spec);
    if (d.is_pci) return false;
    if (!d.is_vdev) continue;
    bool copies = false;
    for (std::string_view driver : kCopying)
      if (spec.rfind(driver, 0) == 0 && spec.size() > driver.size() &&
          std::isdigit(static_cast<unsigned char>(spec[driver.size()])))
        copies = true;
    if (!copies) return false;
  }
  return true;
}

Status check_port_spec(const std::string& spec) {
  if (spec.rfind("gen:", 0) == 0 || spec == "gen") {
    Result<GenConfig> gen = parse_gen_spec(spec);
    return gen ? Status{} : make_error(gen.error());
  }
  if (is_replay(spec)) return ReplayPort::check(spec);
  return DpdkPort::check(spec);
}

Status check_port_list(const std::vector<std::string>& specs) {
  for (size_t i = 0; i < specs.size(); ++i) {
    const EalDevice device = eal_device_for(specs[i]);
    if (!device.is_vdev && !device.is_pci) continue;  // the generator, a replay: no device
    const std::string name = specs[i].substr(0, specs[i].find(','));
    for (size_t j = 0; j < i; ++j)
      if (specs[j].substr(0, specs[j].find(',')) == name)
        return make_error("--port " + specs[i] + ": device '" + name + "' is already port " +
                          std::to_string(j) + " (--port " + specs[j] +
                          "); every port needs its own device (net_null0, net_null1, ...)");
  }
  return {};
}

Result<std::unique_ptr<Port>> open_port(const std::string& spec, const PortConfig& config) {
  if (spec.rfind("gen:", 0) == 0 || spec == "gen") return GenPort::open(spec, config);
  if (is_replay(spec)) return ReplayPort::open(spec, config);
  return DpdkPort::open(spec, config);
}

}  // namespace fulcrum
