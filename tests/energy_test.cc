// RaplMeter over a powercap tree laid out in a temporary directory (this CI machine has none):
// zone discovery, reading, wrap-around and the reasons it gives when it cannot measure.
#include "runtime/energy.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fulcrum {
namespace {

namespace fs = std::filesystem;

class FakePowercap {
 public:
  FakePowercap() : root_(fs::temp_directory_path() / ("powercap-" + std::to_string(::getpid()))) {
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  ~FakePowercap() { fs::remove_all(root_); }
  void zone(const std::string& dir, const std::string& name, uint64_t energy, uint64_t range) {
    fs::create_directories(root_ / dir);
    std::ofstream(root_ / dir / "name") << name << "\n";
    std::ofstream(root_ / dir / "max_energy_range_uj") << range << "\n";
    set(dir, energy);
  }
  void set(const std::string& dir, uint64_t energy) {
    std::ofstream(root_ / dir / "energy_uj") << energy << "\n";
  }
  std::string root() const { return root_.string(); }

 private:
  fs::path root_;
};

TEST(RaplMeter, ReadsPackageZonesOnlyAndCountsWrapAround) {
  FakePowercap p;
  p.zone("intel-rapl:0", "package-0", 1'000'000, 10'000'000);
  p.zone("intel-rapl:1", "package-1", 9'500'000, 10'000'000);
  p.zone("intel-rapl:0:0", "core", 5, 10'000'000);  // a subzone: inside package-0, not added
  const RaplMeter m = RaplMeter::open(p.root());
  ASSERT_TRUE(m.available()) << m.why_not();
  EXPECT_EQ(m.zones(), "package-0, package-1");
  const std::vector<uint64_t> a = m.read();
  p.set("intel-rapl:0", 3'500'000);  // +2.5 J
  p.set("intel-rapl:1", 500'000);    // wrapped: +0.5 J to the range, +0.5 J after
  const std::vector<uint64_t> b = m.read();
  EXPECT_DOUBLE_EQ(m.joules(a, b), 3.5);
}

TEST(RaplMeter, SaysWhyItCannotMeasure) {
  FakePowercap p;
  const RaplMeter none = RaplMeter::open(p.root());
  EXPECT_FALSE(none.available());
  EXPECT_NE(none.why_not().find("no RAPL zones under"), std::string::npos);
  fs::create_directories(p.root() + "/intel-rapl:0");  // no energy_uj in it
  const RaplMeter unreadable = RaplMeter::open(p.root());
  EXPECT_FALSE(unreadable.available());
  EXPECT_NE(unreadable.why_not().find("cannot read"), std::string::npos);
  EXPECT_FALSE(RaplMeter::open("/nonexistent-powercap").available());
}

}  // namespace
}  // namespace fulcrum
