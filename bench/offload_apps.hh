// The offloadable applications the offload benchmarks run (offload_sweep, adaptive): pipeline
// templates with the balancer left open, their table files and their traffic.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"

namespace fulcrum::bench {

inline constexpr uint32_t kFlows = 65536;
inline constexpr size_t kRoutes = 16384;
inline constexpr uint64_t kSeed = 7;
inline constexpr double kBitsPerByte = 8;
inline constexpr const char* kNullTxOnly = "net_null0,no-rx=1";
inline constexpr const char* kCpuOnly = "CPUOnly";
inline constexpr const char* kDeviceOnly = "DeviceOnly";

// The table files the applications read, written once into the bench's scratch directory.
struct Files {
  std::string routes4, routes6, sa, rules;
};
Status write_files(const std::string& dir, Files& f);

// One application, as pipeline templates: `offload` has the balancer ($B) in front of the
// offloadable element(s) and their aggregation ($AGG); `plain` is the same pipeline built of the
// CPU elements only. $ROUTES4, $ROUTES6, $SA, $RULES name the table files, $REWRITE the MACs.
enum class Traffic : uint8_t { kIpv4Routes, kIpv6Routes, kUdp };
struct App {
  const char* name;
  std::vector<const char*> needs;  // element classes; the row is skipped when one is missing
  std::vector<uint32_t> sizes;     // frame sizes in bytes, smallest first
  const char* offload;
  const char* plain;
  Traffic traffic;
  bool chain = false;  // the offload template has $CHAIN: chaining and fusion are compared
};

std::span<const App> offload_apps();
// Whether every element class the application needs is in this binary (else: which is not).
const char* missing_class(const App& app);

// The pipeline text of template `tmpl` with its variables filled in.
std::string pipeline(const char* tmpl, const Files& f, const std::string& balancer = {},
                     uint32_t aggregate = 0, const std::string& chain = {});
// The generator spec for the application's traffic at `size` bytes.
std::string traffic(const App& app, const Files& f, uint32_t size);
// FixedFraction(w)
std::string fraction(double w);
double gbps(double mpps, uint32_t size);

// The "own core" regime (issue 17): an emulated device computes on the host, so on a machine
// with few cores it adds capacity only when its device thread has a core the worker does not
// use. While an OwnCore(true) lives, runs pin their device threads (FULCRUM_DEVICE_THREAD_CPUS)
// to the CPU the runtime keeps for its control thread (the bench's one worker runs on another).
inline constexpr uint32_t kOwnCoreFlushUs = 2000;
class OwnCore {
 public:
  explicit OwnCore(bool on);
  ~OwnCore();
  OwnCore(const OwnCore&) = delete;
  OwnCore& operator=(const OwnCore&) = delete;
  const std::string& cpus() const { return cpus_; }

 private:
  bool on_;
  std::string cpus_;
};
// `text` with every offloadable element's tasks waiting up to kOwnCoreFlushUs to fill
// (AGGREGATE n -> AGGREGATE n, FLUSH_US ...): at a small offloaded share the default 100 us
// closes tasks of 2-3 batches, and the 8 tasks in flight then bound the device path.
std::string own_core_pipeline(std::string text);

// A comma-separated list in the environment variable `env` (FULCRUM_BENCH_PROFILES: device
// profiles; FULCRUM_BENCH_APPS: applications) picks what runs; unset: everything.
bool bench_selected(const char* env, std::string_view name);

}  // namespace fulcrum::bench
