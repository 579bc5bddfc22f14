#include "io/dpdk_drivers.hh"

#include <gtest/gtest.h>

#include "io/port.hh"

namespace fulcrum {
namespace {

std::vector<PmdInfo> drivers() {
  std::vector<PmdInfo> d;
  for (auto [name, params, virt] :
       {std::tuple{"net_null", "size=<int> copy=<int> no-rx=0|1", true},
        std::tuple{"net_pcap", "rx_pcap=<string> phy_mac=<int>infinite_rx=<0|1>", true},
        std::tuple{"net_ixgbe", "", false}}) {
    PmdInfo p;
    p.name = name;
    p.params = params;
    p.keys = param_keys(params);
    p.is_virtual = virt;
    d.push_back(p);
  }
  return d;
}

TEST(DpdkDrivers, ParamKeysIncludeThoseAfterAMissingSpace) {
  EXPECT_EQ(param_keys("size=<int> copy=<int> no-rx=0|1"),
            (std::vector<std::string>{"size", "copy", "no-rx"}));
  EXPECT_EQ(param_keys("rx_pcap=<string> phy_mac=<int>infinite_rx=<0|1>"),
            (std::vector<std::string>{"rx_pcap", "phy_mac", "infinite_rx"}));
  EXPECT_TRUE(param_keys("").empty());
}

TEST(DpdkDrivers, AMistypedDriverNameGetsTheClosestDevice) {
  const std::string why =
      explain_vdev_failure("net_nul0", "", "Operation not permitted", drivers());
  EXPECT_NE(why.find("no DPDK driver for a device named 'net_nul0'"), std::string::npos) << why;
  EXPECT_NE(why.find("did you mean 'net_null0'?"), std::string::npos) << why;
  EXPECT_NE(why.find("net_null, net_pcap"), std::string::npos) << why;
  EXPECT_EQ(why.find("net_ixgbe"), std::string::npos) << "PCI drivers are not virtual: " << why;
}

TEST(DpdkDrivers, AKernelInterfaceIsNamedAsOne) {
  const std::string why = explain_vdev_failure("lo", "", "Operation not permitted", drivers());
  EXPECT_NE(why.find("'lo' is a kernel network interface"), std::string::npos) << why;
  EXPECT_NE(why.find("net_af_packet0,iface=lo"), std::string::npos) << why;
}

TEST(DpdkDrivers, AnUnknownKeyIsNamedWithWhatTheDriverTakes) {
  const std::string why =
      explain_vdev_failure("net_null0,size=64,norx=1", "", "Operation not permitted", drivers());
  EXPECT_NE(why.find("driver net_null does not take 'norx' (did you mean 'no-rx'?)"),
            std::string::npos)
      << why;
  EXPECT_NE(why.find("net_null takes: size=<int> copy=<int> no-rx=0|1"), std::string::npos) << why;
  const std::string pcap =
      explain_vdev_failure("net_pcap1,infinite_rx=1,rx_pcap=a.pcap", "x", "y", drivers());
  EXPECT_EQ(pcap.find("does not take"), std::string::npos) << pcap;
}

TEST(DpdkDrivers, WithKnownKeysDpdksOwnLogIsTheReason) {
  EXPECT_EQ(explain_vdev_failure("net_null0,size=64", "could not open socket", "EPERM", drivers()),
            "could not open socket; net_null takes: size=<int> copy=<int> no-rx=0|1");
  EXPECT_EQ(explain_vdev_failure("net_null0", "", "EPERM", drivers()),
            "driver net_null refused it (EPERM); net_null takes: size=<int> copy=<int> no-rx=0|1");
}

TEST(DpdkDrivers, TheInstalledDriversIncludeTheVirtualOnesWeUse) {
  const std::vector<PmdInfo>& installed = network_drivers();
  for (const char* name : {"net_null", "net_pcap", "net_ring"}) {
    auto it = std::find_if(installed.begin(), installed.end(),
                           [&](const PmdInfo& p) { return p.name == name; });
    ASSERT_NE(it, installed.end()) << name << " missing from RTE_EAL_PMD_PATH";
    EXPECT_TRUE(it->is_virtual) << name;
  }
  auto null = std::find_if(installed.begin(), installed.end(),
                           [](const PmdInfo& p) { return p.name == "net_null"; });
  EXPECT_NE(std::find(null->keys.begin(), null->keys.end(), "no-rx"), null->keys.end());
}

TEST(PortList, ADeviceNamedTwiceIsAnError) {
  EXPECT_TRUE(
      check_port_list({"net_null0", "net_null1,no-rx=1", "gen:size=64", "gen:size=64"}).ok());
  Status dup = check_port_list({"gen", "net_null0", "net_null0,no-rx=1"});
  ASSERT_FALSE(dup.ok());
  EXPECT_NE(dup.error().find("--port net_null0,no-rx=1: device 'net_null0' is already port 1"),
            std::string::npos)
      << dup.error();
}

}  // namespace
}  // namespace fulcrum
