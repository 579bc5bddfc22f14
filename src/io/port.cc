#include "io/port.hh"

#include <regex>

#include "io/dpdk_port.hh"
#include "io/gen_port.hh"

namespace fulcrum {
namespace {

bool is_pci_address(const std::string& s) {
  static const std::regex pci(R"(^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7](,.*)?$)");
  return std::regex_match(s, pci);
}

}  // namespace

EalDevice eal_device_for(const std::string& spec) {
  EalDevice d;
  if (spec.rfind("gen:", 0) == 0 || spec == "gen") return d;
  if (is_pci_address(spec)) {
    d.is_pci = true;
  } else {
    d.is_vdev = true;
  }
  d.arg = spec;
  return d;
}

Result<std::unique_ptr<Port>> open_port(const std::string& spec, const PortConfig& config) {
  if (spec.rfind("gen:", 0) == 0 || spec == "gen") return GenPort::open(spec, config);
  return DpdkPort::open(spec, config);
}

}  // namespace fulcrum
