// Route files (lib/route_file.hh) for both families: what they share runs once per family as a
// typed suite (RouteFiles/Ipv4, RouteFiles/Ipv6) over the cases of each family; the generators'
// mixes and the IPv6 demo table are family-specific tests.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "lib/route6_table.hh"
#include "lib/route_table.hh"

namespace fulcrum {
namespace {

// A file under the temp directory, removed at the end of the test.
class TempFile {
 public:
  explicit TempFile(const std::string& stem)
      : path_((std::filesystem::temp_directory_path() /
               (stem + "-" + std::to_string(getpid()) + ".txt"))
                  .string()) {}
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A route file's text and the error parsing it gives.
struct ErrorCase {
  std::string text;
  std::string error;
};

// A route file whose load error names its path, and that error after the path.
struct FileCase {
  const char* text;
  const char* error;
};

uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

Route6 r6(const char* prefix, uint8_t len, uint16_t port) {
  Route6 r{};
  EXPECT_EQ(inet_pton(AF_INET6, prefix, r.prefix.data()), 1) << prefix;
  r.len = len;
  r.port = port;
  return r;
}

// Each family: its public functions and its cases.
struct Ipv4 {
  using Route = Route4;
  static constexpr const char* kPath = "r.txt";  // names the text in parse errors
  static constexpr const char* kStem = "fulcrum-routes";

  static auto parse(const std::string& text) { return parse_routes4(text, kPath); }
  static auto load(const std::string& path) { return load_routes4(path); }
  static std::string format(const Route& r) { return format_route4(r); }
  static Status write(const std::string& path, const std::vector<Route>& routes,
                      std::string_view header = {}) {
    return write_routes4(path, routes, header);
  }
  static std::vector<Route> generate(size_t n, uint64_t seed, uint16_t ports) {
    return generate_routes4(n, seed, ports);
  }

  static std::string well_formed_text() {
    return "# header comment\n"
           "\n"
           "10.0.0.0/8 1\n"
           "   \t\n"
           "  192.168.1.0/24\t\t0   # trailing comment\n"
           "0.0.0.0/0 3\r\n"
           "255.255.255.255/32 32766";
  }
  static std::vector<Route> well_formed_routes() {
    return {{ip(10, 0, 0, 0), 8, 1},
            {ip(192, 168, 1, 0), 24, 0},
            {0, 0, 3},
            {0xFFFFFFFF, 32, kMaxRoutePort}};
  }
  static std::vector<ErrorCase> malformed() {
    return {
        {"10.0.0.0/8 1\n10.0.0.0/8\n", "r.txt:2: expected 'A.B.C.D/LEN PORT', got '10.0.0.0/8'"},
        {"10.0.0.0 1\n", "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.0 1'"},
        {"10.0.0/8 1\n", "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0/8 1'"},
        {"10.0.0.256/32 1\n", "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.256/32 1'"},
        {"10.0.0.0/x 1\n", "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.0/x 1'"},
        {"  10.0.0.0/8 1 2  # c\n", "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.0/8 1 2'"},
        {"\n\nhello\n", "r.txt:3: expected 'A.B.C.D/LEN PORT', got 'hello'"},
    };
  }
  static std::vector<ErrorCase> range_errors() {
    return {
        {"10.0.0.0/33 1\n", "r.txt:1: prefix length 33 out of range 0..32"},
        {"# c\n10.0.0.0/8 x\n", "r.txt:2: port 'x' is not a number"},
        {"10.0.0.0/8 -1\n", "r.txt:1: port '-1' is not a number"},
        {"10.0.0.0/8 32767\n", "r.txt:1: port 32767 out of range 0..32766"},
    };
  }
  static std::vector<ErrorCase> host_bits() {
    return {
        {"10.0.0.1/8 1\n", "r.txt:1: host bits set in 10.0.0.1/8"},
        {"0.0.0.1/0 1\n", "r.txt:1: host bits set in 0.0.0.1/0"},
    };
  }
  static std::vector<ErrorCase> duplicates() {
    return {{"10.0.0.0/8 1\n10.0.0.0/16 1\n\n10.0.0.0/8 2\n10.0.0.0/16 3\n",
             "r.txt:4: duplicate route 10.0.0.0/8 (first on line 1)"}};
  }
  static std::vector<std::pair<Route, std::string>> formatted() {
    return {{{ip(10, 1, 2, 0), 24, 7}, "10.1.2.0/24 7"},
            {{0, 0, 0}, "0.0.0.0/0 0"},
            {{0xFFFFFFFF, 32, 32766}, "255.255.255.255/32 32766"}};
  }
  static constexpr const char* kMissingFile = "/nonexistent/routes.txt";
  static constexpr FileCase kBadFile{"10.0.0.0/8 1\n10.0.0.1/8 1\n",
                                     ":2: host bits set in 10.0.0.1/8"};

  // The generator's determinism, and the large table loaded back.
  static constexpr size_t kGeneratedRoutes = 100000;
  static constexpr uint64_t kGeneratorSeed = 11;
  static constexpr uint16_t kGeneratedPorts = 3;
  static constexpr size_t kLargeRoutes = 500000;
  static constexpr uint64_t kLargeSeed = 3;
  static constexpr uint16_t kLargePorts = 64;
  static constexpr const char* kLargeHeader = "500k generated routes";
};

struct Ipv6 {
  using Route = Route6;
  static constexpr const char* kPath = "r6.txt";
  static constexpr const char* kStem = "fulcrum-route6";

  static auto parse(const std::string& text) { return parse_routes6(text, kPath); }
  static auto load(const std::string& path) { return load_routes6(path); }
  static std::string format(const Route& r) { return format_route6(r); }
  static Status write(const std::string& path, const std::vector<Route>& routes,
                      std::string_view header = {}) {
    return write_routes6(path, routes, header);
  }
  static std::vector<Route> generate(size_t n, uint64_t seed, uint16_t ports) {
    return generate_routes6(n, seed, ports);
  }

  static std::string well_formed_text() {
    return "# header comment\n"
           "\n"
           "2001:db8::/32 1\n"
           "   \t\n"
           "  2001:db8:1:2::/64\t\t0   # trailing comment\n"
           "::/0 3\r\n"
           "::ffff:10.0.0.0/104 4\n"
           "2001:0DB8:0000:0000:0000:0000:0000:0001/128 5\n"
           "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128 32766";
  }
  static std::vector<Route> well_formed_routes() {
    return {
        r6("2001:db8::", 32, 1),
        r6("2001:db8:1:2::", 64, 0),
        r6("::", 0, 3),
        r6("::ffff:10.0.0.0", 104, 4),
        r6("2001:db8::1", 128, 5),
        r6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128, kMaxRoute6Port),
    };
  }
  static std::vector<ErrorCase> malformed() {
    const std::string long_text(100, '1');
    return {
        {"2001:db8::/32 1\n2001:db8::/32\n",
         "r6.txt:2: expected 'X:X::/LEN PORT', got '2001:db8::/32'"},
        {"2001:db8:: 1\n", "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8:: 1'"},
        {"2001:db8:::/48 1\n", "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8:::/48 1'"},
        {"2001:db8::g/128 1\n", "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::g/128 1'"},
        {"10.0.0.0/8 1\n", "r6.txt:1: expected 'X:X::/LEN PORT', got '10.0.0.0/8 1'"},
        {"2001:db8::/x 1\n", "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::/x 1'"},
        {"2001:db8::/-1 1\n", "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::/-1 1'"},
        {"  2001:db8::/32 1 2  # c\n",
         "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::/32 1 2'"},
        {"\n\nhello\n", "r6.txt:3: expected 'X:X::/LEN PORT', got 'hello'"},
        // A long line is quoted cut at 80 bytes, with its length.
        {long_text + "/8 1\n", "r6.txt:1: expected 'X:X::/LEN PORT', got '" +
                                   long_text.substr(0, 80) + "'... (104 bytes)"},
    };
  }
  static std::vector<ErrorCase> range_errors() {
    return {
        {"::/0 1\n2001:db8::/129 1\n", "r6.txt:2: prefix length 129 out of range 0..128"},
        {"2001:db8::/99999999999 1\n", "r6.txt:1: prefix length 99999999999 out of range 0..128"},
        {"2001:db8::/32 x\n", "r6.txt:1: port 'x' is not a number"},
        {"2001:db8::/32 -1\n", "r6.txt:1: port '-1' is not a number"},
        {"2001:db8::/32 32767\n", "r6.txt:1: port 32767 out of range 0..32766"},
        {"2001:db8::/32 99999999999\n", "r6.txt:1: port 99999999999 out of range 0..32766"},
    };
  }
  static std::vector<ErrorCase> host_bits() {
    return {
        {"2001:db8::1/32 1\n", "r6.txt:1: host bits set in 2001:db8::1/32"},
        {"2001:db8::1/127 1\n", "r6.txt:1: host bits set in 2001:db8::1/127"},
        {"::1/0 1\n", "r6.txt:1: host bits set in ::1/0"},
        {"2001:db8:8000::/33 1\n2001:db8:8000::/32 1\n",
         "r6.txt:2: host bits set in 2001:db8:8000::/32"},
    };
  }
  static std::vector<ErrorCase> duplicates() {
    return {
        {"2001:db8::/32 1\n2001:db8::/48 1\n# c\n2001:0db8:0::/32 2\n",
         "r6.txt:4: duplicate route 2001:db8::/32 (first on line 1)"},
        // The earliest repeating line is reported, whatever the prefix order.
        {"3000::/16 1\n2001::/16 1\n2001::/16 2\n3000::/16 2\n",
         "r6.txt:3: duplicate route 2001::/16 (first on line 2)"},
    };
  }
  static std::vector<std::pair<Route, std::string>> formatted() {
    return {{r6("2001:db8::", 32, 5), "2001:db8::/32 5"}};
  }
  static constexpr const char* kMissingFile = "/nonexistent/routes6.txt";
  static constexpr FileCase kBadFile{"2001:db8::/32 1\n2001:db8::/33 1 # fine\n2001:db8::/200 1\n",
                                     ":3: prefix length 200 out of range 0..128"};

  static constexpr size_t kGeneratedRoutes = 200000;
  static constexpr uint64_t kGeneratorSeed = 42;
  static constexpr uint16_t kGeneratedPorts = 4;
  static constexpr size_t kLargeRoutes = 200000;
  static constexpr uint64_t kLargeSeed = 5;
  static constexpr uint16_t kLargePorts = 2;
  static constexpr const char* kLargeHeader = "";
};

struct FamilyName {
  template <class T>
  static std::string GetName(int) {
    return std::is_same_v<T, Ipv4> ? "Ipv4" : "Ipv6";
  }
};

template <class Family>
class RouteFiles : public ::testing::Test {
 protected:
  static std::string parse_error(const std::string& text) {
    auto r = Family::parse(text);
    EXPECT_FALSE(r.ok());
    return r.ok() ? std::string() : r.error();
  }
  static void expect_errors(const std::vector<ErrorCase>& cases) {
    for (const ErrorCase& c : cases) EXPECT_EQ(parse_error(c.text), c.error);
  }
};

using Families = ::testing::Types<Ipv4, Ipv6>;
TYPED_TEST_SUITE(RouteFiles, Families, FamilyName);

TYPED_TEST(RouteFiles, ParsesRoutesCommentsAndBlankLines) {
  auto r = TypeParam::parse(TypeParam::well_formed_text());
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, TypeParam::well_formed_routes());
}

TYPED_TEST(RouteFiles, EmptyFileHasNoRoutes) {
  auto r = TypeParam::parse("# nothing here\n\n");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TYPED_TEST(RouteFiles, MalformedLinesNameTheLine) {
  this->expect_errors(TypeParam::malformed());
}

TYPED_TEST(RouteFiles, PrefixLengthAndPortOutOfRange) {
  this->expect_errors(TypeParam::range_errors());
}

TYPED_TEST(RouteFiles, HostBitsAreAnError) {
  this->expect_errors(TypeParam::host_bits());
}

TYPED_TEST(RouteFiles, DuplicatesNameBothLines) {
  this->expect_errors(TypeParam::duplicates());
}

TYPED_TEST(RouteFiles, LoadErrorsNameTheFile) {
  auto r = TypeParam::load(TypeParam::kMissingFile);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), std::string("cannot open route file ") + TypeParam::kMissingFile +
                           ": No such file or directory");
  TempFile f(std::string(TypeParam::kStem) + "-bad");
  {
    std::ofstream out(f.path());
    out << TypeParam::kBadFile.text;
  }
  r = TypeParam::load(f.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), f.path() + TypeParam::kBadFile.error);
}

TYPED_TEST(RouteFiles, FormatRoute) {
  for (const auto& [route, text] : TypeParam::formatted())
    EXPECT_EQ(TypeParam::format(route), text);
}

TYPED_TEST(RouteFiles, WriteThenLoadRoundTrips) {
  const auto routes = TypeParam::generate(5000, 3, 7);
  TempFile f(std::string(TypeParam::kStem) + "-rt");
  ASSERT_TRUE(TypeParam::write(f.path(), routes, "made by a test\n\nsecond line").ok());
  std::ifstream in(f.path());
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(first, "# made by a test");
  EXPECT_EQ(second, "#");
  EXPECT_EQ(third, "# second line");
  auto loaded = TypeParam::load(f.path());
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(*loaded, routes);
}

TYPED_TEST(RouteFiles, GeneratorIsDeterministic) {
  constexpr size_t kN = TypeParam::kGeneratedRoutes;
  constexpr uint64_t kSeed = TypeParam::kGeneratorSeed;
  constexpr uint16_t kPorts = TypeParam::kGeneratedPorts;
  const auto a = TypeParam::generate(kN, kSeed, kPorts);
  EXPECT_EQ(a, TypeParam::generate(kN, kSeed, kPorts));
  EXPECT_NE(a, TypeParam::generate(kN, kSeed + 1, kPorts));
  EXPECT_EQ(a.size(), kN);
}

TYPED_TEST(RouteFiles, LoadsLargeFiles) {
  const auto routes =
      TypeParam::generate(TypeParam::kLargeRoutes, TypeParam::kLargeSeed, TypeParam::kLargePorts);
  TempFile f(std::string(TypeParam::kStem) + "-large");
  ASSERT_TRUE(TypeParam::write(f.path(), routes, TypeParam::kLargeHeader).ok());
  const auto start = std::chrono::steady_clock::now();
  auto loaded = TypeParam::load(f.path());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(*loaded, routes);
  // Reported, not asserted: tests never assert on wall-clock time.
  std::printf("[ info     ] loaded %zu routes in %.1f ms\n", loaded->size(), ms);
}

// ---- IPv4 only ---------------------------------------------------------------------------------

TEST(RouteTable, WritesOneRouteALineAfterTheHeader) {
  TempFile f("fulcrum-routes-small");
  const std::vector<Route4> routes = {{ip(10, 0, 0, 0), 8, 1}, {ip(10, 1, 2, 128), 25, 0}};
  ASSERT_TRUE(write_routes4(f.path(), routes, "two routes\n\nfor a test").ok());
  EXPECT_EQ(read_all(f.path()), "# two routes\n#\n# for a test\n10.0.0.0/8 1\n10.1.2.128/25 0\n");
  auto r = load_routes4(f.path());
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, routes);
}

TEST(RouteTable, GeneratorIsRealistic) {
  constexpr size_t kRoutes = Ipv4::kGeneratedRoutes;
  constexpr uint16_t kPorts = Ipv4::kGeneratedPorts;
  const std::vector<Route4> a = generate_routes4(kRoutes, Ipv4::kGeneratorSeed, kPorts);
  ASSERT_EQ(a.size(), kRoutes);

  std::set<std::pair<uint32_t, uint8_t>> distinct;
  size_t by_len[33] = {};
  std::set<uint32_t> deep_blocks;
  for (const Route4& r : a) {
    ASSERT_LE(r.len, 32);
    ASSERT_LT(r.port, kPorts);
    uint32_t host = r.len == 0 ? ~uint32_t{0} : r.len == 32 ? 0 : ~uint32_t{0} >> r.len;
    ASSERT_EQ(r.prefix & host, 0u) << format_route4(r);
    distinct.emplace(r.prefix, r.len);
    ++by_len[r.len];
    if (r.len > 24) deep_blocks.insert(r.prefix >> 8);
  }
  EXPECT_EQ(distinct.size(), kRoutes);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end(), [](const Route4& x, const Route4& y) {
    return x.prefix != y.prefix ? x.prefix < y.prefix : x.len < y.len;
  }));
  size_t covering = 0, mid = 0, deep = 0;
  for (int l = 0; l <= 32; ++l) (l <= 16 ? covering : l <= 24 ? mid : deep) += by_len[l];
  EXPECT_GT(by_len[24], kRoutes / 2);
  EXPECT_GT(covering, kRoutes / 100);
  EXPECT_GT(by_len[8], 0u);
  EXPECT_GT(deep, kRoutes / 40);
  EXPECT_LT(deep, kRoutes / 10);
  EXPECT_LE(deep_blocks.size(), kRoutes / 32);

  // About a tenth of the routes lie strictly inside another route.
  size_t nested = 0;
  std::set<std::pair<uint32_t, uint8_t>> all(distinct);
  for (const Route4& r : a) {
    for (int l = r.len - 1; l >= 0; --l) {
      uint32_t mask = l == 0 ? 0 : ~uint32_t{0} << (32 - l);
      if (all.count({r.prefix & mask, static_cast<uint8_t>(l)})) {
        ++nested;
        break;
      }
    }
  }
  EXPECT_GT(nested, kRoutes / 12);
}

// ---- IPv6 only ---------------------------------------------------------------------------------

TEST(Route6Table, GeneratorIsDistinctAndMixed) {
  constexpr size_t kN = Ipv6::kGeneratedRoutes;
  const std::vector<Route6> a = generate_routes6(kN, Ipv6::kGeneratorSeed, Ipv6::kGeneratedPorts);
  ASSERT_EQ(a.size(), kN);
  std::set<std::pair<std::array<uint8_t, 16>, uint8_t>> keys;
  std::map<int, size_t> by_class;
  std::set<uint16_t> ports;
  for (const Route6& r : a) {
    keys.insert({r.prefix, r.len});
    const Addr6 p = Addr6::from_bytes(r.prefix.data());
    EXPECT_EQ(p.masked(r.len), p);
    EXPECT_GE(r.len, 16);
    by_class[r.len < 48 ? 0 : r.len <= 64 ? 1 : 2]++;
    ports.insert(r.port);
  }
  EXPECT_EQ(keys.size(), kN);
  EXPECT_EQ(ports, (std::set<uint16_t>{0, 1, 2, 3}));
  EXPECT_GT(by_class[1], kN * 8 / 10);
  EXPECT_GT(by_class[0], kN / 20);
  EXPECT_GT(by_class[2], kN / 50);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end(), [](const Route6& x, const Route6& y) {
    const Addr6 px = Addr6::from_bytes(x.prefix.data()), py = Addr6::from_bytes(y.prefix.data());
    return px != py ? px < py : x.len < y.len;
  }));
  // Shorter routes cover generated routes; longer ones are nested under a /48../64.
  std::set<std::pair<std::array<uint8_t, 16>, uint8_t>> base;
  for (const Route6& r : a)
    if (r.len >= 48 && r.len <= 64) base.insert({r.prefix, r.len});
  size_t nested = 0;
  for (const Route6& r : a) {
    if (r.len <= 64) continue;
    const Addr6 p = Addr6::from_bytes(r.prefix.data());
    for (uint8_t len = 48; len <= 64; ++len) {
      std::array<uint8_t, 16> up{};
      p.masked(len).to_bytes(up.data());
      if (base.count({up, len})) {
        ++nested;
        break;
      }
    }
  }
  EXPECT_EQ(nested, static_cast<size_t>(by_class[2]));
  EXPECT_TRUE(generate_routes6(0, 1).empty());
  EXPECT_EQ(generate_routes6(1, 1).size(), 1u);
}

TEST(Route6Table, DemoTableIsTheDocumentedGeneratorOutput) {
  const char* src = std::getenv("FULCRUM_SOURCE_DIR");
  const std::string path = std::string(src ? src : ".") + "/configs/routes6-demo.txt";
  auto loaded = load_routes6(path);
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(*loaded, generate_routes6(16384, 1, 2));
  std::ifstream in(path);
  std::string first;
  std::getline(in, first);
  EXPECT_EQ(first.rfind("# ", 0), 0u);
}

}  // namespace
}  // namespace fulcrum
