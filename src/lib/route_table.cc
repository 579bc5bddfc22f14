#include "lib/route_table.hh"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "lib/route_file.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kOctets = 4;
constexpr uint32_t kMaxOctet = 255;
constexpr uint32_t kOctetBits = 8;
constexpr uint32_t kOctetMask = 0xFF;
constexpr uint32_t kFirstOctetShift = 24;
constexpr uint32_t kLowOctetsMask = 0xFFFFFF;  // all but the first octet
constexpr uint32_t kMaxLen = 32;
constexpr uint32_t kLen24 = 24;

uint32_t mask_of(uint32_t len) {
  return len == 0 ? 0 : ~uint32_t{0} << (kMaxLen - len);
}

// Parses "A.B.C.D" exactly; false on anything else.
bool parse_address(std::string_view s, uint32_t& out) {
  const char* p = s.data();
  const char* end = s.data() + s.size();
  uint32_t addr = 0;
  for (uint32_t i = 0; i < kOctets; ++i) {
    if (i > 0) {
      if (p == end || *p != '.') return false;
      ++p;
    }
    if (p == end || *p < '0' || *p > '9') return false;
    uint32_t octet = 0;
    auto [next, ec] = std::from_chars(p, end, octet);
    if (ec != std::errc() || octet > kMaxOctet) return false;
    p = next;
    addr = (addr << kOctetBits) | octet;
  }
  if (p != end) return false;
  out = addr;
  return true;
}

// prefix in the high bits, length in the low byte.
constexpr uint32_t kKeyLenBits = 8;
uint64_t route_key(const Route4& r) {
  return (uint64_t{r.prefix} << kKeyLenBits) | r.len;
}

// The IPv4 family of route_file.hh.
struct Ipv4Routes {
  using Route = Route4;
  static constexpr std::string_view kForm = "A.B.C.D/LEN PORT";
  static constexpr uint32_t kMaxLen = fulcrum::kMaxLen;
  // Sizing estimates: a route line is about 20 bytes and at most 25 ("255.255.255.255/32 32766\n").
  static constexpr size_t kTypicalLineBytes = 20;
  static constexpr size_t kMaxLineBytes = 25;

  static bool parse_address(std::string_view text, Route4& r) {
    return fulcrum::parse_address(text, r.prefix);
  }
  static bool host_bits_clear(const Route4& r) { return (r.prefix & ~mask_of(r.len)) == 0; }
  static void append_prefix(std::string& out, const Route4& r) {
    for (uint32_t i = 0; i < kOctets; ++i) {
      if (i > 0) out += '.';
      append_decimal(out, (r.prefix >> (kFirstOctetShift - kOctetBits * i)) & kOctetMask);
    }
    out += '/';
    append_decimal(out, r.len);
  }
  static uint64_t key(const Route4& r) { return route_key(r); }
};

using File = RouteFile<Ipv4Routes>;

// Generator mix (see route_table.hh).
constexpr size_t kCoverPerMille = 15;
constexpr size_t kMoreSpecificPercent = 10;
constexpr uint32_t kDeepPercent = 40;
constexpr uint32_t kForce24Percent = 50;
constexpr size_t kDeepBlockDivisor = 32;
constexpr size_t kMaxDeepBlocks = 16384;
constexpr uint32_t kCoverMinLen = 8;
constexpr uint32_t kCoverMaxLen = 16;
constexpr uint32_t kFirstUnicastOctet = 1;
constexpr uint32_t kLastUnicastOctet = 223;
constexpr uint32_t kLoopbackOctet = 127;
// Lengths /17../24 of the base routes, cumulative percent.
constexpr std::pair<uint32_t, uint32_t> kBaseLenCdf[] = {{17, 1},  {18, 2},  {19, 5},  {20, 10},
                                                         {21, 16}, {22, 28}, {23, 40}, {24, 100}};

uint32_t random_unicast(RouteRng& rng) {
  uint32_t first;
  do {
    first = kFirstUnicastOctet + rng.below(kLastUnicastOctet - kFirstUnicastOctet + 1);
  } while (first == kLoopbackOctet);
  return (first << kFirstOctetShift) | (rng.u32() & kLowOctetsMask);
}

uint32_t base_len(RouteRng& rng) {
  uint32_t x = rng.below(100);
  for (auto [len, cdf] : kBaseLenCdf)
    if (x < cdf) return len;
  return kLen24;
}

// /16 half the time, /15 a quarter, ... down to /8.
uint32_t cover_len(RouteRng& rng) {
  uint32_t len = kCoverMaxLen;
  while (len > kCoverMinLen && (rng.u32() & 1)) --len;
  return len;
}

}  // namespace

Result<std::vector<Route4>> parse_routes4(std::string_view text, const std::string& path,
                                          uint32_t max_port) {
  return File::parse(text, path, max_port);
}

Result<std::vector<Route4>> load_routes4(const std::string& path, uint32_t max_port) {
  return File::load(path, max_port);
}

std::string format_route4(const Route4& r) {
  return File::format(r);
}

Status write_routes4(const std::string& path, std::span<const Route4> routes,
                     std::string_view header) {
  return File::write(path, routes, header);
}

std::vector<Route4> generate_routes4(size_t n, uint64_t seed, uint16_t ports) {
  RouteRng rng(seed);
  if (ports == 0) ports = 1;
  std::vector<Route4> routes;
  routes.reserve(n);
  std::unordered_set<uint64_t> seen;
  seen.reserve(n * 2);
  auto try_add = [&](uint32_t addr, uint32_t len) {
    Route4 r{addr & mask_of(len), static_cast<uint8_t>(len),
             static_cast<uint16_t>(rng.below(ports))};
    if (!seen.insert(route_key(r)).second) return false;
    routes.push_back(r);
    return true;
  };

  const size_t n_more = n * kMoreSpecificPercent / 100;
  const size_t n_cover = n * kCoverPerMille / 1000;
  const size_t n_base = n - n_more - n_cover;
  while (routes.size() < n_cover) try_add(random_unicast(rng), cover_len(rng));
  while (routes.size() < n_cover + n_base) try_add(random_unicast(rng), base_len(rng));

  // More-specifics under random existing routes (n_base >= 1, so there is always a parent).
  const size_t block_budget = std::min(std::max<size_t>(1, n / kDeepBlockDivisor), kMaxDeepBlocks);
  std::vector<uint32_t> deep_blocks;
  std::unordered_set<uint32_t> deep_block_set;
  while (routes.size() < n) {
    Route4 parent = routes[rng.below(static_cast<uint32_t>(routes.size()))];
    bool deep = rng.chance(kDeepPercent);
    if (!deep && parent.len < kLen24) {
      uint32_t len =
          rng.chance(kForce24Percent) ? kLen24 : parent.len + 1 + rng.below(kLen24 - parent.len);
      try_add(parent.prefix | (rng.u32() & ~mask_of(parent.len)), len);
      continue;
    }
    if (!deep) continue;
    uint32_t block;
    if (parent.len <= kLen24 && deep_blocks.size() < block_budget) {
      block = (parent.prefix | (rng.u32() & ~mask_of(parent.len))) >> Dir24_8::kSegmentBits;
      if (deep_block_set.insert(block).second) deep_blocks.push_back(block);
    } else {
      if (deep_blocks.empty()) continue;
      block = deep_blocks[rng.below(static_cast<uint32_t>(deep_blocks.size()))];
    }
    uint32_t len = kLen24 + 1 + rng.below(kMaxLen - kLen24);
    try_add((block << Dir24_8::kSegmentBits) | (rng.u32() & Dir24_8::kSegmentIndexMask), len);
  }
  std::sort(routes.begin(), routes.end(), [](const Route4& a, const Route4& b) {
    return a.prefix != b.prefix ? a.prefix < b.prefix : a.len < b.len;
  });
  return routes;
}

}  // namespace fulcrum
