// Golden tests for NDNLookup: longest-name-prefix forwarding, default route, drops (not-ndn,
// malformed, no-route, no-such-port), truncated frames and configuration errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "lib/ndn_wire.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;
using Components = std::vector<std::string>;

constexpr int kPorts = 10;
constexpr uint8_t kDst[6] = {0x02, 0, 0, 0, 0, 0x0d};
constexpr uint8_t kSrc[6] = {0x02, 0, 0, 0, 0, 0x05};
constexpr uint16_t kEtherTypeIpv4 = 0x0800;

std::string write_names(const std::string& stem, const std::string& text) {
  const std::string path = testing::temp_path(stem + ".names");
  std::ofstream(path) << text;
  return path;
}

Frame interest(const Components& name) {
  return ndn::interest_frame(name, kDst, kSrc);
}

const char* const kNames =
    "# demo names\n"
    "/ucla 1\n"
    "/ucla/cs 2   # more specific\n"
    "/mit/video%2Fhd 3\n"
    "/far/away 9   # the last of 10 ports\n";

TEST(ElementsNdn, ForwardsByLongestNamePrefix) {
  auto e = testing::make_or_fail("NDNLookup", {write_names("golden", kNames)}, kPorts);
  ASSERT_NE(e, nullptr);
  PacketBatch b;
  const std::vector<Frame> frames = {
      interest({"ucla", "cs", "paper.pdf"}), interest({"ucla", "ee"}),
      interest({"mit", "video/hd", "1"}),    interest({"mit", "video"}),
      interest({"far", "away", "x"}),        testing::ether_frame(kEtherTypeIpv4)};
  const std::vector<Verdict> v = testing::run_batch(*e, b, frames);
  EXPECT_EQ(v[0].port(), 0);
  EXPECT_EQ(out_port(b.at(0)), 2);
  EXPECT_EQ(v[1].port(), 0);
  EXPECT_EQ(out_port(b.at(1)), 1);
  EXPECT_EQ(v[2].port(), 0);
  EXPECT_EQ(out_port(b.at(2)), 3);
  EXPECT_EQ(testing::drop_reason(*e, v[3]), "no-route");
  EXPECT_EQ(v[4].port(), 0);
  EXPECT_EQ(out_port(b.at(4)), 9);
  EXPECT_EQ(testing::drop_reason(*e, v[5]), "not-ndn");
  testing::free_batch(b);
}

TEST(ElementsNdn, DefaultRoute) {
  auto e = testing::make_or_fail("NDNLookup", {write_names("default", "/ 3\n/a 1\n")}, kPorts);
  ASSERT_NE(e, nullptr);
  PacketBatch b;
  const std::vector<Verdict> v =
      testing::run_batch(*e, b, {interest({"a", "b"}), interest({"b"}), interest({})});
  for (const Verdict& x : v) EXPECT_EQ(x.port(), 0);
  EXPECT_EQ(out_port(b.at(0)), 1);
  EXPECT_EQ(out_port(b.at(1)), 3);
  EXPECT_EQ(out_port(b.at(2)), 3);
  testing::free_batch(b);
}

TEST(ElementsNdn, TruncatedAndMalformedFrames) {
  auto e = testing::make_or_fail("NDNLookup", {write_names("trunc", kNames)}, kPorts);
  ASSERT_NE(e, nullptr);
  const Frame f = interest({"ucla", "cs"});
  PacketBatch b;
  const std::vector<Verdict> v =
      testing::run_batch(*e, b, testing::prefixes(f, static_cast<uint32_t>(f.size())));
  for (uint32_t n = 0; n <= f.size(); ++n) {
    if (n < ndn::kEtherHeaderLen) {
      EXPECT_EQ(testing::drop_reason(*e, v[n]), "not-ndn") << n;
    } else if (n < f.size()) {
      EXPECT_EQ(testing::drop_reason(*e, v[n]), "malformed") << n;
    } else {
      EXPECT_EQ(v[n].port(), 0);
    }
  }
  testing::free_batch(b);
  Frame bad = f;
  bad[ndn::kEtherHeaderLen] = ndn::kTypeName;  // not an Interest or Data
  Frame overrun = f;
  constexpr size_t kLastLengthFromEnd = 3;  // ... 0x08 0x02 'c' 's'
  constexpr uint8_t kTooLong = 5;
  overrun[overrun.size() - kLastLengthFromEnd] = kTooLong;  // beyond the end of the name
  const std::vector<Verdict> w = testing::run_batch(*e, b, {bad, overrun});
  EXPECT_EQ(testing::drop_reason(*e, w[0]), "malformed");
  EXPECT_EQ(testing::drop_reason(*e, w[1]), "malformed");
  testing::free_batch(b);
}

TEST(ElementsNdn, ConfigurationErrors) {
  EXPECT_NE(testing::config_error("NDNLookup", {}), "(no error)");
  EXPECT_NE(testing::config_error("NDNLookup", {"/nonexistent/names.txt"}).find("cannot open"),
            std::string::npos);
  EXPECT_NE(testing::config_error("NDNLookup", {write_names("bad1", "/a\n")}).find(":1:"),
            std::string::npos);
  EXPECT_NE(testing::config_error("NDNLookup", {write_names("bad2", "/a 1\nb 2\n")}).find(":2:"),
            std::string::npos);
  EXPECT_NE(testing::config_error("NDNLookup", {write_names("bad3", "/a 1 2\n")}), "(no error)");
  const std::string names = write_names("ports", kNames);
  EXPECT_EQ(testing::config_error("NDNLookup", {names}),
            "test.click:1:1: test :: NDNLookup: " + names + ":5: port 9 out of range 0..3");
}

}  // namespace
}  // namespace fulcrum
