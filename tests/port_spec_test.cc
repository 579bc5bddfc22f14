#include <gtest/gtest.h>

#include <cstring>

#include "io/gen_port.hh"
#include "io/port.hh"

namespace fulcrum {
namespace {

TEST(PortSpec, TellsPciAddressesFromVirtualDevicesAndTheGenerator) {
  EXPECT_TRUE(eal_device_for("0000:01:00.0").is_pci);
  EXPECT_TRUE(eal_device_for("01:00.1").is_pci);
  EXPECT_TRUE(eal_device_for("0000:af:00.7,rxq_cqe_comp_en=0").is_pci);
  EXPECT_FALSE(eal_device_for("0000:01:00.8").is_pci);
  EXPECT_TRUE(eal_device_for("net_pcap0,rx_pcap=a.pcap").is_vdev);
  EXPECT_TRUE(eal_device_for("net_null0").is_vdev);
  EXPECT_FALSE(eal_device_for("gen:size=64").is_vdev);
  EXPECT_FALSE(eal_device_for("gen:size=64").is_pci);
}

TEST(PortSpec, PacketPoolsMayLeaveDpdkMemoryOnlyWhenEveryPortCopiesFrames) {
  EXPECT_TRUE(ports_copy_frames({"gen:size=64", "replay:file=x.pcap", "net_null0,no-rx=1",
                                 "net_pcap1,rx_pcap=a.pcap", "net_ring2", "net_af_packet3,iface=v",
                                 "net_tap4"}));
  EXPECT_TRUE(ports_copy_frames({}));
  EXPECT_FALSE(ports_copy_frames({"net_null0", "0000:01:00.0"})) << "a NIC DMAs";
  EXPECT_FALSE(ports_copy_frames({"gen", "net_virtio_user0,path=/tmp/vhost.sock"}));
  EXPECT_FALSE(ports_copy_frames({"net_af_xdp0,iface=eth0"}));
  EXPECT_FALSE(ports_copy_frames({"net_nullx"})) << "a driver name, then its instance number";
}

TEST(PortSpec, ParsesGeneratorKeys) {
  Result<GenConfig> c = parse_gen_spec("gen:size=128,flows=7,dst=zipf,zipf=1.2,rate=1000,seed=3");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_EQ(c->size, 128u);
  EXPECT_EQ(c->flows, 7u);
  EXPECT_EQ(c->dst, GenConfig::Dst::kZipf);
  EXPECT_DOUBLE_EQ(c->zipf, 1.2);
  EXPECT_DOUBLE_EQ(c->rate, 1000);
  EXPECT_EQ(c->seed, 3u);
  Result<GenConfig> step = parse_gen_spec("gen:rate=1000,step_after=2.5,step_rate=50");
  ASSERT_TRUE(step.ok()) << step.error();
  EXPECT_DOUBLE_EQ(step->step_after, 2.5);
  EXPECT_DOUBLE_EQ(step->step_rate, 50);
  EXPECT_NE(parse_gen_spec("gen:step_after=-1").error().find("bad value for step_after"),
            std::string::npos);
  // A size step keeps the rate unless step_rate is given.
  Result<GenConfig> size = parse_gen_spec("gen:size=64,rate=1000,step_after=1,step_size=1500");
  ASSERT_TRUE(size.ok()) << size.error();
  EXPECT_EQ(size->step_size, 1500u);
  EXPECT_EQ(size->step_rate, GenConfig::kSameRate);
  EXPECT_NE(parse_gen_spec("gen:step_size=1500").error().find("need step_after"),
            std::string::npos);
  EXPECT_NE(parse_gen_spec("gen:step_rate=10").error().find("need step_after"), std::string::npos);
  EXPECT_NE(parse_gen_spec("gen:step_after=1,step_size=59").error().find("step_size must be"),
            std::string::npos);
  EXPECT_NE(parse_gen_spec("gen:proto=ipv6,size=80,step_after=1,step_size=60")
                .error()
                .find("with proto=ipv6"),
            std::string::npos);
}

TEST(PortSpec, RejectsBadGeneratorKeysWithTheKeyNamed) {
  EXPECT_NE(parse_gen_spec("gen:sizee=64").error().find("unknown generator key 'sizee'"),
            std::string::npos);
  EXPECT_NE(parse_gen_spec("gen:size=20").error().find("size must be 60..1514"), std::string::npos);
  EXPECT_NE(parse_gen_spec("gen:dst=routes").error().find("dst=routes needs routes=FILE"),
            std::string::npos);
  EXPECT_NE(parse_gen_spec("gen:flows=0").error().find("bad value for flows"), std::string::npos);
  EXPECT_NE(
      parse_gen_spec("gen:dst=everywhere").error().find("dst must be uniform, routes or zipf"),
      std::string::npos);
}

TEST(GenPort, ProducesValidFramesOfTheConfiguredSize) {
  PortConfig pc;
  Result<std::unique_ptr<Port>> port = open_port("gen:size=100,flows=16", pc);
  ASSERT_TRUE(port.ok()) << port.error();
  Packet* pkts[32];
  const uint16_t n = port.value()->rx_burst(0, pkts, 32);
  ASSERT_EQ(n, 32);
  for (uint16_t i = 0; i < n; ++i) {
    EXPECT_EQ(rte_pktmbuf_data_len(pkts[i]), 100);
    const uint8_t* d = rte_pktmbuf_mtod(pkts[i], const uint8_t*);
    EXPECT_EQ(d[12], 0x08);
    EXPECT_EQ(d[13], 0x00);
    EXPECT_EQ(d[14], 0x45);
    EXPECT_EQ((d[16] << 8) | d[17], 86) << "IPv4 total length = frame - 14";
  }
  EXPECT_EQ(port.value()->tx_burst(0, pkts, n), n);
}

// Like a NIC's RX, the generator writes every byte of a frame: a payload a pipeline wrote into
// (an IPsec gateway encrypting in place, say) does not come back in later frames.
TEST(GenPort, WritesTheWholeFrameNotOnlyItsHeaders) {
  constexpr uint32_t kSize = 512;
  constexpr uint16_t kBurst = 32;
  constexpr int kBursts = 2048;  // 64 Ki frames: every buffer of the pool comes back
  PortConfig pc;
  Result<std::unique_ptr<Port>> port = open_port("gen:size=512,flows=16", pc);
  ASSERT_TRUE(port.ok()) << port.error();
  Packet* pkts[kBurst];
  size_t dirty = 0;
  for (int b = 0; b < kBursts; ++b) {
    const uint16_t n = port.value()->rx_burst(0, pkts, kBurst);
    ASSERT_EQ(n, kBurst);
    for (uint16_t i = 0; i < n; ++i) {
      ASSERT_EQ(rte_pktmbuf_data_len(pkts[i]), kSize);
      uint8_t* d = rte_pktmbuf_mtod(pkts[i], uint8_t*);
      for (uint32_t at = GenPort::kTemplateBytes; at < kSize; ++at) dirty += d[at] != 0;
      std::memset(d + GenPort::kTemplateBytes, 0xAB, kSize - GenPort::kTemplateBytes);
    }
    ASSERT_EQ(port.value()->tx_burst(0, pkts, n), n);
  }
  EXPECT_EQ(dirty, 0u) << "payload bytes written by the pipeline came back in later frames";
}

}  // namespace
}  // namespace fulcrum
