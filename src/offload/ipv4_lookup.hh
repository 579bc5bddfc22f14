// IPv4 DIR-24-8 lookup on a device: the first kernel of the offload path (NBA's IPv4 router
// kernel). The tables of a built Dir24_8 are uploaded once (Ipv4LookupTables); each task of
// IPLookupOffload carries an array of addresses (host byte order) in and one next hop per
// address out, exactly what Dir24_8::lookup_bulk computes on the CPU. Kernel:
// kernels/ipv4_lookup.cl.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
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

}  // namespace fulcrum::offload
