// Fuzz target: the IPv4 route file parser (src/lib/route_table.*, parse_routes4).
//
// Input: a route file's text. Checked: the routes parsed, written back with format_route4 one a
// line, parse again to the same routes (no silent change, no lost route).
#include <cstdint>
#include <string>

#include "fuzz_support.hh"
#include "lib/route_table.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fulcrum;
  Result<std::vector<Route4>> r = parse_routes4(fuzz::as_text(data, size), "fuzz-routes.txt");
  if (!r.ok()) return 0;
  std::string text;
  for (const Route4& route : r.value()) {
    FUZZ_CHECK(route.len <= 32, "prefix length " + std::to_string(route.len));
    FUZZ_CHECK(route.port <= kMaxRoutePort, "port " + std::to_string(route.port));
    text += format_route4(route) + "\n";
  }
  Result<std::vector<Route4>> again = parse_routes4(text, "formatted");
  FUZZ_CHECK(again.ok(), again.ok() ? "" : again.error());
  FUZZ_CHECK(again.value() == r.value(), "routes changed when written and read again:\n" + text);
  return 0;
}
