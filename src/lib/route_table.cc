#include "lib/route_table.hh"

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

constexpr uint32_t kOctets = 4;
constexpr uint32_t kMaxOctet = 255;
constexpr uint32_t kOctetBits = 8;
constexpr uint32_t kOctetMask = 0xFF;
constexpr uint32_t kFirstOctetShift = 24;
constexpr uint32_t kLowOctetsMask = 0xFFFFFF;  // all but the first octet
constexpr uint32_t kMaxLen = 32;
constexpr uint32_t kLen24 = 24;
// Sizing estimates: a route line is about 20 bytes and at most 25 ("255.255.255.255/32 32766\n").
constexpr size_t kTypicalLineBytes = 20;
constexpr size_t kMaxLineBytes = 25;

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

struct LineParse {
  Route4 route{};
  std::string error;  // without the "PATH:LINE: " prefix
};

void parse_line(std::string_view content, uint32_t max_port, LineParse& out) {
  uint32_t addr = 0;
  RouteLine f;
  if (!parse_route_line(
          content, "A.B.C.D/LEN PORT", kMaxLen, max_port,
          [&addr](std::string_view text) { return parse_address(text, addr); }, f, out.error))
    return;
  if ((addr & ~mask_of(f.len)) != 0) {
    out.error = "host bits set in " + std::string(f.prefix);
    return;
  }
  out.route = Route4{addr, static_cast<uint8_t>(f.len), static_cast<uint16_t>(f.port)};
}

// Appends the decimal digits of v.
void append_uint(std::string& out, uint32_t v) {
  char digits[10];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) out += digits[--n];
}

void append_route(std::string& out, const Route4& r) {
  for (uint32_t i = 0; i < kOctets; ++i) {
    if (i > 0) out += '.';
    append_uint(out, (r.prefix >> (kFirstOctetShift - kOctetBits * i)) & kOctetMask);
  }
  out += '/';
  append_uint(out, r.len);
  out += ' ';
  append_uint(out, r.port);
}

// prefix in the high bits, length in the low byte.
constexpr uint32_t kKeyLenBits = 8;
uint64_t route_key(const Route4& r) {
  return (uint64_t{r.prefix} << kKeyLenBits) | r.len;
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
  uint32_t u32() { return static_cast<uint32_t>(next() >> 32); }
  // Uniform in [0, n), n > 0 (Lemire's multiply-shift; the bias is negligible here).
  uint32_t below(uint32_t n) { return static_cast<uint32_t>((uint64_t{u32()} * n) >> 32); }
  bool chance(uint32_t percent) { return below(100) < percent; }

 private:
  uint64_t state_;
};

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

uint32_t random_unicast(Rng& rng) {
  uint32_t first;
  do {
    first = kFirstUnicastOctet + rng.below(kLastUnicastOctet - kFirstUnicastOctet + 1);
  } while (first == kLoopbackOctet);
  return (first << kFirstOctetShift) | (rng.u32() & kLowOctetsMask);
}

uint32_t base_len(Rng& rng) {
  uint32_t x = rng.below(100);
  for (auto [len, cdf] : kBaseLenCdf)
    if (x < cdf) return len;
  return kLen24;
}

// /16 half the time, /15 a quarter, ... down to /8.
uint32_t cover_len(Rng& rng) {
  uint32_t len = kCoverMaxLen;
  while (len > kCoverMinLen && (rng.u32() & 1)) --len;
  return len;
}

}  // namespace

Result<std::vector<Route4>> parse_routes4(std::string_view text, const std::string& path,
                                          uint32_t max_port) {
  return parse_unique_table<Route4>(
      text, path, kTypicalLineBytes,
      [max_port](std::string_view content, Route4& route, std::string* error) {
        LineParse parsed;
        parse_line(content, max_port, parsed);
        if (!parsed.error.empty()) return *error = parsed.error, false;
        route = parsed.route;
        return true;
      },
      route_key,
      [](const Route4& r) {
        const std::string text = format_route4(r);
        return text.substr(0, text.find(' '));
      });
}

Result<std::vector<Route4>> load_routes4(const std::string& path, uint32_t max_port) {
  Result<std::string> text = read_table_file(path, "route file");
  if (!text) return make_error(text.error());
  return parse_routes4(text.value(), path, max_port);
}

std::string format_route4(const Route4& r) {
  std::string out;
  append_route(out, r);
  return out;
}

Status write_routes4(const std::string& path, std::span<const Route4> routes,
                     std::string_view header) {
  std::string out;
  while (!header.empty()) {
    size_t nl = header.find('\n');
    std::string_view line = header.substr(0, nl);
    out += line.empty() ? "#\n" : "# " + std::string(line) + "\n";
    header = nl == std::string_view::npos ? std::string_view{} : header.substr(nl + 1);
  }
  out.reserve(out.size() + routes.size() * kMaxLineBytes);
  for (const Route4& r : routes) {
    append_route(out, r);
    out += '\n';
  }
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return make_error("cannot write route file " + path + ": " + std::strerror(errno));
  if (std::fwrite(out.data(), 1, out.size(), f.get()) != out.size() || std::fflush(f.get()) != 0)
    return make_error("cannot write route file " + path + ": " + std::strerror(errno));
  return {};
}

std::vector<Route4> generate_routes4(size_t n, uint64_t seed, uint16_t ports) {
  Rng rng(seed);
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
