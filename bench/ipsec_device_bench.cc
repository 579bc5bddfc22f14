// IPsec modes on a device, per SA mode the device kernels take, at 64 and 1500 B frames:
//   * the offload gateway (IPsecESPEncap -> balancer -> IPsecAESOffload ->
//     IPsecAuthHMACSHA1Offload, chained and fused), CPUOnly (intel-ipsec-mb) against DeviceOnly
//     (the first device of `fulcrum devices`), measured alternately, kRepeats times each;
//   * the fused kernel alone on that device: tasks of kTaskRegions ESP regions of the frame's
//     size built by hand (copies in and out included), regions per second, median of kRepeats.
// On a machine without a GPU that device is PoCL's OpenCL CPU device sharing the cores with the
// worker: the figures give the cost of the device path and the relative cost of the kernels
// (GHASH 4 bits at a time against HMAC-SHA1), not a GPU's rate.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "bench/offload_apps.hh"
#include "core/median.hh"
#include "lib/ipsec_sa.hh"
#include "offload/discovery.hh"
#include "offload/ipsec_tables.hh"
#include "offload/task.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kSizes[] = {64, 1500};
constexpr uint32_t kAggregate = 32;
constexpr uint32_t kTaskRegions = 2048;
constexpr uint32_t kEspHeadLen = 16;  // SPI, sequence number, IV
constexpr uint32_t kEspTrailerLen = 2;
constexpr uint32_t kEspAlign = 4;
constexpr uint32_t kEtherLen = 14;
const char* const kKey128 = "2b7e151628aed2a6abf7158809cf4f3c";
const char* const kKey256 = "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4";
const char* const kSalt = "deadbeef";
const char* const kAuth = "0102030405060708090a0b0c0d0e0f1011121314";

struct Mode {
  const char* name;
  std::string material, auth, options;
};

std::vector<Mode> modes() {
  const std::string k128 = kKey128, k256 = kKey256, salt = kSalt;
  return {
      {"aes128-ctr+hmac-sha1", k128 + salt, kAuth, ""},
      {"aes256-ctr+hmac-sha1 esn", k256 + salt, kAuth, "ESN on"},
      {"aes128-gcm", k128 + salt, "-", "CIPHER aes-gcm"},
      {"aes256-gcm esn", k256 + salt, "-", "CIPHER aes-gcm ESN on"},
  };
}

std::string write_sa_file(const BenchContext& ctx, const Mode& m, size_t index) {
  const std::string path = ctx.dir + "/ipsec-device-" + std::to_string(index) + ".txt";
  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return {};
  std::fprintf(f, "4096 192.0.2.1 198.51.100.1 %s %s 0.0.0.0/0 DIR out %s\n", m.material.c_str(),
               m.auth.c_str(), m.options.c_str());
  std::fclose(f);
  return path;
}

std::string gateway(const std::string& sa_file, const char* balancer) {
  const std::string q = "\"" + sa_file + "\"", agg = ", AGGREGATE " + std::to_string(kAggregate);
  return "FromInput -> IPsecESPEncap(" + q + ") -> " + balancer + " -> IPsecAESOffload(" + q + agg +
         ") -> IPsecAuthHMACSHA1Offload(" + q + agg + ") -> ToOutput;";
}

// Regions per second of the fused kernel on `dev` for the SA of `sa_file`, each region the ESP
// part an IPsecESPEncap'd `frame`-byte frame has; 0 on error.
double kernel_mpps(offload::Device& dev, const std::string& sa_file, uint32_t frame,
                   double seconds) {
  using Clock = std::chrono::steady_clock;
  auto table = SaTable::load(sa_file);
  if (!table || table.value()->size() == 0) return 0;
  const SaConfig& cfg = table.value()->at(0).cfg;
  const uint32_t text =
      (frame - kEtherLen + kEspTrailerLen + kEspAlign - 1) / kEspAlign * kEspAlign;
  const uint32_t len = kEspHeadLen + text + cfg.icv_len();
  const uint32_t stride = (len + offload::kIpsecRegionAlign - 1) / offload::kIpsecRegionAlign *
                          offload::kIpsecRegionAlign;
  auto tables = offload::IpsecTables::upload(dev, *table.value());
  auto exec = offload::TaskExecutor::create(dev);
  auto items = dev.alloc_host(kTaskRegions * offload::kIpsecItemBytes);
  auto bytes = dev.alloc_host(size_t{kTaskRegions} * stride);
  auto regions = dev.alloc_host(kTaskRegions * sizeof(offload::Region));
  auto icvs = dev.alloc_host(kTaskRegions * offload::kIpsecIcvBytes);
  auto back = dev.alloc_host(size_t{kTaskRegions} * stride);
  if (!tables || !exec || !items || !bytes || !regions || !icvs || !back) return 0;
  std::mt19937 rng(3);
  std::generate_n(bytes.value()->as<uint8_t>(), size_t{kTaskRegions} * stride,
                  [&] { return static_cast<uint8_t>(rng()); });
  for (uint32_t k = 0; k < kTaskRegions; ++k) {
    items.value()->as<uint32_t>()[k] = 0;
    regions.value()->as<offload::Region>()[k] = {k * stride, len};
  }
  offload::OffloadTask task;
  task.inputs = {{items.value().get(), offload::kIpsecItemBytes},
                 {bytes.value().get(), 0, kTaskRegions * stride},
                 {regions.value().get(), sizeof(offload::Region)}};
  task.outputs = {
      {icvs.value().get(), offload::kIpsecIcvBytes},
      {back.value().get(), 0, kTaskRegions * stride, static_cast<int32_t>(offload::kBytesInput)}};
  task.launches = {{offload::kIpsecFusedKernel, tables.value()->hmac_args()}};
  task.capacity = task.items = kTaskRegions;
  std::vector<double> rates;
  for (int r = 0; r < kRepeats; ++r) {
    const auto start = Clock::now();
    uint64_t done = 0;
    double elapsed = 0;
    do {
      task.status = offload::TaskStatus::kPending;
      if (offload::run_task_sync(*exec.value(), task) != offload::TaskStatus::kOk) return 0;
      done += kTaskRegions;
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < seconds / kRepeats);
    rates.push_back(static_cast<double>(done) / elapsed / 1e6);
  }
  return median(rates);
}

std::string bench_ipsec_device(const BenchContext& ctx) {
  const auto devices = offload::discover_devices();
  if (devices.empty()) return Obj().str("skipped", "no offload device").done();
  const std::vector<Mode> ms = modes();
  std::vector<std::string> rows;
  for (size_t i = 0; i < ms.size(); ++i) {
    const std::string file = write_sa_file(ctx, ms[i], i);
    if (file.empty()) return "null";
    std::vector<std::string> points;
    for (uint32_t size : kSizes) {
      const std::vector<std::string> ports = {
          "gen:size=" + std::to_string(size) + ",flows=" + std::to_string(kFlows) + ",dst=uniform",
          kNullTxOnly};
      const auto [cpu, dev] = measure_pair(gateway(file, kCpuOnly), gateway(file, kDeviceOnly),
                                           ports, ctx.seconds, BranchMode::kReuse);
      const double kernel = kernel_mpps(*devices.front(), file, size, ctx.seconds);
      std::fprintf(stderr,
                   "bench: ipsec_device %-26s %4u B: CPU %.3f Mpps, device %.3f Mpps (%.2fx); "
                   "fused kernel tasks alone %.3f Mregions/s\n",
                   ms[i].name, size, cpu.mpps, dev.mpps, cpu.mpps > 0 ? dev.mpps / cpu.mpps : 0,
                   kernel);
      points.push_back(Obj()
                           .count("frame_bytes", size)
                           .num("cpu_mpps", cpu.mpps)
                           .num("device_mpps", dev.mpps)
                           .num("device_gbps", gbps(dev.mpps, size))
                           .num("device_to_cpu", cpu.mpps > 0 ? dev.mpps / cpu.mpps : 0)
                           .num("fused_kernel_tasks_mregions", kernel)
                           .raw("balanced", cpu.balanced && dev.balanced ? "true" : "false")
                           .done());
    }
    rows.push_back(Obj().str("mode", ms[i].name).raw("points", array(points)).done());
  }
  return Obj()
      .str("what",
           "IPsec offload gateway per SA mode, 1 worker, gen dst=uniform -> net_null: "
           "IPsecESPEncap -> CPUOnly|DeviceOnly -> IPsecAESOffload -> IPsecAuthHMACSHA1Offload "
           "(chained, fused kernel), AGGREGATE 32; medians of 3 alternating runs; "
           "fused_kernel_tasks_mregions: the fused kernel alone in tasks of 2048 ESP regions of "
           "the frame's size (copies included), millions of regions per second")
      .str("device", devices.front()->label())
      .raw("modes", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(82, "ipsec_device", bench_ipsec_device);

}  // namespace fulcrum::bench
