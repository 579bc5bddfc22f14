#include "offload/emu/emu_spec.hh"

#include <cmath>
#include <cstdlib>
#include <mutex>
#include <optional>

#include "core/args.hh"

namespace fulcrum::offload {
namespace {

struct EmuKey {
  std::string_view name;
  double EmuSpec::*field;
  bool rate;  // must be > 0 (a divisor), not only >= 0
};

constexpr EmuKey kKeys[] = {
    {"h2d_gbps", &EmuSpec::h2d_gbps, true},
    {"d2h_gbps", &EmuSpec::d2h_gbps, true},
    {"launch_us", &EmuSpec::launch_us, false},
    {"kernel_mpps", &EmuSpec::kernel_mpps, true},
    {"lat_us", &EmuSpec::lat_us, false},
    {"units", &EmuSpec::units, false},
    {"lane_slowdown", &EmuSpec::lane_slowdown, true},
    {"host_free", &EmuSpec::host_free, false},
    {"native", &EmuSpec::native, false},
};

std::string key_list() {
  std::string out;
  for (const EmuKey& k : kKeys) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

struct Configured {
  std::mutex mu;
  std::optional<std::vector<EmuSpec>> specs;
};

Configured& configured() {
  static Configured c;
  return c;
}

}  // namespace

Result<EmuSpec> parse_emu_spec(std::string_view text) {
  EmuSpec spec;
  spec.text = std::string(text);
  while (!text.empty()) {
    const size_t comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    const size_t eq = item.find('=');
    const std::string_view key = item.substr(0, eq);
    const EmuKey* k = nullptr;
    for (const EmuKey& candidate : kKeys)
      if (candidate.name == key) k = &candidate;
    if (k == nullptr)
      return make_error("emulated device: unknown key '" + std::string(key) + "' (expected " +
                        key_list() + ")");
    double v = 0;
    const std::string_view value =
        eq == std::string_view::npos ? std::string_view{} : item.substr(eq + 1);
    if (!parse_value(value, v) || !std::isfinite(v) || v < 0 || (k->rate && v == 0))
      return make_error("emulated device: " + std::string(key) + "=" + std::string(value) +
                        ": expected a finite number " + (k->rate ? "> 0" : ">= 0"));
    spec.*(k->field) = v;
  }
  return spec;
}

void set_emulated_devices(std::vector<EmuSpec> specs) {
  Configured& c = configured();
  std::lock_guard lock(c.mu);
  c.specs = std::move(specs);
}

Result<std::vector<EmuSpec>> emulated_devices() {
  Configured& c = configured();
  {
    std::lock_guard lock(c.mu);
    if (c.specs) return *c.specs;
  }
  std::vector<EmuSpec> out;
  const char* env = std::getenv(kEmuDevicesEnv);
  if (env == nullptr) return out;
  std::string_view rest(env);
  while (!rest.empty()) {
    const size_t semi = rest.find(';');
    Result<EmuSpec> spec = parse_emu_spec(rest.substr(0, semi));
    if (!spec) return make_error(std::string(kEmuDevicesEnv) + ": " + spec.error());
    out.push_back(std::move(spec.value()));
    rest = semi == std::string_view::npos ? std::string_view{} : rest.substr(semi + 1);
  }
  return out;
}

}  // namespace fulcrum::offload
