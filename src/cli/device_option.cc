#include "cli/device_option.hh"

#include "offload/emu/emu_spec.hh"

namespace fulcrum::cli {

Status DeviceOption::add(std::string_view value) {
  constexpr std::string_view kPrefix = "emu:";
  if (value == "emu") value = kPrefix;
  if (value.substr(0, kPrefix.size()) != kPrefix)
    return make_error("--device " + std::string(value) +
                      ": expected emu[:KEY=VALUE,...] (an emulated device; real devices are "
                      "found by themselves, `fulcrum devices` lists them)");
  Result<offload::EmuSpec> spec = offload::parse_emu_spec(value.substr(kPrefix.size()));
  if (!spec) return make_error("--device " + std::string(value) + ": " + spec.error());
  specs_.push_back(std::move(spec.value()));
  return {};
}

void DeviceOption::apply() const {
  if (!specs_.empty()) offload::set_emulated_devices(specs_);
}

}  // namespace fulcrum::cli
