#include <gtest/gtest.h>

#include <cstdlib>

#include "io/eal.hh"
#include "offload/service.hh"

namespace {
constexpr const char* kTestTaskTimeoutMs = "600000";
}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // A loaded machine can keep a CPU-run OpenCL device busy for seconds: tests compare device and
  // CPU results, not the timeout (tested with an explicit TASK_TIMEOUT_MS), so it is generous.
  setenv(fulcrum::offload::kTaskTimeoutEnv, kTestTaskTimeoutMs, 0);
  // Test listing (ctest discovery) must not start DPDK.
  if (!::testing::GTEST_FLAG(list_tests)) fulcrum::init_eal_for_tests();
  return RUN_ALL_TESTS();
}
