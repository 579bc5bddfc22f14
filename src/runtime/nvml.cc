#include "runtime/nvml.hh"

#include <dlfcn.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <tuple>

namespace fulcrum {
namespace {

// The few NVML declarations used (nvml.h, NVML API version 11+), so nothing of NVML's is needed
// to build.
using nvmlReturn_t = int;
using nvmlDevice_t = void*;
constexpr nvmlReturn_t kNvmlSuccess = 0;
struct nvmlPciInfo_t {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
};

constexpr const char* kDefaultLibrary = "libnvidia-ml.so.1";
constexpr auto kSamplePeriod = std::chrono::milliseconds(100);
constexpr double kJoulesPerMillijoule = 1e-3, kWattsPerMilliwatt = 1e-3;

using Clock = std::chrono::steady_clock;

// (domain, bus, device, function) of "0000:3b:00.0" or NVML's "00000000:3B:00.0"; all -1 when
// it does not parse.
std::tuple<long, long, long, long> parse_bus_id(const std::string& s) {
  unsigned int d = 0, b = 0, dev = 0, f = 0;
  if (std::sscanf(s.c_str(), "%x:%x:%x.%x", &d, &b, &dev, &f) != 4) return {-1, -1, -1, -1};
  return {d, b, dev, f};
}

}  // namespace

struct NvmlMeter::Impl {
  void* lib = nullptr;
  bool initialized = false;
  nvmlReturn_t (*shutdown)() = nullptr;
  const char* (*error_string)(nvmlReturn_t) = nullptr;
  nvmlReturn_t (*total_energy)(nvmlDevice_t, unsigned long long*) = nullptr;
  nvmlReturn_t (*power_usage)(nvmlDevice_t, unsigned int*) = nullptr;

  struct Device {
    nvmlDevice_t handle = nullptr;
    bool available = false, counter = false;
    std::string method;
    unsigned long long start_mj = 0;
    // Sampling: trapezoids of the power over time.
    double joules = 0, last_w = 0;
    Clock::time_point last;
    bool failed = false;
    std::string why_not;
  };
  std::vector<Device> devices;
  Clock::time_point started;

  std::thread sampler;
  std::mutex mu;
  std::condition_variable cv;
  bool stopping = false;

  std::string error(nvmlReturn_t r) const {
    const char* s = error_string != nullptr ? error_string(r) : nullptr;
    return s != nullptr ? s : "NVML error " + std::to_string(r);
  }

  // One power sample of every sampled device, added to its integral.
  void sample() {
    for (Device& d : devices) {
      if (!d.available || d.counter || d.failed) continue;
      unsigned int mw = 0;
      const Clock::time_point now = Clock::now();
      if (const nvmlReturn_t r = power_usage(d.handle, &mw); r != kNvmlSuccess) {
        d.failed = true;
        d.why_not = "nvmlDeviceGetPowerUsage: " + error(r);
        continue;
      }
      const double w = mw * kWattsPerMilliwatt;
      d.joules += (d.last_w + w) / 2 * std::chrono::duration<double>(now - d.last).count();
      d.last_w = w;
      d.last = now;
    }
  }

  ~Impl() {
    if (sampler.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu);
        stopping = true;
      }
      cv.notify_all();
      sampler.join();
    }
    if (initialized && shutdown != nullptr) shutdown();
    if (lib != nullptr) dlclose(lib);
  }
};

NvmlMeter::NvmlMeter() : impl_(std::make_unique<Impl>()) {}
NvmlMeter::NvmlMeter(NvmlMeter&&) noexcept = default;
NvmlMeter& NvmlMeter::operator=(NvmlMeter&&) noexcept = default;
NvmlMeter::~NvmlMeter() = default;

NvmlMeter NvmlMeter::open(const std::vector<std::string>& pci_bus_ids, const std::string& library) {
  NvmlMeter m;
  Impl& im = *m.impl_;
  im.devices.resize(pci_bus_ids.size());
  auto fail_all = [&](const std::string& why) {
    for (Impl::Device& d : im.devices) d.method = why;
    return std::move(m);
  };
  std::string path = library;
  if (path.empty()) {
    const char* env = std::getenv("FULCRUM_NVML_LIBRARY");
    path = env != nullptr && *env != '\0' ? env : kDefaultLibrary;
  }
  im.lib = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (im.lib == nullptr) return fail_all("no NVML: cannot load " + path);
  auto sym = [&](const char* name) { return dlsym(im.lib, name); };
  auto init = reinterpret_cast<nvmlReturn_t (*)()>(sym("nvmlInit_v2"));
  auto count = reinterpret_cast<nvmlReturn_t (*)(unsigned int*)>(sym("nvmlDeviceGetCount_v2"));
  auto by_index = reinterpret_cast<nvmlReturn_t (*)(unsigned int, nvmlDevice_t*)>(
      sym("nvmlDeviceGetHandleByIndex_v2"));
  auto pci_info = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, nvmlPciInfo_t*)>(
      sym("nvmlDeviceGetPciInfo_v3"));
  im.shutdown = reinterpret_cast<nvmlReturn_t (*)()>(sym("nvmlShutdown"));
  im.error_string = reinterpret_cast<const char* (*)(nvmlReturn_t)>(sym("nvmlErrorString"));
  im.total_energy = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, unsigned long long*)>(
      sym("nvmlDeviceGetTotalEnergyConsumption"));
  im.power_usage = reinterpret_cast<nvmlReturn_t (*)(nvmlDevice_t, unsigned int*)>(
      sym("nvmlDeviceGetPowerUsage"));
  if (init == nullptr || count == nullptr || by_index == nullptr || pci_info == nullptr ||
      im.shutdown == nullptr || im.total_energy == nullptr || im.power_usage == nullptr)
    return fail_all("no NVML: " + path + " lacks an NVML function");
  if (const nvmlReturn_t r = init(); r != kNvmlSuccess)
    return fail_all("no NVML: nvmlInit: " + im.error(r));
  im.initialized = true;
  unsigned int n = 0;
  if (const nvmlReturn_t r = count(&n); r != kNvmlSuccess)
    return fail_all("no NVML: nvmlDeviceGetCount: " + im.error(r));
  for (size_t i = 0; i < pci_bus_ids.size(); ++i) {
    Impl::Device& d = im.devices[i];
    const auto want = parse_bus_id(pci_bus_ids[i]);
    d.method = "no NVML device has PCI bus id " +
               (pci_bus_ids[i].empty() ? std::string("(unknown)") : pci_bus_ids[i]);
    if (std::get<0>(want) < 0) continue;
    for (unsigned int k = 0; k < n; ++k) {
      nvmlDevice_t h = nullptr;
      nvmlPciInfo_t info{};
      if (by_index(k, &h) != kNvmlSuccess || pci_info(h, &info) != kNvmlSuccess) continue;
      info.busId[sizeof info.busId - 1] = '\0';
      if (parse_bus_id(info.busId) != want) continue;
      d.handle = h;
      unsigned long long mj = 0;
      unsigned int mw = 0;
      if (im.total_energy(h, &mj) == kNvmlSuccess) {
        d.available = d.counter = true;
        d.method = "NVML energy counter";
      } else if (const nvmlReturn_t r = im.power_usage(h, &mw); r == kNvmlSuccess) {
        d.available = true;
        d.method = "NVML power samples";
      } else {
        d.method = "NVML cannot read energy or power of " + pci_bus_ids[i] + ": " + im.error(r);
      }
      break;
    }
  }
  return m;
}

size_t NvmlMeter::devices() const {
  return impl_->devices.size();
}
bool NvmlMeter::available(size_t i) const {
  return impl_->devices[i].available;
}
const std::string& NvmlMeter::method(size_t i) const {
  return impl_->devices[i].method;
}

void NvmlMeter::start() {
  Impl& im = *impl_;
  im.started = Clock::now();
  bool sampled = false;
  for (Impl::Device& d : im.devices) {
    if (!d.available) continue;
    if (d.counter) {
      if (const nvmlReturn_t r = im.total_energy(d.handle, &d.start_mj); r != kNvmlSuccess) {
        d.failed = true;
        d.why_not = "nvmlDeviceGetTotalEnergyConsumption: " + im.error(r);
      }
      continue;
    }
    unsigned int mw = 0;
    if (const nvmlReturn_t r = im.power_usage(d.handle, &mw); r != kNvmlSuccess) {
      d.failed = true;
      d.why_not = "nvmlDeviceGetPowerUsage: " + im.error(r);
      continue;
    }
    d.last_w = mw * kWattsPerMilliwatt;
    d.last = im.started;
    sampled = true;
  }
  if (!sampled) return;
  im.stopping = false;
  im.sampler = std::thread([&im] {
    std::unique_lock<std::mutex> lock(im.mu);
    while (!im.cv.wait_for(lock, kSamplePeriod, [&im] { return im.stopping; })) im.sample();
  });
}

std::vector<NvmlMeter::Reading> NvmlMeter::stop() {
  Impl& im = *impl_;
  if (im.sampler.joinable()) {
    {
      std::lock_guard<std::mutex> lock(im.mu);
      im.stopping = true;
    }
    im.cv.notify_all();
    im.sampler.join();
    im.sample();
  }
  const Clock::time_point now = Clock::now();
  std::vector<Reading> out(im.devices.size());
  for (size_t i = 0; i < im.devices.size(); ++i) {
    Impl::Device& d = im.devices[i];
    Reading& r = out[i];
    r.method = d.method;
    if (!d.available) {
      r.why_not = d.method;
      continue;
    }
    if (d.failed) {
      r.why_not = d.why_not;
      continue;
    }
    if (d.counter) {
      unsigned long long mj = 0;
      if (const nvmlReturn_t e = im.total_energy(d.handle, &mj); e != kNvmlSuccess) {
        r.why_not = "nvmlDeviceGetTotalEnergyConsumption: " + im.error(e);
        continue;
      }
      r.joules = static_cast<double>(mj - d.start_mj) * kJoulesPerMillijoule;
      r.seconds = std::chrono::duration<double>(now - im.started).count();
    } else {
      r.joules = d.joules;
      r.seconds = std::chrono::duration<double>(d.last - im.started).count();
    }
    r.ok = true;
  }
  return out;
}

}  // namespace fulcrum
