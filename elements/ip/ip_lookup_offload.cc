#include "elements/ip/ip_lookup_offload.hh"

#include <algorithm>

#include "core/registry.hh"
#include "core/shared_storage.hh"

namespace fulcrum {

Status IPLookupOffload::configure(Args& args) {
  std::string file;
  args.positional("FILE", file);
  if (Status s = configure_offload(args); !s) return s;
  Args cpu_args({file}, args.loc(), name(), kTraits.class_name);
  return cpu_.configure(cpu_args);
}

Status IPLookupOffload::initialize(const InitContext& ctx) {
  cpu_.set_name(name());
  if (Status s = cpu_.initialize(ctx); !s) return s;
  ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{Dir24_8::kMaxNextHop} + 1));
  return initialize_offload(ctx);
}

Result<std::vector<offload::TaskArg>> IPLookupOffload::device_args(const InitContext& ctx,
                                                                   size_t device) {
  offload::Device& dev = service().device(device);
  const std::string key = "ipv4-device-tables:" + dev.label() + ":" + cpu_.file();
  Result<std::shared_ptr<const offload::Ipv4LookupTables>> tables =
      shared_or_own<offload::Ipv4LookupTables>(
          ctx.shared, key, [&]() -> Result<std::shared_ptr<offload::Ipv4LookupTables>> {
            Result<std::unique_ptr<offload::Ipv4LookupTables>> t =
                offload::Ipv4LookupTables::upload(dev, cpu_.table());
            if (!t) return make_error(t.error());
            return std::shared_ptr<offload::Ipv4LookupTables>(std::move(t.value()));
          });
  if (!tables) return make_error(tables.error());
  const offload::Ipv4LookupTables& t = *tables.value();
  return std::vector<offload::TaskArg>{offload::TaskArg::input(0), offload::TaskArg::output(0),
                                       offload::TaskArg::resident(t.tbl24()),
                                       offload::TaskArg::resident(t.tbllong()),
                                       offload::TaskArg::items()};
}

FULCRUM_REGISTER_ELEMENT(IPLookupOffload);

}  // namespace fulcrum
