#include "elements/ip6/ip6_lookup_offload.hh"

#include <algorithm>
#include <memory>
#include <string>

#include "core/registry.hh"
#include "core/shared_storage.hh"

namespace fulcrum {

Status IP6LookupOffload::configure(Args& args) {
  std::string file;
  args.positional("FILE", file);
  if (Status s = configure_offload(args); !s) return s;
  Args cpu_args({file}, args.loc(), name(), kTraits.class_name);
  return cpu_.configure(cpu_args);
}

Status IP6LookupOffload::initialize(const InitContext& ctx) {
  cpu_.set_name(name());
  if (Status s = cpu_.initialize(ctx); !s) return s;
  ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{Ip6Trie::kMaxNextHop} + 1));
  return initialize_offload(ctx);
}

Result<std::vector<offload::TaskArg>> IP6LookupOffload::device_args(const InitContext& ctx,
                                                                    size_t device) {
  const Ip6Trie* trie = cpu_.table().trie();
  if (trie == nullptr) return make_error("IP6LookupOffload: the table is not a trie");
  offload::Device& dev = service().device(device);
  const std::string key = "ipv6-device-tables:" + dev.label() + ":" + cpu_.file();
  Result<std::shared_ptr<const offload::Ipv6LookupTables>> tables =
      shared_or_own<offload::Ipv6LookupTables>(
          ctx.shared, key, [&]() -> Result<std::shared_ptr<offload::Ipv6LookupTables>> {
            Result<std::unique_ptr<offload::Ipv6LookupTables>> t =
                offload::Ipv6LookupTables::upload(dev, *trie);
            if (!t) return make_error(t.error());
            return std::shared_ptr<offload::Ipv6LookupTables>(std::move(t.value()));
          });
  if (!tables) return make_error(tables.error());
  return tables.value()->args();
}

FULCRUM_REGISTER_ELEMENT(IP6LookupOffload);

}  // namespace fulcrum
