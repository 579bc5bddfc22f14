// IPv6 route files: loading, writing and generating tables of "X:X::/LEN PORT" routes.
//
// File format, one route a line (the IPv4 format of route_table.hh with IPv6 prefixes; the
// reading and writing shared with IPv4 is route_file.hh's):
//
//   # comment              (whole-line and trailing comments; blank lines are ignored)
//   2001:db8::/32    1     prefix/length (any inet_pton form), then the output port index
//
// Spaces and tabs may surround the two fields. Errors name the file and line (<line text> is the
// line without its comment and surrounding blanks):
//   PATH:LINE: expected 'X:X::/LEN PORT', got '<line text>'
//   PATH:LINE: prefix length 129 out of range 0..128
//   PATH:LINE: port 'x' is not a number
//   PATH:LINE: port 40000 out of range 0..32766
//   PATH:LINE: host bits set in 2001:db8::1/32          (no silent masking)
//   PATH:LINE: duplicate route 2001:db8::/32 (first on line 3)
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "lib/ip6_table.hh"
#include "lib/route_file.hh"

namespace fulcrum {

// prefix in network byte order
using Route6 = BasicRoute<std::array<uint8_t, Ip6Table::kAddrBytes>>;

inline constexpr uint16_t kMaxRoute6Port = Ip6Table::kMaxNextHop;

// Parses a route file's contents; `path` only names the file in error messages.
// Ports above max_port (the run's last port when a lookup element loads the file) are errors.
Result<std::vector<Route6>> parse_routes6(std::string_view text, const std::string& path,
                                          uint32_t max_port = kMaxRoute6Port);
Result<std::vector<Route6>> load_routes6(const std::string& path,
                                         uint32_t max_port = kMaxRoute6Port);

// "X:X::/LEN PORT" (no newline; the address as inet_ntop writes it).
std::string format_route6(const Route6& r);

// Writes `routes` one a line, after `header` (each of its lines becomes a "# " comment).
Status write_routes6(const std::string& path, std::span<const Route6> routes,
                     std::string_view header = {});

inline constexpr uint16_t kDefaultGenerated6Ports = 2;

// A synthetic IPv6 table of n distinct prefixes (n >= 1), deterministic from `seed`, ports uniform
// in 0..ports-1, sorted by (prefix, length). The mix (as PacketShader and G-Opt, whose tables are
// random /48../64 prefixes):
//   ~85%  routes /48../64 (a third /48, a third /64, the rest /49../63) in 2000::/3,
//   ~10%  shorter routes /16../47, each covering at least one of those,
//   ~5%   more-specifics /65../128 (a quarter /128) nested under a random /48../64 route.
std::vector<Route6> generate_routes6(size_t n, uint64_t seed,
                                     uint16_t ports = kDefaultGenerated6Ports);

}  // namespace fulcrum
