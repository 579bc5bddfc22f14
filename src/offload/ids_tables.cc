#include "offload/ids_tables.hh"

namespace fulcrum::offload {

Result<std::unique_ptr<IdsScanTables>> IdsScanTables::upload(Device& device,
                                                             const ids::AhoCorasick& ac) {
  const auto classes = ac.classes();
  const auto table = ac.table();
  Result<std::unique_ptr<DeviceBuffer>> c = device.alloc(classes.size_bytes());
  if (!c) return make_error(c.error());
  if (Status s = device.upload(*c.value(), classes.data(), classes.size_bytes()); !s)
    return make_error(s.error());
  Result<std::unique_ptr<DeviceBuffer>> t = device.alloc(table.size_bytes());
  if (!t) return make_error(t.error());
  if (Status s = device.upload(*t.value(), table.data(), table.size_bytes()); !s)
    return make_error(s.error());
  return std::unique_ptr<IdsScanTables>(
      new IdsScanTables(device, std::move(c.value()), std::move(t.value())));
}

std::vector<TaskArg> IdsScanTables::args() const {
  return {TaskArg::input(kBytesInput),     TaskArg::input(kRegionsInput),
          TaskArg::resident(*classes_),    TaskArg::resident(*table_),
          TaskArg::output(kResultsOutput), TaskArg::items()};
}

}  // namespace fulcrum::offload
