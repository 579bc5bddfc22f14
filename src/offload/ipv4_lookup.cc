#include "offload/ipv4_lookup.hh"

#include <algorithm>

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

}  // namespace fulcrum::offload
