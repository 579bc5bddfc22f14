#include <gtest/gtest.h>

#include "io/eal.hh"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  // Test listing (ctest discovery) must not start DPDK.
  if (!::testing::GTEST_FLAG(list_tests)) fulcrum::init_eal_for_tests();
  return RUN_ALL_TESTS();
}
