// Offload benchmark group "offload_copy" (issue 4): per device found,
//   * pinned host-to-device and device-to-host copy bandwidth, 64 KiB .. 64 MiB;
//   * the DIR-24-8 kernel (10k-route table, tables resident) with tasks of 1, 8, 32 and 64
//     aggregated batches of 64 addresses: lookups per second with copies (one task at a time,
//     synchronous), and per task the time of the kernel alone and of the copies in and out
//     alone; the host-to-device rate of the task's input copy alone and end to end (input
//     bytes over the whole task), each as a share of the plain pinned copy's best H2D rate
//     (target >= 70 % end to end on a GPU);
//   * next to the CPU's Dir24_8::lookup_bulk rate on the same addresses in the same run.
// On PoCL (OpenCL on the CPU) every figure is a CPU figure: the point there is the overhead of
// the offload path, not speed.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "elements/ip/ip_lookup_offload.hh"
#include "lib/dir24_8.hh"
#include "lib/route_table.hh"
#include "offload/discovery.hh"
#include "offload/ipv4_lookup.hh"
#include "offload/stage/task_pool.hh"
#include "offload/task.hh"

namespace fulcrum::bench {
namespace {

using Clock = std::chrono::steady_clock;
using offload::Device;

constexpr size_t kKiB = 1024;
constexpr size_t kCopySizes[] = {64 * kKiB,      256 * kKiB,      kKiB* kKiB,
                                 4 * kKiB* kKiB, 16 * kKiB* kKiB, 64 * kKiB* kKiB};
constexpr uint32_t kAggregates[] = {1, 8, 32, 64};
constexpr uint32_t kBatch = 64;
constexpr size_t kRoutes = 10000;
constexpr uint64_t kSeed = 21;
constexpr size_t kAddresses = size_t{1} << 20;
constexpr double kMega = 1e6;
constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Each measured loop runs at least this many times and for at least its share of the time.
constexpr int kMinReps = 3;

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Median over kRepeats rounds of the mean time of `step` (seconds per call); -1 on error.
template <class F>
double time_per_call(double budget, F&& step) {
  std::vector<double> rounds;
  for (int r = 0; r < kRepeats; ++r) {
    const auto start = Clock::now();
    int n = 0;
    do {
      if (!step()) return -1;
      ++n;
    } while (n < kMinReps || seconds_since(start) < budget / kRepeats);
    rounds.push_back(seconds_since(start) / n);
  }
  return median_in_place(rounds);
}

struct CopyPoint {
  size_t bytes;
  double h2d_gib_s;
  double d2h_gib_s;
};

std::vector<CopyPoint> copy_bandwidth(Device& dev, offload::Queue& q, double budget) {
  std::vector<CopyPoint> out;
  const size_t max = kCopySizes[std::size(kCopySizes) - 1];
  auto host = dev.alloc_host(max);
  auto buf = dev.alloc(max);
  if (!host || !buf) return out;
  std::fill_n(host.value()->as<char>(), max, 1);
  const double per_point = budget / (2 * std::size(kCopySizes));
  for (size_t bytes : kCopySizes) {
    const double h2d = time_per_call(per_point, [&] {
      return q.copy_to_device(*buf.value(), 0, *host.value(), 0, bytes).ok() && q.record().ok() &&
             q.wait().ok();
    });
    const double d2h = time_per_call(per_point, [&] {
      return q.copy_to_host(*host.value(), 0, *buf.value(), 0, bytes).ok() && q.record().ok() &&
             q.wait().ok();
    });
    out.push_back({bytes, h2d > 0 ? bytes / h2d / kGiB : 0, d2h > 0 ? bytes / d2h / kGiB : 0});
  }
  return out;
}

std::string device_point(Device& dev, const Dir24_8& table, const std::vector<uint32_t>& addrs,
                         double cpu_mlookups, double budget) {
  auto q = dev.create_queue();
  auto tables = offload::Ipv4LookupTables::upload(dev, table);
  auto exec = offload::TaskExecutor::create(dev);
  if (!q || !tables || !exec) return "null";
  const std::vector<CopyPoint> copies = copy_bandwidth(dev, *q.value(), budget / 2);
  double ceiling = 0;  // the plain pinned copy's best H2D rate over the sizes measured
  for (const CopyPoint& c : copies) ceiling = std::max(ceiling, c.h2d_gib_s);
  std::vector<std::string> copy_rows;
  for (const CopyPoint& c : copies)
    copy_rows.push_back(Obj()
                            .count("bytes", c.bytes)
                            .num("h2d_gib_s", c.h2d_gib_s)
                            .num("d2h_gib_s", c.d2h_gib_s)
                            .done());

  std::vector<std::string> rows;
  const double per_point = budget / (2 * std::size(kAggregates));
  for (uint32_t aggregate : kAggregates) {
    const uint32_t items = aggregate * kBatch;
    // IPLookupOffload's task: its spec's buffers, `aggregate` batches, its tables' arguments.
    auto task = offload::make_task(dev, 0, IPLookupOffload::kOffload, aggregate, 0, false,
                                   tables.value()->args());
    if (!task) continue;
    offload::TaskBuffers& t = *task.value();
    size_t next = 0;
    auto fill = [&] {
      t.task.reset();
      while (t.task.fits(kBatch)) {
        std::memcpy(t.in_item(t.task.items), &addrs[next], kBatch * sizeof(uint32_t));
        t.task.add_batch(kBatch);
        next = (next + kBatch) % addrs.size();
      }
    };
    const double full = time_per_call(per_point / 3, [&] {
      fill();
      return offload::run_task_sync(*exec.value(), t.task) == offload::TaskStatus::kOk;
    });
    // The kernel alone (inputs already on the device) and the copies alone, one task's worth.
    auto in = dev.alloc(items * sizeof(uint32_t));
    auto out = dev.alloc(items * sizeof(uint16_t));
    auto kernel = dev.kernel(offload::kIpv4LookupKernel);
    if (!in || !out || !kernel) continue;
    const offload::KernelArg args[] = {
        offload::KernelArg::of(*in.value()), offload::KernelArg::of(*out.value()),
        offload::KernelArg::of(tables.value()->tbl24()),
        offload::KernelArg::of(tables.value()->tbllong()), offload::KernelArg::of(items)};
    offload::Queue& qq = *q.value();
    const double kernel_s = time_per_call(per_point / 3, [&] {
      return qq.launch(*kernel.value(), {items, 0}, args).ok() && qq.record().ok() &&
             qq.wait().ok();
    });
    fill();
    const double h2d_s = time_per_call(per_point / 3, [&] {
      return qq.copy_to_device(*in.value(), 0, *t.task.inputs[0].host, 0, items * 4).ok() &&
             qq.record().ok() && qq.wait().ok();
    });
    const double d2h_s = time_per_call(per_point / 3, [&] {
      return qq.copy_to_host(*t.task.outputs[0].host, 0, *out.value(), 0, items * 2).ok() &&
             qq.record().ok() && qq.wait().ok();
    });
    const double h2d_rate = h2d_s > 0 ? items * sizeof(uint32_t) / h2d_s / kGiB : 0;
    // End to end: the task's input bytes over the whole task (copy in, kernel, copy out).
    const double e2e_rate = full > 0 ? items * sizeof(uint32_t) / full / kGiB : 0;
    const double mlookups = full > 0 ? items / full / kMega : 0;
    std::fprintf(stderr,
                 "bench: offload %s: %u batches/task: %.2f M lookups/s with copies "
                 "(task %.1f us, kernel %.1f us, copy in %.1f us); CPU %.1f M lookups/s\n",
                 dev.label().c_str(), aggregate, mlookups, full * kMega, kernel_s * kMega,
                 h2d_s * kMega, cpu_mlookups);
    rows.push_back(Obj()
                       .count("batches_per_task", aggregate)
                       .count("lookups_per_task", items)
                       .num("mlookups_with_copies", mlookups)
                       .num("task_us", full * kMega)
                       .num("kernel_us", kernel_s * kMega)
                       .num("copy_in_us", h2d_s * kMega)
                       .num("copy_out_us", d2h_s * kMega)
                       .num("copy_in_gib_s", h2d_rate)
                       .num("h2d_share_of_pinned_copy", ceiling > 0 ? h2d_rate / ceiling : 0)
                       .num("e2e_h2d_gib_s", e2e_rate)
                       .num("e2e_h2d_share_of_pinned_copy", ceiling > 0 ? e2e_rate / ceiling : 0)
                       .num("ratio_to_cpu", cpu_mlookups > 0 ? mlookups / cpu_mlookups : 0)
                       .done());
  }
  return Obj()
      .str("device", dev.label())
      .str("kind", std::string(offload::device_kind_name(dev.info().kind)))
      .str("figures",
           dev.info().kind == offload::DeviceKind::kCpu
               ? "CPU device (e.g. PoCL): copies are memcpy and kernels run on the host cores; "
                 "not GPU figures"
               : "accelerator")
      .raw("numa_node", std::to_string(dev.info().numa_node))
      .num("pinned_h2d_ceiling_gib_s", ceiling)
      .raw("pinned_copies", array(copy_rows, "\n          "))
      .raw("ipv4_lookup", array(rows, "\n          "))
      .done();
}

std::string bench_offload_copy(const BenchContext& ctx) {
  Dir24_8 table;
  for (const Route4& r : generate_routes4(kRoutes, kSeed))
    if (!table.add(r.prefix, r.len, r.port)) return "null";
  if (!table.build()) return "null";
  std::mt19937 rng(kSeed);
  std::vector<uint32_t> addrs(kAddresses);
  for (uint32_t& a : addrs) a = rng();
  std::vector<uint16_t> hops(kAddresses);
  const double cpu_s = time_per_call(ctx.seconds / 2, [&] {
    table.lookup_bulk(addrs.data(), hops.data(), addrs.size());
    return true;
  });
  const double cpu_mlookups = cpu_s > 0 ? kAddresses / cpu_s / kMega : 0;

  std::vector<std::string> devices;
  for (const auto& dev : offload::discover_devices())
    devices.push_back(device_point(*dev, table, addrs, cpu_mlookups, ctx.seconds * 2));
  if (devices.empty())
    std::fprintf(stderr, "bench: offload_copy: no offload device found; CPU figure only\n");
  return Obj()
      .str("what",
           "per offload device: pinned H2D/D2H copy bandwidth; DIR-24-8 kernel lookups with "
           "copies at 1/8/32/64 aggregated batches of 64, kernel and copy time per task, H2D "
           "rate of the input copy and end to end as a share of the best pinned copy; CPU "
           "lookup_bulk in the same run")
      .num("cpu_mlookups", cpu_mlookups)
      .raw("devices", array(devices))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(90, "offload_copy", bench_offload_copy);

}  // namespace fulcrum::bench
