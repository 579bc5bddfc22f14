#include "offload/discovery.hh"

#include <array>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>

#include "offload/failure_injection.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kBackends = 3;

std::array<DiscoverFn, kBackends>& backends() {
  static std::array<DiscoverFn, kBackends> fns{};
  return fns;
}

// FULCRUM_OFFLOAD_BACKEND (opencl, cuda or emu): only that backend, wherever devices are listed
// (runs, `fulcrum profile`, `fulcrum devices`), so device indices agree; another value: every
// backend here (OffloadService::create reports it as an error).
std::optional<Backend> only_from_env() {
  const char* only = std::getenv("FULCRUM_OFFLOAD_BACKEND");
  if (only == nullptr) return std::nullopt;
  const std::string_view b(only);
  if (b == "opencl") return Backend::kOpenCL;
  if (b == "cuda") return Backend::kCuda;
  if (b == "emu") return Backend::kEmu;
  return std::nullopt;
}

}  // namespace

BackendRegistration::BackendRegistration(Backend backend, DiscoverFn discover) {
  backends()[static_cast<size_t>(backend)] = discover;
}

std::vector<Backend> compiled_backends() {
  std::vector<Backend> out;
  for (Backend b : {Backend::kOpenCL, Backend::kCuda, Backend::kEmu})
    if (backend_compiled(b)) out.push_back(b);
  return out;
}

bool backend_compiled(Backend b) {
  return backends()[static_cast<size_t>(b)] != nullptr;
}

std::vector<std::unique_ptr<Device>> discover_devices(const DiscoverOptions& options) {
  const std::optional<uint64_t> fail_after =
      options.fail_after ? options.fail_after : fail_after_from_env();
  const std::optional<Backend> only = options.only ? options.only : only_from_env();
  std::vector<std::unique_ptr<Device>> out;
  for (Backend b : compiled_backends()) {
    if (only && *only != b) continue;
    std::vector<std::unique_ptr<Device>> found = backends()[static_cast<size_t>(b)]();
    for (size_t i = 0; i < found.size(); ++i) {
      found[i]->set_index(static_cast<int>(i));
      out.push_back(fail_after ? make_failing_device(std::move(found[i]), *fail_after)
                               : std::move(found[i]));
    }
  }
  return out;
}

}  // namespace fulcrum::offload
