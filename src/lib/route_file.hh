// Route files over an address family: what the IPv4 (route_table.hh) and IPv6
// (route6_table.hh) route files share. A file holds one "PREFIX/LEN PORT" route a line in the
// table-file syntax of table_file.hh; reading, duplicate detection, formatting and writing are
// written once here, and a family supplies only its address (RouteFamily below). The error texts
// are the ones route_table.hh and route6_table.hh list.
#pragma once

#include <charconv>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "lib/table_file.hh"

namespace fulcrum {

// One route: a prefix with its host bits zero (the family's representation), its length and
// the output port index.
template <class Prefix>
struct BasicRoute {
  Prefix prefix;
  uint8_t len;
  uint16_t port;

  bool operator==(const BasicRoute&) const = default;
};

// What a family provides: its Route, the route form named in "expected" errors, the longest
// prefix, line-size estimates for reserving, and four functions on a route.
template <class F>
concept RouteFamily = requires(std::string_view text, typename F::Route& r, std::string& out) {
  { F::kForm } -> std::convertible_to<std::string_view>;
  { F::kMaxLen } -> std::convertible_to<uint32_t>;
  { F::kTypicalLineBytes } -> std::convertible_to<size_t>;
  { F::kMaxLineBytes } -> std::convertible_to<size_t>;
  { F::parse_address(text, r) } -> std::same_as<bool>;  // sets r.prefix from "ADDR"
  { F::host_bits_clear(r) } -> std::same_as<bool>;      // r.prefix beyond r.len is zero
  F::append_prefix(out, r);                             // appends "ADDR/LEN"
  F::key(r);  // ordered and hashable, equal exactly for equal (prefix, len)
};

// Appends the decimal digits of v.
inline void append_decimal(std::string& out, uint32_t v) {
  char digits[std::numeric_limits<uint32_t>::digits10 + 1];
  const auto [end, ec] = std::to_chars(digits, digits + sizeof digits, v);
  out.append(digits, end);
}

template <RouteFamily Family>
struct RouteFile {
  using Route = typename Family::Route;

  // Parses a route file's contents; `path` only names the file in error messages.
  static Result<std::vector<Route>> parse(std::string_view text, const std::string& path,
                                          uint32_t max_port) {
    return parse_unique_table<Route>(
        text, path, Family::kTypicalLineBytes,
        [max_port](std::string_view content, Route& route, std::string* error) {
          RouteLine f;
          auto address = [&route](std::string_view a) { return Family::parse_address(a, route); };
          if (!parse_route_line(content, Family::kForm, Family::kMaxLen, max_port, address, f,
                                *error))
            return false;
          route.len = static_cast<uint8_t>(f.len);
          route.port = static_cast<uint16_t>(f.port);
          if (Family::host_bits_clear(route)) return true;
          *error = "host bits set in " + std::string(f.prefix);
          return false;
        },
        [](const Route& r) { return Family::key(r); }, prefix_text);
  }

  static Result<std::vector<Route>> load(const std::string& path, uint32_t max_port) {
    Result<std::string> text = read_table_file(path, "route file");
    if (!text) return make_error(text.error());
    return parse(text.value(), path, max_port);
  }

  // "ADDR/LEN PORT" (no newline).
  static std::string format(const Route& r) {
    std::string out;
    append_route(out, r);
    return out;
  }

  // Writes `routes` one a line, after `header` (each of its lines becomes a "# " comment).
  static Status write(const std::string& path, std::span<const Route> routes,
                      std::string_view header) {
    std::string out = comment_lines(header);
    out.reserve(out.size() + routes.size() * Family::kMaxLineBytes);
    for (const Route& r : routes) {
      append_route(out, r);
      out += '\n';
    }
    return write_table_file(path, out, "route file");
  }

 private:
  static std::string prefix_text(const Route& r) {
    std::string out;
    Family::append_prefix(out, r);
    return out;
  }

  static void append_route(std::string& out, const Route& r) {
    Family::append_prefix(out, r);
    out += ' ';
    append_decimal(out, r.port);
  }
};

// splitmix64: the route generators' random source, a small, fast generator whose output is the
// same on every platform.
class RouteRng {
 public:
  explicit RouteRng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  uint32_t u32() { return static_cast<uint32_t>(next() >> 32); }
  // Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is negligible here).
  uint32_t below(uint32_t n) { return static_cast<uint32_t>((uint64_t{u32()} * n) >> 32); }
  // Uniform in [lo, hi].
  uint32_t range(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }
  bool chance(uint32_t percent) { return below(100) < percent; }

 private:
  uint64_t state_;
};

}  // namespace fulcrum
