#include "lib/route_table.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fulcrum {
namespace {

uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

std::string parse_error(const std::string& text) {
  auto r = parse_routes4(text, "r.txt");
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

TEST(RouteTable, ParsesRoutesCommentsAndBlankLines) {
  const std::string text =
      "# header comment\n"
      "\n"
      "10.0.0.0/8 1\n"
      "   \t\n"
      "  192.168.1.0/24\t\t0   # trailing comment\n"
      "0.0.0.0/0 3\r\n"
      "255.255.255.255/32 32766";
  auto r = parse_routes4(text, "r.txt");
  ASSERT_TRUE(r.ok()) << r.error();
  const std::vector<Route4> expect = {{ip(10, 0, 0, 0), 8, 1},
                                      {ip(192, 168, 1, 0), 24, 0},
                                      {0, 0, 3},
                                      {0xFFFFFFFF, 32, kMaxRoutePort}};
  EXPECT_EQ(*r, expect);
}

TEST(RouteTable, EmptyFileHasNoRoutes) {
  auto r = parse_routes4("# nothing here\n\n", "r.txt");
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->empty());
}

TEST(RouteTable, MalformedLinesNameTheLine) {
  EXPECT_EQ(parse_error("10.0.0.0/8 1\n10.0.0.0/8\n"),
            "r.txt:2: expected 'A.B.C.D/LEN PORT', got '10.0.0.0/8'");
  EXPECT_EQ(parse_error("10.0.0.0 1\n"), "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.0 1'");
  EXPECT_EQ(parse_error("10.0.0/8 1\n"), "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0/8 1'");
  EXPECT_EQ(parse_error("10.0.0.256/32 1\n"),
            "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.256/32 1'");
  EXPECT_EQ(parse_error("10.0.0.0/x 1\n"),
            "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.0/x 1'");
  EXPECT_EQ(parse_error("  10.0.0.0/8 1 2  # c\n"),
            "r.txt:1: expected 'A.B.C.D/LEN PORT', got '10.0.0.0/8 1 2'");
  EXPECT_EQ(parse_error("\n\nhello\n"), "r.txt:3: expected 'A.B.C.D/LEN PORT', got 'hello'");
}

TEST(RouteTable, PrefixLengthOutOfRange) {
  EXPECT_EQ(parse_error("10.0.0.0/33 1\n"), "r.txt:1: prefix length 33 out of range 0..32");
}

TEST(RouteTable, PortNotANumber) {
  EXPECT_EQ(parse_error("# c\n10.0.0.0/8 x\n"), "r.txt:2: port 'x' is not a number");
  EXPECT_EQ(parse_error("10.0.0.0/8 -1\n"), "r.txt:1: port '-1' is not a number");
}

TEST(RouteTable, PortOutOfRange) {
  EXPECT_EQ(parse_error("10.0.0.0/8 32767\n"), "r.txt:1: port 32767 out of range 0..32766");
}

TEST(RouteTable, HostBitsSet) {
  EXPECT_EQ(parse_error("10.0.0.1/8 1\n"), "r.txt:1: host bits set in 10.0.0.1/8");
  EXPECT_EQ(parse_error("0.0.0.1/0 1\n"), "r.txt:1: host bits set in 0.0.0.1/0");
}

TEST(RouteTable, DuplicateRoute) {
  EXPECT_EQ(parse_error("10.0.0.0/8 1\n10.0.0.0/16 1\n\n10.0.0.0/8 2\n10.0.0.0/16 3\n"),
            "r.txt:4: duplicate route 10.0.0.0/8 (first on line 1)");
}

TEST(RouteTable, MissingFile) {
  auto r = load_routes4("/nonexistent/routes.txt");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), "cannot open route file /nonexistent/routes.txt: No such file or directory");
}

TEST(RouteTable, ErrorsFromFileNameThePath) {
  TempFile f("fulcrum-routes-bad");
  {
    std::ofstream out(f.path());
    out << "10.0.0.0/8 1\n10.0.0.1/8 1\n";
  }
  auto r = load_routes4(f.path());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error(), f.path() + ":2: host bits set in 10.0.0.1/8");
}

TEST(RouteTable, FormatRoute) {
  EXPECT_EQ(format_route4({ip(10, 1, 2, 0), 24, 7}), "10.1.2.0/24 7");
  EXPECT_EQ(format_route4({0, 0, 0}), "0.0.0.0/0 0");
  EXPECT_EQ(format_route4({0xFFFFFFFF, 32, 32766}), "255.255.255.255/32 32766");
}

TEST(RouteTable, WriteThenLoadRoundTrips) {
  TempFile f("fulcrum-routes-small");
  const std::vector<Route4> routes = {{ip(10, 0, 0, 0), 8, 1}, {ip(10, 1, 2, 128), 25, 0}};
  ASSERT_TRUE(write_routes4(f.path(), routes, "two routes\n\nfor a test").ok());
  std::ifstream in(f.path());
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "# two routes\n#\n# for a test\n10.0.0.0/8 1\n10.1.2.128/25 0\n");
  auto r = load_routes4(f.path());
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(*r, routes);
}

TEST(RouteTable, GeneratorIsDeterministicAndRealistic) {
  constexpr size_t kRoutes = 100000;
  constexpr uint16_t kPorts = 3;
  const std::vector<Route4> a = generate_routes4(kRoutes, 11, kPorts);
  EXPECT_EQ(a, generate_routes4(kRoutes, 11, kPorts));
  EXPECT_NE(a, generate_routes4(kRoutes, 12, kPorts));
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

TEST(RouteTable, LoadsHalfAMillionRoutes) {
  constexpr size_t kRoutes = 500000;
  TempFile f("fulcrum-routes-500k");
  const std::vector<Route4> routes = generate_routes4(kRoutes, 3, 64);
  ASSERT_TRUE(write_routes4(f.path(), routes, "500k generated routes").ok());
  auto start = std::chrono::steady_clock::now();
  auto loaded = load_routes4(f.path());
  auto ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  ASSERT_TRUE(loaded.ok()) << loaded.error();
  EXPECT_EQ(*loaded, routes);
  std::printf("[ info     ] loaded %zu routes in %.1f ms\n", loaded->size(), ms);
}

}  // namespace
}  // namespace fulcrum
