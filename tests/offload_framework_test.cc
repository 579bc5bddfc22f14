// OffloadElement itself: the contract checked at compile time, and an element whose kernel no
// device has: the kernel is built when the element is initialised, the device that cannot build
// it is not used by that element (its batches run on the CPU function and are counted), and the
// device stays up for other elements.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string_view>
#include <vector>

#include "core/graph_pass.hh"
#include "core/registry.hh"
#include "offload/offload_element.hh"
#include "offload_testing.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr uint64_t kCpuMark = 7;
constexpr uint32_t kPackets = 500;

class MissingKernelOffload final : public OffloadElement<MissingKernelOffload> {
 public:
  static constexpr ElementTraits kTraits{"MissingKernelOffload", 1, 1, {}};
  static constexpr auto kOffload =
      offload::OffloadSpec::items("no_such_kernel", sizeof(uint32_t), sizeof(uint32_t));

  Status configure(Args& args) override { return configure_offload(args); }
  Status initialize(const InitContext& ctx) override { return initialize_offload(ctx); }

  void process_cpu(PacketBatch& batch) override {
    batch.for_each([&](uint32_t i, Packet* p) {
      anno(p).user[0] = kCpuMark;
      batch.set_result(i, Verdict::out(0));
    });
  }
  bool gather(Packet* p, uint8_t* item, offload::PacketRegion&) override {
    const uint32_t len = length(p);
    std::memcpy(item, &len, sizeof len);
    return true;
  }
  Verdict apply(Packet*, const uint8_t*, const offload::PacketRegion&) override {
    return Verdict::out(0);
  }
  Result<std::vector<offload::TaskArg>> device_args(const InitContext&, size_t) override {
    return std::vector<offload::TaskArg>{offload::TaskArg::input(offload::kItemsInput),
                                         offload::TaskArg::output(offload::kResultsOutput),
                                         offload::TaskArg::items()};
  }
};

FULCRUM_REGISTER_ELEMENT(MissingKernelOffload);

// The contract is checked at compile time: a spec without a kernel, a region whose alignment is
// not a power of two, or a region name without a region is refused; an element class must be
// final and offloadable.
static_assert(offload::valid_spec(MissingKernelOffload::kOffload));
static_assert(!offload::valid_spec(offload::OffloadSpec::items("", 4, 4)));
static_assert(!offload::valid_spec(
    offload::OffloadSpec::with_region("k", 0, 4, {.write = false, .align = 24, .max_bytes = 64})));
static_assert(offload::valid_spec(offload::OffloadSpec::with_region(
    "k", 0, 4, {.write = true, .align = 16, .max_bytes = 64}, "region")));
constexpr offload::OffloadSpec kNameWithoutRegion = [] {
  offload::OffloadSpec s = offload::OffloadSpec::items("k", 4, 4);
  s.region_name = "region";
  return s;
}();
static_assert(!offload::valid_spec(kNameWithoutRegion));
static_assert(offload::OffloadableElement<MissingKernelOffload>);
static_assert(!offload::OffloadableElement<Element>);

TEST(OffloadFramework, ChainingIsAGraphPass) {
  EXPECT_EQ(graph_passes().count("offload_chaining"), 1u);
}

TEST(OffloadFramework, KernelMissingOnTheDeviceRunsOnTheCpuAndLeavesTheDeviceUp) {
  REQUIRE_OFFLOAD_DEVICE();
  std::vector<std::vector<uint8_t>> frames;
  for (uint32_t i = 0; i < kPackets; ++i) frames.push_back(testing::ether_frame(0x0800));
  const testing::PipelineOutcome o = testing::run_pipeline(
      "FromInput -> DeviceOnly -> m :: MissingKernelOffload -> ToOutput;", frames, 1, "m");
  ASSERT_EQ(o.sent.size(), kPackets);
  for (const auto& u : o.user01) EXPECT_EQ(u[0], kCpuMark);
  EXPECT_EQ(o.counters.at("device_packets"), 0u);
  EXPECT_EQ(o.counters.at("tasks"), 0u);
  EXPECT_GT(o.counters.at("no_device_batches"), 0u);
  EXPECT_TRUE(o.device_up);
}

}  // namespace
}  // namespace fulcrum
