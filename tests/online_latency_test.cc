// The policy balancer's online latency: the sampled p99 a shared balancer's windows carry
// (runtime/balancing/sampled_latency.hh), and the check of a balancer's device index against
// the devices of the run (elements/balance/device_index.hh). No clock: windows are closed with
// made-up times.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "elements/balance/device_index.hh"
#include "runtime/balancing/sampled_latency.hh"
#include "runtime/balancing/shared_balancer.hh"

namespace fulcrum {
namespace {

constexpr uint64_t kUs = 1000;  // ns

TEST(SampledLatency, P99WithinABucketAndOnlyWithEnoughSamples) {
  SampledLatency l(4);
  // 50 samples: fewer than the 100 asked for, no estimate; they count toward the next.
  for (int i = 0; i < 50; ++i) l.record(0, 10 * kUs);
  EXPECT_EQ(l.take(100).p99_us, 0);
  // Over two workers' slots: 940 at 10 us in all, 60 at 200 us: the p99 is 200 us (6 % above).
  for (int i = 0; i < 890; ++i) l.record(i % 2, 10 * kUs);
  for (int i = 0; i < 60; ++i) l.record(3, 200 * kUs);
  const SampledLatency::Estimate e = l.take(100);
  EXPECT_EQ(e.samples, 1000u);
  EXPECT_NEAR(e.p99_us, 200, 200.0 / 16);
  // The next estimate sees only what came after: 200 samples at 30 us.
  for (int i = 0; i < 200; ++i) l.record(2, 30 * kUs);
  const SampledLatency::Estimate next = l.take(100);
  EXPECT_EQ(next.samples, 200u);
  EXPECT_NEAR(next.p99_us, 30, 30.0 / 16);
  // Longer than 2^32 ns: the last bucket, not out of range.
  for (int i = 0; i < 100; ++i) l.record(1, uint64_t{1} << 40);
  EXPECT_GT(l.take(100).p99_us, 4e6);
}

// Keeps what it was shown.
struct Recorder {
  BalanceChoice observe(const BalanceWindow& w) {
    windows.push_back(w);
    return {};
  }
  BalanceChoice choice() const { return {}; }
  std::vector<BalanceWindow> windows;
};

TEST(SampledLatency, SharedBalancerWindowsCarryTheEstimate) {
  constexpr uint64_t kWindow = 40'000'000;
  SharedBalancer<Recorder> b(kWindow);
  b.enable_latency(100, 1);
  const uint32_t slot = b.attach();
  b.tick(1);  // the first window begins
  for (int i = 0; i < 120; ++i) b.record_latency(slot, 50 * kUs);
  b.tick(1 + kWindow);
  b.tick(1 + 2 * kWindow);  // nothing sampled: no estimate
  const std::vector<BalanceWindow> w =
      b.inspect([](const Recorder& r, const BalanceWindow&, uint64_t) { return r.windows; });
  ASSERT_EQ(w.size(), 2u);
  EXPECT_NEAR(w[0].p99_us, 50, 50.0 / 16);
  EXPECT_EQ(w[0].latency_samples, 120u);
  EXPECT_EQ(w[1].p99_us, 0);
  // A balancer that does not sample: never an estimate, recording is a no-op.
  SharedBalancer<Recorder> quiet(kWindow);
  EXPECT_FALSE(quiet.samples_latency());
  quiet.record_latency(0, 50 * kUs);
}

TEST(SampledLatency, TheIntervalFollowsTheBatchRateForATargetOfSamples) {
  // A target of 400 samples a window: two workers' 40,000 batches in a window give one sample in
  // 100 batches each for the next; a window of 300 batches, one in every batch (never 0); a
  // balancer with a fixed interval (no target) keeps 1.
  constexpr uint64_t kWindow = 40'000'000;
  SharedBalancer<Recorder> b(kWindow);
  b.enable_latency(100, 1, 400);
  const uint32_t one = b.attach(), two = b.attach();
  EXPECT_EQ(b.sample_every(), 1u) << "before the first window";
  b.tick(1);
  for (int i = 0; i < 20'000; ++i) {
    b.count(one, 64, 0, true);
    b.count(two, 64, 0, true);
  }
  b.tick(1 + kWindow);
  EXPECT_EQ(b.sample_every(), 100u);
  for (int i = 0; i < 300; ++i) b.count(one, 64, 0, true);
  b.tick(1 + 2 * kWindow);
  EXPECT_EQ(b.sample_every(), 1u);
  SharedBalancer<Recorder> fixed(kWindow);
  fixed.enable_latency(100, 1);
  const uint32_t slot = fixed.attach();
  fixed.tick(1);
  for (int i = 0; i < 40'000; ++i) fixed.count(slot, 64, 0, true);
  fixed.tick(1 + kWindow);
  EXPECT_EQ(fixed.sample_every(), 1u);
}

TEST(SharedBalancerWindow, CarriesTheMeanPacketLength) {
  constexpr uint64_t kWindow = 40'000'000;
  SharedBalancer<Recorder> b(kWindow);
  const uint32_t one = b.attach(), two = b.attach();
  b.tick(1);
  b.count(one, 64, 64 * 84, true);  // two workers' batches: 84 B and 1520 B packets
  b.count(two, 32, 32 * 1520, false);
  b.tick(1 + kWindow);
  b.tick(1 + 2 * kWindow);     // no packet: no length
  b.count(one, 10, 0, false);  // packets counted without their bytes (AdaptiveBalancer)
  b.tick(1 + 3 * kWindow);
  const std::vector<BalanceWindow> w =
      b.inspect([](const Recorder& r, const BalanceWindow&, uint64_t) { return r.windows; });
  ASSERT_EQ(w.size(), 3u);
  EXPECT_DOUBLE_EQ(w[0].frame_bytes, (64.0 * 84 + 32.0 * 1520) / 96);
  EXPECT_DOUBLE_EQ(w[0].full_share, 0.5);
  EXPECT_EQ(w[1].frame_bytes, 0);
  EXPECT_EQ(w[2].frame_bytes, 0);
}

TEST(SharedBalancerWindow, CountsStayExactWhenWorkersShareASlot) {
  // Up to 64 workers each count into a slot of their own with plain stores; the 65th makes slot
  // 0 shared (with the 1st), and from then on every count is a locked add. Two threads counting
  // into that one slot at once (released together) must lose nothing: with plain loads and
  // stores they do, where the two run at the same time.
  constexpr uint64_t kWindow = 40'000'000;
  constexpr int kBatches = 2'000'000;
  SharedBalancer<Recorder> b(kWindow);
  std::vector<uint32_t> slots;
  for (uint32_t i = 0; i < SharedBalancer<Recorder>::kMaxWorkers; ++i) slots.push_back(b.attach());
  EXPECT_TRUE(b.own_slots());
  slots.push_back(b.attach());
  EXPECT_FALSE(b.own_slots()) << "the 65th worker shares slot 0 with the 1st";
  ASSERT_EQ(slots.front() % 64, slots.back() % 64);
  b.tick(1);
  std::atomic<int> ready{0};
  const auto counter = [&](uint32_t slot) {
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    for (int i = 0; i < kBatches; ++i) b.count(slot, 1, 0, true);
  };
  std::thread first(counter, slots.front());
  counter(slots.back());
  first.join();
  b.tick(1 + kWindow);
  const std::vector<BalanceWindow> w =
      b.inspect([](const Recorder& r, const BalanceWindow&, uint64_t) { return r.windows; });
  ASSERT_EQ(w.size(), 1u);
  EXPECT_DOUBLE_EQ(w[0].rate_pps, 2.0 * kBatches * 1e9 / kWindow);
  EXPECT_DOUBLE_EQ(w[0].full_share, 1);
}

TEST(DeviceIndex, PastTheDevicesOfTheRunIsAnError) {
  EXPECT_TRUE(check_device_index(0, 1, "DEVICE 0").ok());
  EXPECT_TRUE(check_device_index(-1, 1, "DEVICE -1").ok());  // the CPU
  const Status one = check_device_index(1, 1, "DEVICE 1");
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.error(),
            "DEVICE 1 is not a device of this run: it has 1 device (index 0); `fulcrum devices` "
            "lists them");
  const Status three = check_device_index(5, 3, "p.json: point 2: device 5");
  ASSERT_FALSE(three.ok());
  EXPECT_NE(three.error().find("p.json: point 2: device 5 is not a device of this run: it has 3 "
                               "devices (0..2)"),
            std::string::npos)
      << three.error();
  // No device at all: the documented fallback (the CPU, with a note), not an error.
  EXPECT_TRUE(check_device_index(5, 0, "DEVICE 5").ok());
}

}  // namespace
}  // namespace fulcrum
