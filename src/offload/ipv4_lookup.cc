#include "offload/ipv4_lookup.hh"

#include <algorithm>
#include <cstring>

namespace fulcrum::offload {

Result<std::unique_ptr<Ipv4LookupTables>> Ipv4LookupTables::upload(Device& device,
                                                                   const Dir24_8& table) {
  if (!table.built()) return make_error("ipv4 lookup: the table is not built");
  const auto tbl24 = table.tbl24();
  const auto tbllong = table.tbllong();
  Result<std::unique_ptr<DeviceBuffer>> t24 = device.alloc(tbl24.size_bytes());
  if (!t24) return make_error(t24.error());
  // A device buffer cannot be empty; a table without long prefixes gets one unused segment.
  const size_t long_bytes =
      std::max(tbllong.size_bytes(), Dir24_8::kSegmentEntries * sizeof(uint16_t));
  Result<std::unique_ptr<DeviceBuffer>> tl = device.alloc(long_bytes);
  if (!tl) return make_error(tl.error());
  if (Status s = device.upload(*t24.value(), tbl24.data(), tbl24.size_bytes()); !s)
    return make_error(s.error());
  if (!tbllong.empty()) {
    if (Status s = device.upload(*tl.value(), tbllong.data(), tbllong.size_bytes()); !s)
      return make_error(s.error());
  }
  return std::unique_ptr<Ipv4LookupTables>(
      new Ipv4LookupTables(device, std::move(t24.value()), std::move(tl.value())));
}

Result<std::unique_ptr<Ipv4LookupTask>> Ipv4LookupTask::create(const Ipv4LookupTables& tables,
                                                               uint32_t capacity,
                                                               uint32_t max_batches) {
  if (capacity == 0) return make_error("ipv4 lookup: task capacity must be positive");
  std::unique_ptr<Ipv4LookupTask> t(new Ipv4LookupTask());
  Result<std::unique_ptr<HostBuffer>> in = tables.device().alloc_host(capacity * sizeof(uint32_t));
  if (!in) return make_error(in.error());
  Result<std::unique_ptr<HostBuffer>> out = tables.device().alloc_host(capacity * sizeof(uint16_t));
  if (!out) return make_error(out.error());
  t->addrs_ = std::move(in.value());
  t->hops_ = std::move(out.value());
  OffloadTask& task = t->task;
  task.inputs = {{t->addrs_.get(), sizeof(uint32_t)}};
  task.outputs = {{t->hops_.get(), sizeof(uint16_t)}};
  task.launches = {{kIpv4LookupKernel,
                    {TaskArg::input(0), TaskArg::output(0), TaskArg::resident(tables.tbl24()),
                     TaskArg::resident(tables.tbllong()), TaskArg::items()}}};
  task.capacity = capacity;
  task.max_batches = max_batches;
  return t;
}

bool Ipv4LookupTask::add_batch(const uint32_t* addrs, uint32_t n) {
  if (!task.fits(n)) return false;
  std::memcpy(addrs_->as<uint32_t>() + task.items, addrs, n * sizeof(uint32_t));
  task.add_batch(n);
  return true;
}

}  // namespace fulcrum::offload
