// IPv4 DIR-24-8 lookup on a device: the first kernel of the offload path (NBA's IPv4 router
// kernel). The tables of a built Dir24_8 are uploaded once (Ipv4LookupTables); each task
// carries an array of addresses (host byte order) in and one next hop per address out, exactly
// what Dir24_8::lookup_bulk computes on the CPU. Kernel: kernels/ipv4_lookup.cl.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/result.hh"
#include "lib/dir24_8.hh"
#include "offload/device.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

inline constexpr const char* kIpv4LookupKernel = "ipv4_dir24_8_lookup";

// A Dir24_8's TBL24 and TBLlong on one device.
class Ipv4LookupTables {
 public:
  static Result<std::unique_ptr<Ipv4LookupTables>> upload(Device& device, const Dir24_8& table);

  Device& device() const { return device_; }
  const DeviceBuffer& tbl24() const { return *tbl24_; }
  const DeviceBuffer& tbllong() const { return *tbllong_; }
  // The kernel's arguments, in parameter order (addresses, next hops, tables, count).
  std::vector<TaskArg> args() const {
    return {TaskArg::input(0), TaskArg::output(0), TaskArg::resident(*tbl24_),
            TaskArg::resident(*tbllong_), TaskArg::items()};
  }

 private:
  Ipv4LookupTables(Device& d, std::unique_ptr<DeviceBuffer> t24, std::unique_ptr<DeviceBuffer> tl)
      : device_(d), tbl24_(std::move(t24)), tbllong_(std::move(tl)) {}

  Device& device_;
  std::unique_ptr<DeviceBuffer> tbl24_;
  std::unique_ptr<DeviceBuffer> tbllong_;
};

// An OffloadTask for up to `capacity` addresses, with its pinned host buffers on the tables'
// device. Fill it batch by batch with add_batch(), submit `task`, read next_hops().
class Ipv4LookupTask {
 public:
  static Result<std::unique_ptr<Ipv4LookupTask>> create(
      const Ipv4LookupTables& tables, uint32_t capacity,
      uint32_t max_batches = kDefaultAggregateBatches);

  // Appends one batch of addresses; false (nothing appended) when it does not fit.
  bool add_batch(const uint32_t* addrs, uint32_t n);
  const uint32_t* addresses() const { return addrs_->as<const uint32_t>(); }
  const uint16_t* next_hops() const { return hops_->as<const uint16_t>(); }
  // The CPU path for the same task (what a worker runs when the task comes back failed).
  void run_on_cpu(const Dir24_8& table) {
    table.lookup_bulk(addresses(), hops_->as<uint16_t>(), task.items);
  }

  OffloadTask task;

 private:
  Ipv4LookupTask() = default;
  std::unique_ptr<HostBuffer> addrs_;
  std::unique_ptr<HostBuffer> hops_;
};

}  // namespace fulcrum::offload
