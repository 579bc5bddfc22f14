// The md5_digest kernel (kernels/md5_digest.cl, OpenCL and CUDA) on every
// device present against OpenSSL's MD5 (re::md5_bulk, the CPU function of MD5Digest) on the
// same messages: thousands of random lengths 0..1500, every length around the padding edges
// (55/56/63/64 and their next blocks), regions on 16-byte boundaries as a whole-packet
// datablock packs them and skewed off word alignment; and the RFC 1321 appendix A.5 vectors.
// OpenCL runs on PoCL's CPU device in CI; the CUDA test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "lib/re/md5.hh"
#include "md5_vectors.hh"
#include "offload/discovery.hh"
#include "offload/task.hh"
#include "offload_region_task.hh"
#include "offload_testing.hh"

namespace fulcrum::offload {
namespace {

constexpr uint32_t kRandomMessages = 3000;
constexpr uint32_t kMaxLen = 1500;
constexpr uint32_t kEdgeMax = 200;  // every length 0..kEdgeMax: all padding edges of 3 blocks
constexpr size_t kPerTask = 2048;
constexpr uint32_t kMaxSkew = 3;
constexpr const char* kKernel = "md5_digest";

std::vector<TaskArg> md5_args() {
  return {TaskArg::input(kBytesInput), TaskArg::input(kRegionsInput), TaskArg::input(kItemsInput),
          TaskArg::output(kResultsOutput), TaskArg::items()};
}

const std::vector<std::vector<uint8_t>>& messages() {
  static const auto* m = [] {
    auto* v = new std::vector<std::vector<uint8_t>>;
    std::mt19937 rng(11);
    for (uint32_t len = 0; len <= kEdgeMax; ++len) v->emplace_back(len);
    for (uint32_t k = 0; k < kRandomMessages; ++k) v->emplace_back(rng() % (kMaxLen + 1));
    for (auto& msg : *v)
      for (uint8_t& b : msg) b = static_cast<uint8_t>(rng());
    return v;
  }();
  return *m;
}

std::vector<re::Md5Digest> on_cpu(const std::vector<std::vector<uint8_t>>& msgs) {
  std::vector<re::ByteRange> in;
  for (const auto& m : msgs) in.push_back({m.data(), static_cast<uint32_t>(m.size())});
  std::vector<re::Md5Digest> out(msgs.size());
  re::md5_bulk(in.data(), out.data(), static_cast<uint32_t>(in.size()));
  return out;
}

std::vector<re::Md5Digest> on_device(Device& dev, const std::vector<std::vector<uint8_t>>& msgs,
                                     testing::RegionRun layout) {
  auto exec = TaskExecutor::create(dev);
  EXPECT_TRUE(exec.ok()) << exec.error();
  if (!exec) return {};
  std::vector<re::Md5Digest> out;
  layout.item_bytes = sizeof(uint32_t);  // no trailers
  for (size_t first = 0; first < msgs.size(); first += kPerTask) {
    const size_t n = std::min(kPerTask, msgs.size() - first);
    const std::vector<uint8_t> r = testing::run_regions(dev, *exec.value(), kKernel, md5_args(),
                                                        msgs, first, n, re::kMd5Len, layout);
    if (r.size() != n * re::kMd5Len) return {};
    for (size_t k = 0; k < n; ++k) {
      re::Md5Digest d;
      std::memcpy(d.b, r.data() + k * re::kMd5Len, re::kMd5Len);
      out.push_back(d);
    }
  }
  return out;
}

void expect_devices_match_cpu(Backend backend) {
  const auto& msgs = messages();
  const std::vector<re::Md5Digest> cpu = on_cpu(msgs);
  DiscoverOptions only;
  only.only = backend;
  for (const auto& dev : discover_devices(only)) {
    SCOPED_TRACE(dev->label());
    for (uint32_t skew = 0; skew <= kMaxSkew; ++skew) {
      SCOPED_TRACE("skew " + std::to_string(skew));
      const std::vector<re::Md5Digest> got = on_device(*dev, msgs, {16, skew});
      ASSERT_EQ(got.size(), cpu.size());
      for (size_t i = 0; i < got.size(); ++i)
        ASSERT_EQ(got[i], cpu[i]) << "message " << i << " of " << msgs[i].size() << " bytes";
    }
  }
}

std::string hex(const re::Md5Digest& d) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (uint8_t b : d.b) {
    s += kHex[b >> 4];
    s += kHex[b & 0xF];
  }
  return s;
}

TEST(OffloadMd5Kernel, OpenCLKernelMatchesOpenSslOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  expect_devices_match_cpu(Backend::kOpenCL);
}

TEST(OffloadMd5Kernel, CudaKernelMatchesOpenSslOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  expect_devices_match_cpu(Backend::kCuda);
}

TEST(OffloadMd5Kernel, HostKernelMatchesOpenSslOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  expect_devices_match_cpu(Backend::kEmu);
}

// RFC 1321 appendix A.5: the digests are the RFC's, not computed by us.
TEST(OffloadMd5Kernel, Rfc1321TestSuiteOnEveryDevice) {
  const auto suite = fulcrum::testing::rfc1321_suite();
  std::vector<std::vector<uint8_t>> msgs;
  for (const auto& [text, digest] : suite) msgs.emplace_back(text.begin(), text.end());
  for (const auto& dev : discover_devices()) {
    SCOPED_TRACE(dev->label());
    const std::vector<re::Md5Digest> got = on_device(*dev, msgs, {});
    ASSERT_EQ(got.size(), suite.size());
    for (size_t i = 0; i < suite.size(); ++i)
      EXPECT_EQ(hex(got[i]), suite[i].second) << "\"" << suite[i].first << "\"";
  }
}

TEST(OffloadMd5Kernel, KernelSignature) {
  for (const auto& dev : discover_devices()) {
    SCOPED_TRACE(dev->label());
    auto k = dev->kernel(kKernel);
    ASSERT_TRUE(k.ok()) << k.error();
    EXPECT_EQ(k.value()->signature(), "bbbbu");
  }
}

}  // namespace
}  // namespace fulcrum::offload
