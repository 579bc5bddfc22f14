#include "lib/route6_table.hh"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace fulcrum {
namespace {

Route6 r6(const char* prefix, uint8_t len, uint16_t port) {
  Route6 r{};
  EXPECT_EQ(inet_pton(AF_INET6, prefix, r.prefix.data()), 1) << prefix;
  r.len = len;
  r.port = port;
  return r;
}

std::string parse_error(const std::string& text) {
  auto r = parse_routes6(text, "r6.txt");
  EXPECT_FALSE(r.ok());
  return r.ok() ? std::string() : r.error();
}

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

TEST(Route6Table, ParsesRoutesCommentsAndBlankLines) {
  const std::string text =
      "# header comment\n"
      "\n"
      "2001:db8::/32 1\n"
      "   \t\n"
      "  2001:db8:1:2::/64\t\t0   # trailing comment\n"
      "::/0 3\r\n"
      "::ffff:10.0.0.0/104 4\n"
      "2001:0DB8:0000:0000:0000:0000:0000:0001/128 5\n"
      "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128 32766";
  auto r = parse_routes6(text, "r6.txt");
  ASSERT_TRUE(r.ok()) << r.error();
  const std::vector<Route6> expect = {
      r6("2001:db8::", 32, 1),
      r6("2001:db8:1:2::", 64, 0),
      r6("::", 0, 3),
      r6("::ffff:10.0.0.0", 104, 4),
      r6("2001:db8::1", 128, 5),
      r6("ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", 128, kMaxRoute6Port),
  };
  EXPECT_EQ(*r, expect);
}

TEST(Route6Table, EmptyFileHasNoRoutes) {
  auto r = parse_routes6("# nothing here\n\n", "r6.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST(Route6Table, MalformedLinesNameTheLine) {
  EXPECT_EQ(parse_error("2001:db8::/32 1\n2001:db8::/32\n"),
            "r6.txt:2: expected 'X:X::/LEN PORT', got '2001:db8::/32'");
  EXPECT_EQ(parse_error("2001:db8:: 1\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8:: 1'");
  EXPECT_EQ(parse_error("2001:db8:::/48 1\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8:::/48 1'");
  EXPECT_EQ(parse_error("2001:db8::g/128 1\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::g/128 1'");
  EXPECT_EQ(parse_error("10.0.0.0/8 1\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '10.0.0.0/8 1'");
  EXPECT_EQ(parse_error("2001:db8::/x 1\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::/x 1'");
  EXPECT_EQ(parse_error("2001:db8::/-1 1\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::/-1 1'");
  EXPECT_EQ(parse_error("  2001:db8::/32 1 2  # c\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '2001:db8::/32 1 2'");
  EXPECT_EQ(parse_error("\n\nhello\n"), "r6.txt:3: expected 'X:X::/LEN PORT', got 'hello'");
  const std::string long_text(100, '1');
  EXPECT_EQ(parse_error(long_text + "/8 1\n"),
            "r6.txt:1: expected 'X:X::/LEN PORT', got '" + long_text + "/8 1'");
}

TEST(Route6Table, RangeErrors) {
  EXPECT_EQ(parse_error("::/0 1\n2001:db8::/129 1\n"),
            "r6.txt:2: prefix length 129 out of range 0..128");
  EXPECT_EQ(parse_error("2001:db8::/99999999999 1\n"),
            "r6.txt:1: prefix length 99999999999 out of range 0..128");
  EXPECT_EQ(parse_error("2001:db8::/32 x\n"), "r6.txt:1: port 'x' is not a number");
  EXPECT_EQ(parse_error("2001:db8::/32 -1\n"), "r6.txt:1: port '-1' is not a number");
  EXPECT_EQ(parse_error("2001:db8::/32 32767\n"), "r6.txt:1: port 32767 out of range 0..32766");
  EXPECT_EQ(parse_error("2001:db8::/32 99999999999\n"),
            "r6.txt:1: port 99999999999 out of range 0..32766");
}

TEST(Route6Table, HostBitsAreAnError) {
  EXPECT_EQ(parse_error("2001:db8::1/32 1\n"), "r6.txt:1: host bits set in 2001:db8::1/32");
  EXPECT_EQ(parse_error("2001:db8::1/127 1\n"), "r6.txt:1: host bits set in 2001:db8::1/127");
  EXPECT_EQ(parse_error("::1/0 1\n"), "r6.txt:1: host bits set in ::1/0");
  EXPECT_EQ(parse_error("2001:db8:8000::/33 1\n2001:db8:8000::/32 1\n"),
            "r6.txt:2: host bits set in 2001:db8:8000::/32");
}

TEST(Route6Table, DuplicatesNameBothLines) {
  EXPECT_EQ(parse_error("2001:db8::/32 1\n2001:db8::/48 1\n# c\n2001:0db8:0::/32 2\n"),
            "r6.txt:4: duplicate route 2001:db8::/32 (first on line 1)");
  // The earliest repeating line is reported, whatever the prefix order.
  EXPECT_EQ(parse_error("3000::/16 1\n2001::/16 1\n2001::/16 2\n3000::/16 2\n"),
            "r6.txt:3: duplicate route 2001::/16 (first on line 2)");
}

TEST(Route6Table, LoadErrorsNameTheFile) {
  auto r = load_routes6("/nonexistent/routes6.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(),
            "cannot open route file /nonexistent/routes6.txt: No such file or directory");
  TempFile f("fulcrum-route6-bad");
  {
    std::ofstream out(f.path());
    out << "2001:db8::/32 1\n2001:db8::/33 1 # fine\n2001:db8::/200 1\n";
  }
  r = load_routes6(f.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), f.path() + ":3: prefix length 200 out of range 0..128");
}

TEST(Route6Table, WriteThenLoadRoundTrips) {
  const std::vector<Route6> routes = generate_routes6(5000, 3, 7);
  TempFile f("fulcrum-route6-rt");
  ASSERT_TRUE(write_routes6(f.path(), routes, "made by a test\n\nsecond line").ok());
  std::ifstream in(f.path());
  std::string first, second, third;
  std::getline(in, first);
  std::getline(in, second);
  std::getline(in, third);
  EXPECT_EQ(first, "# made by a test");
  EXPECT_EQ(second, "#");
  EXPECT_EQ(third, "# second line");
  auto loaded = load_routes6(f.path());
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(*loaded, routes);
  EXPECT_EQ(format_route6(r6("2001:db8::", 32, 5)), "2001:db8::/32 5");
}

TEST(Route6Table, GeneratorIsDeterministicDistinctAndMixed) {
  constexpr size_t kN = 200000;
  const std::vector<Route6> a = generate_routes6(kN, 42, 4);
  const std::vector<Route6> b = generate_routes6(kN, 42, 4);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, generate_routes6(kN, 43, 4));
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

TEST(Route6Table, LoadsLargeFilesFast) {
  const std::vector<Route6> routes = generate_routes6(200000, 5, 2);
  TempFile f("fulcrum-route6-large");
  ASSERT_TRUE(write_routes6(f.path(), routes).ok());
  const auto start = std::chrono::steady_clock::now();
  auto loaded = load_routes6(f.path());
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(loaded->size(), routes.size());
  EXPECT_LT(ms, 2000.0) << "loading 200k IPv6 routes took " << ms << " ms";
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
