// NUMA placement of device threads (NBA §3.2): the sysfs cpulist format, a device's node read
// from a fake sysfs tree (present, -1 meaning "no NUMA information", missing), the machine's
// nodes (fake multi-node tree, and no node directory at all), and the service giving every
// device one device thread per node, pinned only when there is more than one node.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "offload/emu/emu_spec.hh"
#include "offload/numa.hh"
#include "offload/service.hh"
#include "testing.hh"

namespace fulcrum::offload {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& p, const std::string& text) {
  fs::create_directories(p.parent_path());
  std::ofstream(p) << text;
}

TEST(OffloadNuma, ParsesCpulistRangesAndSingles) {
  Result<std::vector<int>> r = parse_cpulist("0-3,8-11\n");
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r.value(), (std::vector<int>{0, 1, 2, 3, 8, 9, 10, 11}));
  r = parse_cpulist("5");
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value(), std::vector<int>{5});
  r = parse_cpulist("7,2-3,2");
  ASSERT_TRUE(r);
  EXPECT_EQ(r.value(), (std::vector<int>{2, 3, 7}));
  r = parse_cpulist("\n");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r.value().empty());
}

TEST(OffloadNuma, RejectsMalformedCpulists) {
  for (const char* bad : {"3-1", "a", "1-", "-2", "0,,1", "0-3,", "1 2", "0x3"})
    EXPECT_FALSE(parse_cpulist(bad)) << bad;
}

TEST(OffloadNuma, FormatsPciBusIdAsSysfsNamesIt) {
  EXPECT_EQ(pci_bus_id(0, 0x3b, 0, 0), "0000:3b:00.0");
  EXPECT_EQ(pci_bus_id(1, 0xaf, 0x1f, 3), "0001:af:1f.3");
}

TEST(OffloadNuma, ReadsDeviceNodeAndHandlesUnknown) {
  const fs::path root = testing::temp_path("numa-sysfs-dev");
  fs::remove_all(root);
  write(root / "bus/pci/devices/0000:3b:00.0/numa_node", "1\n");
  write(root / "bus/pci/devices/0000:5e:00.0/numa_node", "-1\n");
  write(root / "bus/pci/devices/0000:5f:00.0/numa_node", "junk\n");
  EXPECT_EQ(pci_numa_node("0000:3b:00.0", root.string()), std::optional<int>(1));
  EXPECT_EQ(pci_numa_node("0000:5e:00.0", root.string()), std::nullopt);
  EXPECT_EQ(pci_numa_node("0000:5f:00.0", root.string()), std::nullopt);
  EXPECT_EQ(pci_numa_node("0000:99:00.0", root.string()), std::nullopt);
  EXPECT_EQ(pci_numa_node("", root.string()), std::nullopt);
  fs::remove_all(root);
}

TEST(OffloadNuma, ListsNodesWithCpusInOrder) {
  const fs::path root = testing::temp_path("numa-sysfs-nodes");
  fs::remove_all(root);
  write(root / "devices/system/node/node1/cpulist", "8-11,24-27\n");
  write(root / "devices/system/node/node0/cpulist", "0-7\n");
  write(root / "devices/system/node/node2/cpulist", "\n");  // a memory-only node
  write(root / "devices/system/node/possible", "0-2\n");
  const std::vector<NumaNode> nodes = numa_nodes(root.string());
  ASSERT_EQ(nodes.size(), 2u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[0].cpus.size(), 8u);
  EXPECT_EQ(nodes[1].id, 1);
  EXPECT_EQ(nodes[1].cpus, (std::vector<int>{8, 9, 10, 11, 24, 25, 26, 27}));
  fs::remove_all(root);
}

TEST(OffloadNuma, WithoutNodeDirectoryOneNodeHoldsTheOnlineCpus) {
  const fs::path root = testing::temp_path("numa-sysfs-flat");
  fs::remove_all(root);
  write(root / "devices/system/cpu/online", "0-5\n");
  const std::vector<NumaNode> nodes = numa_nodes(root.string());
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(nodes[0].id, 0);
  EXPECT_EQ(nodes[0].cpus, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  fs::remove_all(root);
}

TEST(OffloadNuma, MachineNodesCoverTheOnlineCpusOnce) {
  std::ifstream online("/sys/devices/system/cpu/online");
  std::string text;
  std::getline(online, text);
  Result<std::vector<int>> cpus = parse_cpulist(text);
  if (!online || !cpus) GTEST_SKIP() << "no /sys/devices/system/cpu/online";
  std::vector<int> seen;
  for (const NumaNode& n : numa_nodes()) seen.insert(seen.end(), n.cpus.begin(), n.cpus.end());
  std::sort(seen.begin(), seen.end());
  EXPECT_EQ(seen, cpus.value());
}

TEST(OffloadNuma, ServiceRunsOneThreadPerDevicePerNode) {
  Result<std::shared_ptr<OffloadService>> s = OffloadService::create();
  ASSERT_TRUE(s) << s.error();
  const OffloadService& svc = *s.value();
  const size_t nodes = numa_nodes().size();
  for (size_t d = 0; d < svc.devices(); ++d) {
    ASSERT_EQ(svc.threads(d), nodes);
    for (size_t k = 0; k < nodes; ++k) {
      const DeviceThreadConfig& c = svc.thread_at(d, k).config();
      EXPECT_EQ(c.numa_node, numa_nodes()[k].id);
      // One node is the whole machine: left unpinned.
      const std::vector<int> want = nodes == 1 ? std::vector<int>{} : numa_nodes()[k].cpus;
      EXPECT_EQ(c.cpus, want);
    }
    // Every worker gets one of the device's threads; on one node, the same one.
    for (int w = 0; w < 4; ++w) {
      DeviceThread& t = svc.thread(d, w);
      bool found = false;
      for (size_t k = 0; k < nodes; ++k) found |= &t == &svc.thread_at(d, k);
      EXPECT_TRUE(found);
      if (nodes == 1) {
        EXPECT_EQ(&t, &svc.thread(d));
      }
    }
  }
}

TEST(OffloadNuma, DeviceThreadCpusFromTheEnvironmentPinEveryThread) {
  // An emulated device, so that there is a device thread on any machine.
  Result<EmuSpec> spec = parse_emu_spec("kernel_mpps=10");
  ASSERT_TRUE(spec) << spec.error();
  set_emulated_devices({spec.value()});
  setenv(kDeviceThreadCpusEnv, "0", 1);
  Result<std::shared_ptr<OffloadService>> s = OffloadService::create();
  setenv(kDeviceThreadCpusEnv, "0-x", 1);
  Result<std::shared_ptr<OffloadService>> bad = OffloadService::create();
  unsetenv(kDeviceThreadCpusEnv);
  set_emulated_devices({});
  ASSERT_TRUE(s) << s.error();
  ASSERT_GE(s.value()->devices(), 1u);
  for (size_t d = 0; d < s.value()->devices(); ++d)
    for (size_t k = 0; k < s.value()->threads(d); ++k)
      EXPECT_EQ(s.value()->thread_at(d, k).config().cpus, std::vector<int>{0});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("FULCRUM_DEVICE_THREAD_CPUS: expected a CPU list"), std::string::npos)
      << bad.error();
}

}  // namespace
}  // namespace fulcrum::offload
