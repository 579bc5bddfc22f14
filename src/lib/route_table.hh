// IPv4 route files: loading, writing and generating tables of "A.B.C.D/LEN PORT" routes (the
// reading and writing shared with IPv6 is route_file.hh's).
//
// File format, one route a line:
//
//   # comment            (whole-line and trailing comments; blank lines are ignored)
//   10.0.0.0/8     1     prefix/length, then the output port index (order of --port flags)
//
// Spaces and tabs may surround the two fields. Errors name the file and line (<line text> is the
// line without its comment and surrounding blanks):
//   PATH:LINE: expected 'A.B.C.D/LEN PORT', got '<line text>'
//   PATH:LINE: prefix length 33 out of range 0..32
//   PATH:LINE: port 'x' is not a number
//   PATH:LINE: port 40000 out of range 0..32766
//   PATH:LINE: host bits set in 10.0.0.1/8            (as `ip route` does, no silent masking)
//   PATH:LINE: duplicate route 10.0.0.0/8 (first on line 3)
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "lib/dir24_8.hh"
#include "lib/route_file.hh"

namespace fulcrum {

using Route4 = BasicRoute<uint32_t>;  // prefix in host byte order

inline constexpr uint16_t kMaxRoutePort = Dir24_8::kMaxNextHop;

// Parses a route file's contents; `path` only names the file in error messages.
// Ports above max_port (the run's last port when a lookup element loads the file) are errors.
Result<std::vector<Route4>> parse_routes4(std::string_view text, const std::string& path,
                                          uint32_t max_port = kMaxRoutePort);
Result<std::vector<Route4>> load_routes4(const std::string& path,
                                         uint32_t max_port = kMaxRoutePort);

// "A.B.C.D/LEN PORT" (no newline).
std::string format_route4(const Route4& r);

// Writes `routes` one a line, after `header` (each of its lines becomes a "# " comment).
Status write_routes4(const std::string& path, std::span<const Route4> routes,
                     std::string_view header = {});

inline constexpr uint16_t kDefaultGeneratedPorts = 2;

// A synthetic BGP-like table of n distinct prefixes, deterministic from `seed`, ports uniform in
// 0..ports-1, sorted by (prefix, length). The mix:
//   ~1.5%  covering routes /8../16 (mostly /16, a few /8),
//   ~88.5% routes /17../24 (60% /24) anywhere in 1.0.0.0..223.255.255.255 but 127/8,
//   ~10%   more-specifics nested under existing routes: 60% down to /24, 40% /25../32. The
//          /25../32 ones fall into at most max(1, n/32) /24 blocks (and never more than 16384),
//          several per block, so a DIR-24-8 TBLlong stays within its segment limit.
std::vector<Route4> generate_routes4(size_t n, uint64_t seed,
                                     uint16_t ports = kDefaultGeneratedPorts);

}  // namespace fulcrum
