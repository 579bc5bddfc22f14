#include "lib/route6_table.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cstring>
#include <unordered_set>

#include "lib/route_file.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMaxLen = Ip6Table::kMaxPrefixLen;
constexpr size_t kAddrTextMax = INET6_ADDRSTRLEN;  // longest address text, NUL included

bool parse_address(std::string_view s, uint8_t* out) {
  char buf[kAddrTextMax];
  if (s.empty() || s.size() >= sizeof buf) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  return inet_pton(AF_INET6, buf, out) == 1;
}

struct RouteKey {
  Addr6 prefix;
  uint8_t len;
  bool operator==(const RouteKey&) const = default;
  auto operator<=>(const RouteKey&) const = default;
};

RouteKey key_of(const Route6& r) {
  return RouteKey{Addr6::from_bytes(r.prefix.data()), r.len};
}

struct RouteKeyHash {
  size_t operator()(const RouteKey& k) const {
    constexpr uint64_t kMulHi = 0x9E3779B97F4A7C15ull, kMulLo = 0xC2B2AE3D27D4EB4Full;
    return static_cast<size_t>(k.prefix.hi * kMulHi ^ k.prefix.lo * kMulLo ^ k.len);
  }
};

// The IPv6 family of route_file.hh.
struct Ipv6Routes {
  using Route = Route6;
  static constexpr std::string_view kForm = "X:X::/LEN PORT";
  static constexpr uint32_t kMaxLen = fulcrum::kMaxLen;
  // Sizing estimates: a generated route line is about 25 bytes, at most 52.
  static constexpr size_t kTypicalLineBytes = 25;
  static constexpr size_t kMaxLineBytes = INET6_ADDRSTRLEN + 12;

  static bool parse_address(std::string_view text, Route6& r) {
    return fulcrum::parse_address(text, r.prefix.data());
  }
  static bool host_bits_clear(const Route6& r) {
    const Addr6 a = Addr6::from_bytes(r.prefix.data());
    return a.masked(r.len) == a;
  }
  // The address as inet_ntop writes it.
  static void append_prefix(std::string& out, const Route6& r) {
    char text[kAddrTextMax];
    inet_ntop(AF_INET6, r.prefix.data(), text, sizeof text);
    out += text;
    out += '/';
    append_decimal(out, r.len);
  }
  static RouteKey key(const Route6& r) { return key_of(r); }
};

using File = RouteFile<Ipv6Routes>;

// Generator mix (see route6_table.hh).
constexpr size_t kCoverPercent = 10;
constexpr size_t kLongPercent = 5;
constexpr uint32_t kBaseMinLen = 48;
constexpr uint32_t kBaseMaxLen = 64;
constexpr uint32_t kCoverMinLen = 16;
constexpr uint32_t kCoverMaxLen = 47;
constexpr uint32_t kLongMinLen = 65;
constexpr uint32_t kHostRoutePercent = 25;
constexpr uint32_t kThirds = 3;
constexpr uint64_t kGlobalUnicast = uint64_t{1} << 61;  // 2000::/3
constexpr uint64_t kUnder3 = ~uint64_t{0} >> 3;         // the bits below a /3

uint32_t base_len(RouteRng& rng) {
  switch (rng.below(kThirds)) {
    case 0:
      return kBaseMinLen;
    case 1:
      return kBaseMaxLen;
    default:
      return rng.range(kBaseMinLen + 1, kBaseMaxLen - 1);
  }
}

}  // namespace

Result<std::vector<Route6>> parse_routes6(std::string_view text, const std::string& path,
                                          uint32_t max_port) {
  return File::parse(text, path, max_port);
}

Result<std::vector<Route6>> load_routes6(const std::string& path, uint32_t max_port) {
  return File::load(path, max_port);
}

std::string format_route6(const Route6& r) {
  return File::format(r);
}

Status write_routes6(const std::string& path, std::span<const Route6> routes,
                     std::string_view header) {
  return File::write(path, routes, header);
}

std::vector<Route6> generate_routes6(size_t n, uint64_t seed, uint16_t ports) {
  RouteRng rng(seed);
  if (ports == 0) ports = 1;
  std::vector<Route6> routes;
  routes.reserve(n);
  std::unordered_set<RouteKey, RouteKeyHash> seen;
  seen.reserve(n * 2);
  auto try_add = [&](Addr6 addr, uint32_t len) {
    Route6 r{};
    addr.masked(len).to_bytes(r.prefix.data());
    r.len = static_cast<uint8_t>(len);
    r.port = static_cast<uint16_t>(rng.below(ports));
    if (!seen.insert(key_of(r)).second) return;
    routes.push_back(r);
  };

  const size_t n_cover = n * kCoverPercent / 100;
  const size_t n_long = n * kLongPercent / 100;
  const size_t n_base = n - n_cover - n_long;
  while (routes.size() < n_base)
    try_add(Addr6{kGlobalUnicast | (rng.next() & kUnder3), rng.next()}, base_len(rng));
  // Covering routes: a random base route cut to /16../47.
  while (routes.size() < n_base + n_cover) {
    const Route6& base = routes[rng.below(static_cast<uint32_t>(n_base))];
    try_add(Addr6::from_bytes(base.prefix.data()), rng.range(kCoverMinLen, kCoverMaxLen));
  }
  // More-specifics: a random base route extended with random host bits.
  while (routes.size() < n) {
    const Route6& base = routes[rng.below(static_cast<uint32_t>(n_base))];
    const Addr6 parent = Addr6::from_bytes(base.prefix.data());
    const uint32_t len =
        rng.below(100) < kHostRoutePercent ? kMaxLen : rng.range(kLongMinLen, kMaxLen);
    const Addr6 host{rng.next(), rng.next()};
    const uint32_t plen = base.len;
    try_add(Addr6{parent.hi | (host.hi & ~Addr6::hi_mask(plen)),
                  parent.lo | (host.lo & ~Addr6::lo_mask(plen))},
            len);
  }
  std::sort(routes.begin(), routes.end(),
            [](const Route6& a, const Route6& b) { return key_of(a) < key_of(b); });
  return routes;
}

}  // namespace fulcrum
