#include "elements/ip6/ip6_lookup.hh"

#include "core/registry.hh"
#include "lib/route6_table.hh"

namespace fulcrum {

Result<std::shared_ptr<Ip6Table>> IP6Lookup::build_table(const std::string& file) {
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

FULCRUM_REGISTER_ELEMENT(IP6Lookup);

}  // namespace fulcrum
