#include "elements/ip6/ip6_lookup.hh"

#include <algorithm>

#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "lib/route6_table.hh"

namespace fulcrum {
namespace {

Result<std::shared_ptr<Ip6Table>> build_table(const std::string& file) {
  Result<std::vector<Route6>> routes = load_routes6(file);
  if (!routes) return make_error(routes.error());
  auto table = std::make_shared<Ip6Table>();
  for (const Route6& r : *routes) {
    Status s = table->add(r.prefix.data(), r.len, r.port);
    if (!s) return make_error(file + ": " + s.error());
  }
  Status s = table->build();
  if (!s) return make_error(file + ": " + s.error());
  return table;
}

}  // namespace

Status IP6Lookup::configure(Args& args) {
  loc_ = args.loc();
  return args.positional("FILE", file_).finish();
}

Status IP6Lookup::initialize(const InitContext& ctx) {
  ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{Ip6Table::kMaxNextHop} + 1));
  Result<std::shared_ptr<const Ip6Table>> table = shared_or_own<Ip6Table>(
      ctx.shared, "ipv6-routes:" + file_, [this] { return build_table(file_); });
  if (!table)
    return make_error(loc_.str() + ": " + name() + " :: " + std::string(kTraits.class_name) + ": " +
                      table.error());
  table_ = table.value();
  return {};
}

FULCRUM_REGISTER_ELEMENT(IP6Lookup);

}  // namespace fulcrum
