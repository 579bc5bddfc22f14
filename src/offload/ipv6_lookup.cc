#include "offload/ipv6_lookup.hh"

#include <algorithm>
#include <span>

namespace fulcrum::offload {
namespace {

// Allocates a device buffer for `data` (at least `min_bytes`: a device buffer cannot be empty)
// and uploads it.
template <class T>
Result<std::unique_ptr<DeviceBuffer>> upload_array(Device& device, std::span<const T> data,
                                                   size_t min_bytes) {
  Result<std::unique_ptr<DeviceBuffer>> buf = device.alloc(std::max(data.size_bytes(), min_bytes));
  if (!buf) return make_error(buf.error());
  if (!data.empty()) {
    if (Status s = device.upload(*buf.value(), data.data(), data.size_bytes()); !s)
      return make_error(s.error());
  }
  return buf;
}

}  // namespace

Result<std::unique_ptr<Ipv6LookupTables>> Ipv6LookupTables::upload(Device& device,
                                                                   const Ip6Trie& trie) {
  if (!trie.built()) return make_error("ipv6 lookup: the trie is not built");
  // A trie without routes longer than /24 has no group; the kernel never reads one then.
  Result<std::unique_ptr<DeviceBuffer>> t24 = upload_array(device, trie.tbl24(), 0);
  if (!t24) return make_error(t24.error());
  Result<std::unique_ptr<DeviceBuffer>> groups =
      upload_array(device, trie.group_entries(), Ip6Trie::kGroupEntries * sizeof(uint32_t));
  if (!groups) return make_error(groups.error());
  Result<std::unique_ptr<DeviceBuffer>> headers =
      upload_array(device, trie.header_words(), Ip6Trie::kHeaderWords * sizeof(uint64_t));
  if (!headers) return make_error(headers.error());
  return std::unique_ptr<Ipv6LookupTables>(new Ipv6LookupTables(
      device, std::move(t24.value()), std::move(groups.value()), std::move(headers.value())));
}

std::vector<TaskArg> Ipv6LookupTables::args() const {
  return {TaskArg::input(0),           TaskArg::output(0),           TaskArg::resident(*tbl24_),
          TaskArg::resident(*groups_), TaskArg::resident(*headers_), TaskArg::items()};
}

}  // namespace fulcrum::offload
