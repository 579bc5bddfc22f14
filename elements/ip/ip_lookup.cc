#include "elements/ip/ip_lookup.hh"

#include "lib/route_table.hh"

namespace fulcrum {

Result<std::shared_ptr<Dir24_8>> IPLookup::build_table(const std::string& file, uint32_t max_port) {
  Result<std::vector<Route4>> routes = load_routes4(file, max_port);
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

}  // namespace fulcrum
