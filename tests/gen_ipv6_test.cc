// The generator's proto=ipv6 mode: key parsing, frame layout, and destinations inside the routes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "elements/ip6/check_ip6_header.hh"
#include "io/gen_port.hh"
#include "io/port.hh"
#include "lib/ip6_table.hh"
#include "lib/route6_table.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr uint16_t kBurst = 64;
constexpr uint32_t kEtherLen = 14;
constexpr uint32_t kIpv6Len = 40;
constexpr uint32_t kDstOffset = kEtherLen + 24;

TEST(GenIpv6, ParsesProtoKey) {
  Result<GenConfig> c = parse_gen_spec("gen:proto=ipv6,size=78");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->proto, GenConfig::Proto::kIpv6);
  EXPECT_EQ(c->size, 78u);
  Result<GenConfig> d = parse_gen_spec("gen:size=64");
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->proto, GenConfig::Proto::kIpv4);
  EXPECT_EQ(parse_gen_spec("gen:proto=ipx").error(),
            "--port gen:proto=ipx: proto must be ipv4 or ipv6, got 'ipx'");
  EXPECT_EQ(parse_gen_spec("gen:proto=ipv6,size=61").error(),
            "--port gen:proto=ipv6,size=61: size must be 62..1514 with proto=ipv6, got '61'");
  EXPECT_TRUE(parse_gen_spec("gen:proto=ipv6,size=62").ok());
  EXPECT_TRUE(parse_gen_spec("gen:proto=ipv4,size=60").ok());
}

// One burst from a generator port; the port owns the packets' pool, so it stays open with them.
struct Received {
  std::unique_ptr<Port> port;
  std::vector<Packet*> pkts;
};

Received receive(const std::string& spec) {
  PortConfig pc;
  Result<std::unique_ptr<Port>> port = open_port(spec, pc);
  EXPECT_TRUE(port.ok()) << port.error();
  if (!port) return {};
  Packet* pkts[kBurst];
  const uint16_t n = port.value()->rx_burst(0, pkts, kBurst);
  EXPECT_EQ(n, kBurst);
  return {std::move(port.value()), {pkts, pkts + n}};
}

TEST(GenIpv6, FramesAreValidIpv6Udp) {
  CheckIP6Header check;
  for (uint32_t size : {62u, 78u, 1500u}) {
    Received rx = receive("gen:proto=ipv6,flows=16,size=" + std::to_string(size));
    for (Packet* p : rx.pkts) {
      EXPECT_EQ(rte_pktmbuf_data_len(p), size);
      const uint8_t* d = rte_pktmbuf_mtod(p, const uint8_t*);
      EXPECT_EQ(d[12], 0x86);
      EXPECT_EQ(d[13], 0xDD);
      EXPECT_EQ(d[14] >> 4, 6);
      EXPECT_EQ((d[18] << 8) | d[19], static_cast<int>(size - kEtherLen - kIpv6Len));
      EXPECT_EQ(d[20], 17) << "next header UDP";
      EXPECT_EQ(d[21], 64) << "hop limit";
      EXPECT_EQ(d[22], 0xFD) << "source in fd00::/8";
      EXPECT_EQ(d[kDstOffset] >> 5, 1) << "uniform destinations in 2000::/3";
      EXPECT_FALSE(check.process(p).is_drop());
      rte_pktmbuf_free(p);
    }
  }
}

TEST(GenIpv6, RouteDestinationsFallInsideTheRoutes) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("fulcrum-gen6-" + std::to_string(getpid()) + ".txt"))
                               .string();
  const std::vector<Route6> routes = generate_routes6(1000, 5, 3);
  ASSERT_TRUE(write_routes6(path, routes).ok());
  Ip6Table table;
  for (const Route6& r : routes) ASSERT_TRUE(table.add(r.prefix.data(), r.len, r.port).ok());
  ASSERT_TRUE(table.build().ok());
  Received rx = receive("gen:proto=ipv6,flows=64,dst=routes,routes=" + path);
  for (Packet* p : rx.pkts) {
    EXPECT_NE(table.lookup(rte_pktmbuf_mtod(p, const uint8_t*) + kDstOffset), Ip6Table::kNoRoute);
    rte_pktmbuf_free(p);
  }
  // An IPv4 route file is an error with proto=ipv6, named by file and line.
  {
    std::ofstream out(path);
    out << "10.0.0.0/8 1\n";
  }
  PortConfig pc;
  Result<std::unique_ptr<Port>> v4 = open_port("gen:proto=ipv6,dst=routes,routes=" + path, pc);
  ASSERT_FALSE(v4.ok());
  EXPECT_NE(v4.error().find(path + ":1: expected 'X:X::/LEN PORT', got '10.0.0.0/8 1'"),
            std::string::npos)
      << v4.error();
  std::remove(path.c_str());
}

}  // namespace
}  // namespace fulcrum
