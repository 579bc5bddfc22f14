// Fuzz target: the IPv6 route file parser (src/lib/route6_table.*, parse_routes6).
//
// Input: a route file's text. Checked: the routes parsed, written back with format_route6 one a
// line, parse again to the same routes.
#include <cstdint>
#include <string>

#include "fuzz_support.hh"
#include "lib/route6_table.hh"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fulcrum;
  Result<std::vector<Route6>> r = parse_routes6(fuzz::as_text(data, size), "fuzz-routes6.txt");
  if (!r.ok()) return 0;
  std::string text;
  for (const Route6& route : r.value()) {
    FUZZ_CHECK(route.len <= 128, "prefix length " + std::to_string(route.len));
    FUZZ_CHECK(route.port <= kMaxRoute6Port, "port " + std::to_string(route.port));
    text += format_route6(route) + "\n";
  }
  Result<std::vector<Route6>> again = parse_routes6(text, "formatted");
  FUZZ_CHECK(again.ok(), again.ok() ? "" : again.error());
  FUZZ_CHECK(again.value() == r.value(), "routes changed when written and read again:\n" + text);
  return 0;
}
