// The ids_ac_scan kernel (kernels/ids_ac_scan.cl, OpenCL and CUDA) on every
// device present against the CPU function of ENGINE ac (AhoCorasick::scan) on the same
// payloads, with the automaton built caseless (as the rule engine builds it) and case-sensitive:
// random patterns and payloads (lengths 0..1500) over a small alphabet so that occurrences
// overlap, nest and repeat, patterns planted at both edges of the region, and payloads with so
// many occurrences that the result overflows (the kernel must say so; the CPU then rescans). A
// sample is also checked against a naive search. OpenCL runs on PoCL's CPU device in CI; the
// CUDA test skips without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "lib/ids/aho_corasick.hh"
#include "offload/discovery.hh"
#include "offload/ids_tables.hh"
#include "offload/task.hh"
#include "offload_region_task.hh"
#include "offload_testing.hh"

namespace fulcrum::offload {
namespace {

using Match = std::pair<uint32_t, uint32_t>;  // (pattern id, end)

constexpr uint32_t kPatterns = 80;
constexpr uint32_t kMaxPatternLen = 8;
constexpr uint32_t kPayloads = 3000;
constexpr uint32_t kMaxLen = 1500;
constexpr size_t kPerTask = 1024;
constexpr size_t kNaiveSample = 300;
constexpr uint32_t kSparseEvery = 4;  // every 4th payload: mostly bytes no pattern has
const std::string kAlphabet = std::string("abcAB\x00\xff|", 8);

struct Fixture {
  std::vector<std::string> patterns;
  std::vector<std::vector<uint8_t>> payloads;
};

const Fixture& fixture() {
  static const Fixture* f = [] {
    auto* x = new Fixture;
    std::mt19937 rng(5);
    for (uint32_t k = 0; k < kPatterns; ++k) {
      std::string p(2 + rng() % (kMaxPatternLen - 1), '\0');
      for (char& c : p) c = kAlphabet[rng() % kAlphabet.size()];
      x->patterns.push_back(p);
    }
    x->patterns.push_back("Zq");  // a pattern that the sparse payloads plant at their edges
    for (uint32_t k = 0; k < kPayloads; ++k) {
      std::vector<uint8_t> p(rng() % (kMaxLen + 1));
      const bool sparse = k % kSparseEvery == 0;
      for (uint8_t& b : p)
        b = sparse ? static_cast<uint8_t>('0' + rng() % 10)
                   : static_cast<uint8_t>(kAlphabet[rng() % kAlphabet.size()]);
      if (sparse && p.size() >= 4) {  // "Zq" at the very start and the very end
        p[0] = 'Z', p[1] = 'q', p[p.size() - 2] = 'z', p[p.size() - 1] = 'Q';
      }
      x->payloads.push_back(std::move(p));
    }
    return x;
  }();
  return *f;
}

ids::AhoCorasick build(bool caseless) {
  ids::AhoCorasick ac(caseless);
  const Fixture& f = fixture();
  for (uint32_t id = 0; id < f.patterns.size(); ++id) ac.add(f.patterns[id], id);
  EXPECT_TRUE(ac.build().ok());
  return ac;
}

std::vector<Match> cpu_scan(const ids::AhoCorasick& ac, const std::vector<uint8_t>& p) {
  std::vector<Match> out;
  ac.scan(p.data(), p.size(), [&](uint32_t id, uint32_t end) { out.emplace_back(id, end); });
  return out;
}

char fold(char c, bool caseless) {
  return caseless ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
}

std::vector<Match> naive(const std::vector<std::string>& pats, const std::vector<uint8_t>& text,
                         bool caseless) {
  std::vector<Match> out;
  for (uint32_t id = 0; id < pats.size(); ++id) {
    const std::string& p = pats[id];
    for (size_t start = 0; start + p.size() <= text.size(); ++start) {
      bool eq = true;
      for (size_t k = 0; k < p.size() && eq; ++k)
        eq = fold(static_cast<char>(text[start + k]), caseless) == fold(p[k], caseless);
      if (eq) out.emplace_back(id, static_cast<uint32_t>(start + p.size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<IdsScanResult> on_device(Device& dev, const ids::AhoCorasick& ac) {
  const Fixture& f = fixture();
  auto tables = IdsScanTables::upload(dev, ac);
  auto exec = TaskExecutor::create(dev);
  EXPECT_TRUE(tables.ok() && exec.ok());
  if (!tables || !exec) return {};
  std::vector<IdsScanResult> out;
  for (size_t first = 0; first < f.payloads.size(); first += kPerTask) {
    const size_t n = std::min(kPerTask, f.payloads.size() - first);
    const std::vector<uint8_t> r =
        testing::run_regions(dev, *exec.value(), kIdsScanKernel, tables.value()->args(), f.payloads,
                             first, n, sizeof(IdsScanResult));
    if (r.size() != n * sizeof(IdsScanResult)) return {};
    for (size_t k = 0; k < n; ++k) {
      IdsScanResult res;
      std::memcpy(&res, r.data() + k * sizeof res, sizeof res);
      out.push_back(res);
    }
  }
  return out;
}

// Steps into a state with outputs: one per distinct end (every such state has an output).
uint32_t steps_of(const std::vector<Match>& m) {
  std::set<uint32_t> ends;
  for (const Match& x : m) ends.insert(x.second);
  return static_cast<uint32_t>(ends.size());
}

void expect_devices_match_cpu(Backend backend) {
  const Fixture& f = fixture();
  DiscoverOptions only;
  only.only = backend;
  for (const auto& dev : discover_devices(only)) {
    for (bool caseless : {true, false}) {
      SCOPED_TRACE(dev->label() + (caseless ? " caseless" : " case-sensitive"));
      const ids::AhoCorasick ac = build(caseless);
      const std::vector<IdsScanResult> got = on_device(*dev, ac);
      ASSERT_EQ(got.size(), f.payloads.size());
      size_t overflowed = 0, exact = 0, edge_hits = 0;
      for (size_t i = 0; i < got.size(); ++i) {
        const std::vector<Match> cpu = cpu_scan(ac, f.payloads[i]);
        ASSERT_EQ(got[i].count, steps_of(cpu)) << "payload " << i;
        std::vector<Match> dev_matches;
        const bool fits = got[i].expand(
            ac, [&](uint32_t id, uint32_t end) { dev_matches.emplace_back(id, end); });
        ASSERT_EQ(fits, steps_of(cpu) <= kIdsMaxMatches) << "payload " << i;
        if (!fits) {
          ++overflowed;
          continue;
        }
        ++exact;
        ASSERT_EQ(dev_matches, cpu) << "payload " << i;  // same occurrences, same order
        const uint32_t len = static_cast<uint32_t>(f.payloads[i].size());
        for (const Match& m : dev_matches) edge_hits += m.second == len || m.second == 2;
        if (i < kNaiveSample) {
          std::sort(dev_matches.begin(), dev_matches.end());
          ASSERT_EQ(dev_matches, naive(f.patterns, f.payloads[i], caseless)) << "payload " << i;
        }
      }
      EXPECT_GT(overflowed, f.payloads.size() / 4);  // the dense payloads overflow
      EXPECT_GT(exact, f.payloads.size() / 5);
      EXPECT_GT(edge_hits, 100u);
    }
  }
}

TEST(OffloadIdsKernel, OpenCLKernelMatchesAhoCorasickScanOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  expect_devices_match_cpu(Backend::kOpenCL);
}

TEST(OffloadIdsKernel, CudaKernelMatchesAhoCorasickScanOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  expect_devices_match_cpu(Backend::kCuda);
}

TEST(OffloadIdsKernel, HostKernelMatchesAhoCorasickScanOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  expect_devices_match_cpu(Backend::kEmu);
}

// An automaton without patterns (a rule file whose rules have no content) is one root state:
// the kernel still runs and finds nothing.
TEST(OffloadIdsKernel, EmptyAutomatonFindsNothing) {
  ids::AhoCorasick ac(true);
  ASSERT_TRUE(ac.build().ok());
  const std::vector<std::vector<uint8_t>> payloads = {{}, {'a', 'b', 'c'}};
  for (const auto& dev : discover_devices()) {
    SCOPED_TRACE(dev->label());
    auto tables = IdsScanTables::upload(*dev, ac);
    auto exec = TaskExecutor::create(*dev);
    ASSERT_TRUE(tables.ok() && exec.ok());
    const std::vector<uint8_t> r =
        testing::run_regions(*dev, *exec.value(), kIdsScanKernel, tables.value()->args(), payloads,
                             0, payloads.size(), sizeof(IdsScanResult));
    ASSERT_EQ(r.size(), payloads.size() * sizeof(IdsScanResult));
    for (size_t k = 0; k < payloads.size(); ++k) {
      IdsScanResult res;
      std::memcpy(&res, r.data() + k * sizeof res, sizeof res);
      EXPECT_EQ(res.count, 0u);
    }
  }
}

// TaskExecutor::warm (run by every offloadable element before traffic, so that PoCL compiles
// the kernel then and not under the first task): the kernel runs on one work group with a count
// of 0, copies nothing back, and the same executor then scans as it does unwarmed.
void expect_warm_then_same_scan(Device& dev) {
  SCOPED_TRACE(dev.label());
  const Fixture& f = fixture();
  const ids::AhoCorasick ac = build(true);
  auto tables = IdsScanTables::upload(dev, ac);
  auto exec = TaskExecutor::create(dev);
  ASSERT_TRUE(tables.ok() && exec.ok());
  constexpr size_t kMessages = 40;
  testing::RegionRun warm;
  warm.warm = true;
  const std::vector<uint8_t> warmed =
      testing::run_regions(dev, *exec.value(), kIdsScanKernel, tables.value()->args(), f.payloads,
                           0, kMessages, sizeof(IdsScanResult), warm);
  const std::vector<uint8_t> plain =
      testing::run_regions(dev, *exec.value(), kIdsScanKernel, tables.value()->args(), f.payloads,
                           0, kMessages, sizeof(IdsScanResult));
  ASSERT_EQ(warmed.size(), kMessages * sizeof(IdsScanResult));
  EXPECT_EQ(warmed, plain);
  for (size_t k = 0; k < kMessages; ++k) {
    IdsScanResult res;
    std::memcpy(&res, warmed.data() + k * sizeof res, sizeof res);
    EXPECT_EQ(res.count, steps_of(cpu_scan(ac, f.payloads[k]))) << "payload " << k;
  }
}

TEST(OffloadIdsKernel, WarmingRunsNothingAndTheScanIsUnchanged) {
  for (const auto& dev : discover_devices()) expect_warm_then_same_scan(*dev);
  WITH_EMULATED_DEVICE();
  DiscoverOptions only;
  only.only = Backend::kEmu;
  for (const auto& dev : discover_devices(only)) expect_warm_then_same_scan(*dev);
}

TEST(OffloadIdsKernel, KernelSignature) {
  for (const auto& dev : discover_devices()) {
    SCOPED_TRACE(dev->label());
    auto k = dev->kernel(kIdsScanKernel);
    ASSERT_TRUE(k.ok()) << k.error();
    EXPECT_EQ(k.value()->signature(), "bbbbbu");
  }
}

}  // namespace
}  // namespace fulcrum::offload
