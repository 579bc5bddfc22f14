#include "offload/registry.hh"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string_view>
#include <thread>
#include <utility>

namespace fulcrum::offload {
namespace {

constexpr size_t kBackends = 2;

std::array<DiscoverFn, kBackends>& backends() {
  static std::array<DiscoverFn, kBackends> fns{};
  return fns;
}

std::optional<uint64_t> fail_after_from_env() {
  const char* v = std::getenv(kFailAfterEnv);
  if (v == nullptr) return std::nullopt;
  uint64_t n = 0;
  const char* end = v + std::strlen(v);
  auto [ptr, ec] = std::from_chars(v, end, n);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return n;
}

// The state shared by a failing device and its queues: launches so far and the limit.
struct FailState {
  uint64_t limit = 0;
  std::atomic<uint64_t> launches{0};
  std::atomic<bool> tripped{false};

  Status check() const {
    if (tripped.load(std::memory_order_acquire))
      return make_error("device failed (injected by " + std::string(kFailAfterEnv) + ")");
    return {};
  }
};

class FailingQueue final : public Queue {
 public:
  FailingQueue(std::unique_ptr<Queue> inner, std::shared_ptr<FailState> state)
      : inner_(std::move(inner)), state_(std::move(state)) {}

  Status copy_to_device(DeviceBuffer& dst, size_t dst_offset, const HostBuffer& src,
                        size_t src_offset, size_t bytes) override {
    if (Status s = state_->check(); !s) return s;
    return inner_->copy_to_device(dst, dst_offset, src, src_offset, bytes);
  }
  Status copy_to_host(HostBuffer& dst, size_t dst_offset, const DeviceBuffer& src,
                      size_t src_offset, size_t bytes) override {
    if (Status s = state_->check(); !s) return s;
    return inner_->copy_to_host(dst, dst_offset, src, src_offset, bytes);
  }
  Status launch(const Kernel& kernel, LaunchDims dims, std::span<const KernelArg> args) override {
    if (state_->launches.fetch_add(1, std::memory_order_acq_rel) >= state_->limit)
      state_->tripped.store(true, std::memory_order_release);
    if (Status s = state_->check(); !s) return s;
    return inner_->launch(kernel, dims, args);
  }
  Status record() override {
    if (Status s = state_->check(); !s) return s;
    return inner_->record();
  }
  Result<bool> query() override {
    Result<bool> r = inner_->query();
    if (Status s = state_->check(); !s) return make_error(s.error());
    return r;
  }
  Status wait() override {
    Status w = inner_->wait();
    if (Status s = state_->check(); !s) return s;
    return w;
  }

 private:
  std::unique_ptr<Queue> inner_;
  std::shared_ptr<FailState> state_;
};

class FailingDevice final : public Device {
 public:
  FailingDevice(std::unique_ptr<Device> inner, uint64_t fail_after)
      : inner_(std::move(inner)), state_(std::make_shared<FailState>()) {
    state_->limit = fail_after;
    set_index(inner_->index());
  }

  const DeviceInfo& info() const override { return inner_->info(); }
  Result<std::unique_ptr<DeviceBuffer>> alloc(size_t bytes) override {
    if (Status s = state_->check(); !s) return make_error(s.error());
    return inner_->alloc(bytes);
  }
  Result<std::unique_ptr<HostBuffer>> alloc_host(size_t bytes) override {
    if (Status s = state_->check(); !s) return make_error(s.error());
    return inner_->alloc_host(bytes);
  }
  Result<std::unique_ptr<Queue>> create_queue() override {
    if (Status s = state_->check(); !s) return make_error(s.error());
    Result<std::unique_ptr<Queue>> q = inner_->create_queue();
    if (!q) return q;
    return std::unique_ptr<Queue>(std::make_unique<FailingQueue>(std::move(q.value()), state_));
  }
  Result<const Kernel*> kernel(std::string_view name) override { return inner_->kernel(name); }
  Status upload(DeviceBuffer& dst, const void* src, size_t bytes) override {
    if (Status s = state_->check(); !s) return s;
    return inner_->upload(dst, src, bytes);
  }

 private:
  std::unique_ptr<Device> inner_;
  std::shared_ptr<FailState> state_;
};

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

std::string_view backend_name(Backend b) {
  switch (b) {
    case Backend::kOpenCL:
      return "opencl";
    case Backend::kCuda:
      return "cuda";
  }
  return "unknown";
}

std::string_view device_kind_name(DeviceKind k) {
  switch (k) {
    case DeviceKind::kCpu:
      return "cpu";
    case DeviceKind::kGpu:
      return "gpu";
    case DeviceKind::kAccelerator:
      return "accelerator";
  }
  return "unknown";
}

std::string Device::label() const {
  return std::string(backend_name(info().backend)) + ":" + std::to_string(index_) + " " +
         info().name;
}

Status check_args(const Kernel& kernel, std::span<const KernelArg> args) {
  const std::string& sig = kernel.signature();
  if (args.size() != sig.size())
    return make_error("kernel " + kernel.name() + " takes " + std::to_string(sig.size()) +
                      " arguments, got " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i) {
    const char want = args[i].kind == KernelArg::Kind::kBuffer ? 'b' : 'u';
    if (sig[i] != want || (want == 'b' && args[i].buffer == nullptr))
      return make_error("kernel " + kernel.name() + ": argument " + std::to_string(i) +
                        " should be " + (sig[i] == 'b' ? "a buffer" : "a uint32"));
  }
  return {};
}

BackendRegistration::BackendRegistration(Backend backend, DiscoverFn discover) {
  backends()[static_cast<size_t>(backend)] = discover;
}

std::vector<Backend> compiled_backends() {
  std::vector<Backend> out;
  for (Backend b : {Backend::kOpenCL, Backend::kCuda})
    if (backend_compiled(b)) out.push_back(b);
  return out;
}

bool backend_compiled(Backend b) {
  return backends()[static_cast<size_t>(b)] != nullptr;
}

std::vector<std::unique_ptr<Device>> discover_devices(const DiscoverOptions& options) {
  const std::optional<uint64_t> fail_after =
      options.fail_after ? options.fail_after : fail_after_from_env();
  std::vector<std::unique_ptr<Device>> out;
  for (Backend b : compiled_backends()) {
    if (options.only && *options.only != b) continue;
    std::vector<std::unique_ptr<Device>> found = backends()[static_cast<size_t>(b)]();
    for (size_t i = 0; i < found.size(); ++i) {
      found[i]->set_index(static_cast<int>(i));
      out.push_back(fail_after ? make_failing_device(std::move(found[i]), *fail_after)
                               : std::move(found[i]));
    }
  }
  return out;
}

std::unique_ptr<Device> make_failing_device(std::unique_ptr<Device> inner, uint64_t fail_after) {
  return std::make_unique<FailingDevice>(std::move(inner), fail_after);
}

}  // namespace fulcrum::offload
