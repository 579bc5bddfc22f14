#include "lib/route6_table.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>
#include <unordered_set>

#include "lib/table_file.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMaxLen = Ip6Table::kMaxPrefixLen;
constexpr size_t kAddrTextMax = INET6_ADDRSTRLEN;  // longest address text, NUL included
// Sizing estimates: a generated route line is about 25 bytes, at most 52.
constexpr size_t kTypicalLineBytes = 25;
constexpr size_t kMaxLineBytes = INET6_ADDRSTRLEN + 12;

bool parse_address(std::string_view s, uint8_t* out) {
  char buf[kAddrTextMax];
  if (s.empty() || s.size() >= sizeof buf) return false;
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  return inet_pton(AF_INET6, buf, out) == 1;
}

struct LineParse {
  Route6 route{};
  std::string error;  // without the "PATH:LINE: " prefix
};

void parse_line(std::string_view content, uint32_t max_port, LineParse& out) {
  Route6 r{};
  RouteLine f;
  if (!parse_route_line(
          content, "X:X::/LEN PORT", kMaxLen, max_port,
          [&r](std::string_view text) { return parse_address(text, r.prefix.data()); }, f,
          out.error))
    return;
  const Addr6 a = Addr6::from_bytes(r.prefix.data());
  if (a.masked(f.len) != a) {
    out.error = "host bits set in " + std::string(f.prefix);
    return;
  }
  r.len = static_cast<uint8_t>(f.len);
  r.port = static_cast<uint16_t>(f.port);
  out.route = r;
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

std::string prefix_text(const Route6& r) {
  char text[kAddrTextMax];
  inet_ntop(AF_INET6, r.prefix.data(), text, sizeof text);
  return std::string(text) + "/" + std::to_string(r.len);
}

// splitmix64: a small, fast generator whose output is the same on every platform.
class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed) {}
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n), n > 0.
  uint32_t below(uint32_t n) {
    return static_cast<uint32_t>((uint64_t{static_cast<uint32_t>(next() >> 32)} * n) >> 32);
  }
  uint32_t range(uint32_t lo, uint32_t hi) { return lo + below(hi - lo + 1); }

 private:
  uint64_t state_;
};

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

uint32_t base_len(Rng& rng) {
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
  return parse_unique_table<Route6>(
      text, path, kTypicalLineBytes,
      [max_port](std::string_view content, Route6& route, std::string* error) {
        LineParse parsed;
        parse_line(content, max_port, parsed);
        if (!parsed.error.empty()) return *error = parsed.error, false;
        route = parsed.route;
        return true;
      },
      key_of, prefix_text);
}

Result<std::vector<Route6>> load_routes6(const std::string& path, uint32_t max_port) {
  Result<std::string> text = read_table_file(path, "route file");
  if (!text) return make_error(text.error());
  return parse_routes6(text.value(), path, max_port);
}

std::string format_route6(const Route6& r) {
  return prefix_text(r) + " " + std::to_string(r.port);
}

Status write_routes6(const std::string& path, std::span<const Route6> routes,
                     std::string_view header) {
  std::string out;
  while (!header.empty()) {
    size_t nl = header.find('\n');
    std::string_view line = header.substr(0, nl);
    out += line.empty() ? "#\n" : "# " + std::string(line) + "\n";
    header = nl == std::string_view::npos ? std::string_view{} : header.substr(nl + 1);
  }
  out.reserve(out.size() + routes.size() * kMaxLineBytes);
  for (const Route6& r : routes) {
    out += format_route6(r);
    out += '\n';
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return make_error("cannot write route file " + path + ": " + std::strerror(errno));
  if (std::fwrite(out.data(), 1, out.size(), f.get()) != out.size() || std::fflush(f.get()) != 0)
    return make_error("cannot write route file " + path + ": " + std::strerror(errno));
  return {};
}

std::vector<Route6> generate_routes6(size_t n, uint64_t seed, uint16_t ports) {
  Rng rng(seed);
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
