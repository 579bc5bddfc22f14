#include "elements/ip/ip_lookup.hh"

#include <algorithm>

#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "lib/route_table.hh"

namespace fulcrum {
namespace {

Result<std::shared_ptr<Dir24_8>> build_table(const std::string& file) {
  Result<std::vector<Route4>> routes = load_routes4(file);
  if (!routes) return make_error(routes.error());
  auto table = std::make_shared<Dir24_8>();
  for (const Route4& r : *routes) {
    Status s = table->add(r.prefix, r.len, r.port);
    if (!s) return make_error(file + ": " + s.error());
  }
  Status s = table->build();
  if (!s) return make_error(file + ": " + s.error());
  return table;
}

}  // namespace

Status IPLookup::configure(Args& args) {
  loc_ = args.loc();
  return args.positional("FILE", file_).finish();
}

Status IPLookup::initialize(const InitContext& ctx) {
  ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{Dir24_8::kMaxNextHop} + 1));
  Result<std::shared_ptr<const Dir24_8>> table = shared_or_own<Dir24_8>(
      ctx.shared, "ipv4-routes:" + file_, [this] { return build_table(file_); });
  if (!table)
    return make_error(loc_.str() + ": " + name() + " :: " + std::string(kTraits.class_name) + ": " +
                      table.error());
  table_ = table.value();
  return {};
}

FULCRUM_REGISTER_ELEMENT(IPLookup);

}  // namespace fulcrum
