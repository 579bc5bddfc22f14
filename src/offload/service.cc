#include "offload/service.hh"

#include <rte_lcore.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string_view>

#include "core/shared_storage.hh"
#include "io/eal.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_spec.hh"
#include "offload/numa.hh"

namespace fulcrum::offload {

uint32_t default_task_timeout_ms() {
  const char* v = std::getenv(kTaskTimeoutEnv);
  if (v == nullptr) return kDefaultTaskTimeoutMs;
  uint32_t ms = 0;
  const char* end = v + std::strlen(v);
  auto [ptr, ec] = std::from_chars(v, end, ms);
  return ec == std::errc() && ptr == end && ms > 0 ? ms : kDefaultTaskTimeoutMs;
}

namespace {
std::optional<uint32_t>& release_ms_override() {
  static std::optional<uint32_t> ms;
  return ms;
}
}  // namespace

void set_device_release_ms(uint32_t ms) {
  release_ms_override() = ms;
}

bool OffloadService::release_when_idle(size_t i, uint32_t ms) const {
  if (threads_[i].size() != 1) return false;
  threads_[i].front().thread->set_release_after_ms(ms);
  return true;
}

Result<std::shared_ptr<OffloadService>> OffloadService::create() {
  std::shared_ptr<OffloadService> s(new OffloadService());
  DiscoverOptions options;
  if (const char* only = std::getenv("FULCRUM_OFFLOAD_BACKEND"); only != nullptr) {
    const std::string_view b(only);
    if (b == "opencl")
      options.only = Backend::kOpenCL;
    else if (b == "cuda")
      options.only = Backend::kCuda;
    else if (b == "emu")
      options.only = Backend::kEmu;
    else
      return make_error("FULCRUM_OFFLOAD_BACKEND: expected opencl, cuda or emu, got '" +
                        std::string(b) + "'");
  }
  if (Result<std::vector<EmuSpec>> emu = emulated_devices(); !emu) return make_error(emu.error());
  std::vector<int> pinned;
  if (const char* cpus = std::getenv(kDeviceThreadCpusEnv); cpus != nullptr) {
    Result<std::vector<int>> list = parse_cpulist(cpus);
    if (!list || list.value().empty())
      return make_error(std::string(kDeviceThreadCpusEnv) + ": expected a CPU list such as 1 or " +
                        "2-3, got '" + cpus + "'");
    pinned = list.value();
  }
  uint32_t release_ms = release_ms_override().value_or(0);
  if (const char* ms = std::getenv(kDeviceReleaseEnv);
      !release_ms_override() && ms != nullptr && *ms != '\0') {
    const char* end = ms + std::strlen(ms);
    auto [ptr, ec] = std::from_chars(ms, end, release_ms);
    if (ec != std::errc() || ptr != end)
      return make_error(std::string(kDeviceReleaseEnv) +
                        ": expected milliseconds (0: never), got '" + ms + "'");
  }
  const std::vector<NumaNode> nodes = numa_nodes();
  for (const NumaNode& n : nodes)
    for (int c : n.cpus) {
      if (static_cast<size_t>(c) >= s->cpu_node_.size())
        s->cpu_node_.resize(static_cast<size_t>(c) + 1, -1);
      s->cpu_node_[static_cast<size_t>(c)] = n.id;
    }
  s->devices_ = discover_devices(options);
  s->stats_ = std::make_unique<DeviceStats[]>(s->devices_.size());
  for (std::unique_ptr<Device>& d : s->devices_) {
    std::vector<NodeThread> per_node;
    for (const NumaNode& n : nodes) {
      DeviceThreadConfig config;
      config.numa_node = n.id;
      if (nodes.size() > 1) config.cpus = n.cpus;
      if (!pinned.empty()) config.cpus = pinned;
      if (nodes.size() == 1) config.release_after_ms = release_ms;
      Result<std::unique_ptr<DeviceThread>> t = DeviceThread::create(*d, config);
      if (!t) return make_error(d->label() + ": " + t.error());
      t.value()->start();
      per_node.push_back(NodeThread{n.id, std::move(t.value())});
    }
    s->threads_.push_back(std::move(per_node));
  }
  return s;
}

DeviceThread& OffloadService::thread(size_t i, int worker) const {
  const std::vector<NodeThread>& per_node = threads_[i];
  if (per_node.size() == 1 || worker < 0) return *per_node.front().thread;
  const unsigned lcore = worker_lcore(worker);
  if (lcore >= RTE_MAX_LCORE) return *per_node.front().thread;
  const int cpu = rte_lcore_to_cpu_id(static_cast<int>(lcore));
  const int node = cpu >= 0 && static_cast<size_t>(cpu) < cpu_node_.size()
                       ? cpu_node_[static_cast<size_t>(cpu)]
                       : -1;
  for (const NodeThread& t : per_node)
    if (t.node == node) return *t.thread;
  return *per_node.front().thread;
}

OffloadService::~OffloadService() {
  threads_.clear();  // each finishes (or fails) its tasks before its device goes
}

Result<std::shared_ptr<const OffloadService>> OffloadService::get(SharedStorage* shared) {
  return shared_or_own<OffloadService>(shared, kSharedKey, [] { return create(); });
}

}  // namespace fulcrum::offload
