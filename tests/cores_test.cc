#include "io/cores.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "testing.hh"

namespace fulcrum {
namespace {

TEST(Cores, ListsParseInTheOrderWritten) {
  EXPECT_EQ(parse_core_list("3,1,5-7").value(), (std::vector<int>{3, 1, 5, 6, 7}));
  EXPECT_EQ(parse_core_list("0").value(), (std::vector<int>{0}));
  EXPECT_EQ(parse_core_list("1,,2").error(), "--cores 1,,2: '' is not a CPU number 0..4095");
  EXPECT_EQ(parse_core_list("3-1").error(), "--cores 3-1: '3-1' is a reversed range");
  EXPECT_EQ(parse_core_list("1-2,2").error(), "--cores 1-2,2: '2' names CPU 2 a second time");
  EXPECT_EQ(parse_core_list("a-b").error(), "--cores a-b: 'a-b' is not a range A-B of CPU numbers");
  EXPECT_FALSE(parse_core_list("99999").ok());
  EXPECT_FALSE(parse_core_list("").ok());
  EXPECT_EQ(format_core_list({5, 0, 1, 2, 7}), "0-2,5,7");
}

TEST(Cores, TheDefaultPlanKeepsTheFirstCpuForControl) {
  const CorePlan p = plan_cores(3, {}, {2, 3, 6}).value();
  EXPECT_EQ(p.control_cpu, 2);
  EXPECT_EQ(p.worker_cpus, (std::vector<int>{3, 6, 2}));
  EXPECT_EQ(lcore_map(p), "0@2,1@3,2@6,3@2");
}

TEST(Cores, RequestedCpusMustBeAllowedAndOnePerWorker) {
  const CorePlan p = plan_cores(2, {3, 1}, {0, 1, 2, 3}).value();
  EXPECT_EQ(p.worker_cpus, (std::vector<int>{3, 1}));
  EXPECT_EQ(p.control_cpu, 0) << "the first allowed CPU no worker uses";
  EXPECT_EQ(plan_cores(2, {0, 1}, {0, 1}).value().control_cpu, 0)
      << "all taken: the first worker's";
  EXPECT_EQ(plan_cores(1, {5}, {0, 1, 2, 3}).error(),
            "--cores: CPU 5 is not available to this process (it may use 0-3)");
  EXPECT_EQ(plan_cores(3, {0, 1}, {0, 1}).error(),
            "--cores names 2 CPUs for 3 workers (one CPU per worker)");
}

TEST(Cores, NeighboursAreLiveRunsSharingACpu) {
  const std::filesystem::path parent = testing::temp_path("runtime");
  std::filesystem::create_directories(parent / "fulcrum1");
  std::filesystem::create_directories(parent / "fulcrum2");
  std::filesystem::create_directories(parent / "fulcrum3");
  std::filesystem::create_directories(parent / "other");
  ASSERT_TRUE(publish_cores((parent / "fulcrum1").string(), {1, 2}).ok());
  // The parent process is alive and not us; a pid that cannot exist is skipped.
  std::ofstream((parent / "fulcrum2" / "cores").string()) << getppid() << " 2-3\n";
  std::ofstream((parent / "fulcrum3" / "cores").string()) << 999999999 << " 0-7\n";
  std::ofstream((parent / "other" / "cores").string()) << getppid() << " 0-7\n";
  const std::vector<CoreNeighbour> n =
      core_neighbours(parent.string(), (parent / "fulcrum1").string(), {0, 3, 2});
  ASSERT_EQ(n.size(), 1u);
  EXPECT_EQ(n[0].pid, getppid());
  EXPECT_EQ(n[0].shared, (std::vector<int>{3, 2}));
  std::filesystem::remove_all(parent);
}

}  // namespace
}  // namespace fulcrum
