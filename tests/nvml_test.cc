// NvmlMeter against tests/fake_nvml (a stand-in libnvidia-ml with two devices; these machines
// have no GPU): loading, the CUDA-to-NVML mapping by PCI bus id, the energy counter's
// arithmetic, the power-sampling fallback and the reasons it gives when it cannot measure.
#include "runtime/nvml.hh"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

namespace fulcrum {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) { ::setenv(name, value, 1); }
  ~ScopedEnv() { ::unsetenv(name_); }

 private:
  const char* name_;
};

TEST(NvmlMeter, MapsCudaDevicesByBusIdAndReadsTheEnergyCounter) {
  // CUDA's form of the ids ("0000:af:00.0"), NVML's own ("00000000:3B:00.0"), one it lacks.
  NvmlMeter m =
      NvmlMeter::open({"0000:af:00.0", "0000:3b:00.0", "0000:01:00.0"}, FULCRUM_FAKE_NVML);
  ASSERT_EQ(m.devices(), 3u);
  EXPECT_TRUE(m.available(0));
  EXPECT_TRUE(m.available(1));
  EXPECT_FALSE(m.available(2));
  EXPECT_EQ(m.method(0), "NVML energy counter");
  EXPECT_EQ(m.method(2), "no NVML device has PCI bus id 0000:01:00.0");
  m.start();
  const std::vector<NvmlMeter::Reading> r = m.stop();
  ASSERT_EQ(r.size(), 3u);
  // The fake's counter advances 7000 mJ (its device 1, at AF) and 2500 mJ (device 0, at 3B) a
  // read: one read at the start, one at the end.
  ASSERT_TRUE(r[0].ok) << r[0].why_not;
  ASSERT_TRUE(r[1].ok) << r[1].why_not;
  EXPECT_DOUBLE_EQ(r[0].joules, 7.0);
  EXPECT_DOUBLE_EQ(r[1].joules, 2.5);
  EXPECT_EQ(r[0].method, "NVML energy counter");
  EXPECT_FALSE(r[2].ok);
  EXPECT_EQ(r[2].why_not, "no NVML device has PCI bus id 0000:01:00.0");
}

TEST(NvmlMeter, SamplesThePowerWhereTheEnergyCounterIsNotSupported) {
  ScopedEnv no_energy("FAKE_NVML_NO_ENERGY", "1");
  NvmlMeter m = NvmlMeter::open({"0000:3b:00.0", "0000:af:00.0"}, FULCRUM_FAKE_NVML);
  ASSERT_TRUE(m.available(0));
  EXPECT_EQ(m.method(0), "NVML power samples");
  m.start();
  const std::vector<NvmlMeter::Reading> r = m.stop();
  ASSERT_TRUE(r[0].ok) << r[0].why_not;
  ASSERT_TRUE(r[1].ok) << r[1].why_not;
  // A constant 100 W and 250 W: the integral over the interval it covers, whatever its length.
  ASSERT_GT(r[0].seconds, 0);
  EXPECT_NEAR(r[0].joules, 100 * r[0].seconds, 1e-9);
  EXPECT_NEAR(r[1].joules, 250 * r[1].seconds, 1e-9);
}

TEST(NvmlMeter, SaysWhyItCannotMeasure) {
  NvmlMeter missing = NvmlMeter::open({"0000:3b:00.0"}, "/nonexistent/libnvidia-ml.so.1");
  EXPECT_FALSE(missing.available(0));
  EXPECT_EQ(missing.method(0).rfind("no NVML: cannot load /nonexistent/libnvidia-ml.so.1", 0), 0u)
      << missing.method(0);
  missing.start();
  EXPECT_FALSE(missing.stop()[0].ok);

  ScopedEnv fails("FAKE_NVML_INIT_FAILS", "1");
  NvmlMeter uninit = NvmlMeter::open({"0000:3b:00.0"}, FULCRUM_FAKE_NVML);
  EXPECT_FALSE(uninit.available(0));
  EXPECT_EQ(uninit.method(0), "no NVML: nvmlInit: Uninitialized");
}

TEST(NvmlMeter, LoadsTheLibraryTheEnvironmentNames) {
  ScopedEnv lib("FULCRUM_NVML_LIBRARY", FULCRUM_FAKE_NVML);
  NvmlMeter m = NvmlMeter::open({"0000:3b:00.0"});
  EXPECT_TRUE(m.available(0)) << m.method(0);
}

}  // namespace
}  // namespace fulcrum
