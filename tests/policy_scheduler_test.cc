// The thesis' policy scheduler (runtime/balancing/policy_scheduler.hh, paper 001 §5.2) and its
// profile file (profile.hh), against a synthetic plant: each configuration carries a known rate
// (a function of the device batch size where that matters), windows report min(offered, that
// rate) with ±5 % multiplicative noise, seeded, and say "backlogged" when the offer is above it.
// No clock: the results are the same on any machine.
#include "runtime/balancing/policy_scheduler.hh"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "runtime/balancing/profile.hh"

namespace fulcrum {
namespace {

constexpr double kMpps = 1e6;

ProfilePoint point(int32_t device, double fraction, uint32_t aggregate, double mpps, double p99,
                   double power, double idle) {
  ProfilePoint p;
  p.device = device;
  p.fraction = fraction;
  p.aggregate = aggregate;
  p.throughput_pps = mpps * kMpps;
  p.p50_us = p99 / 2;
  p.p99_us = p99;
  p.power_w = power;
  p.idle_w = idle;
  return p;
}

// A CPU that idles low, a device mix with the most throughput, the device alone in between:
// the shapes of the thesis' Fig. 4.3/4.4 (no device is best at everything).
Profile three_way() {
  Profile p;
  p.devices = {"cpu", "emu0"};
  p.points = {point(0, 0, 1, 1.0, 60, 40, 30),      // 0: CPU only
              point(0, 0.5, 8, 2.5, 300, 120, 60),  // 1: half to the device
              point(0, 1, 16, 2.0, 500, 100, 55)};  // 2: all to the device
  return p;
}

// The rate configuration `index` carries at device batch size `aggregate`.
using Plant = std::function<double(size_t index, uint32_t aggregate)>;

class Driver {
 public:
  Driver(PolicyScheduler& s, Plant plant, uint64_t seed)
      : s_(s), plant_(std::move(plant)), rng_(seed) {}

  // One window at `offered_pps`.
  void window(double offered_pps) {
    const double carried = plant_(s_.current_index(), s_.aggregate());
    std::uniform_real_distribution<double> noise(0.95, 1.05);
    BalanceWindow w;
    w.full_share = offered_pps > carried ? 1 : 0;
    w.rate_pps = std::min(offered_pps, carried) * noise(rng_);
    s_.observe(w);
  }
  void windows(int n, double offered_pps) {
    for (int i = 0; i < n; ++i) window(offered_pps);
  }

 private:
  PolicyScheduler& s_;
  Plant plant_;
  std::mt19937_64 rng_;
};

// The profile is right: every configuration carries what it says.
Plant as_profiled(const Profile& p) {
  return [p](size_t i, uint32_t) { return p.points[i].throughput_pps; };
}

// One window flat out (every batch full) at `mpps`.
void backlogged_window(PolicyScheduler& s, double mpps) {
  BalanceWindow w;
  w.full_share = 1;
  w.rate_pps = mpps * kMpps;
  s.observe(w);
}

PolicyConfig config(Policy policy) {
  PolicyConfig c;
  c.policy = policy;
  return c;
}

TEST(PolicyChoice, EachPolicyPicksItsBestCarrier) {
  const Profile p = three_way();
  const double h = 0.9;
  EXPECT_EQ(choose(p.points, Policy::kThroughput, {0.5 * kMpps, 0}, h), 1);
  // Latency: the lowest p99 among those that carry the rate.
  EXPECT_EQ(choose(p.points, Policy::kLatency, {0.5 * kMpps, 0}, h), 0);
  EXPECT_EQ(choose(p.points, Policy::kLatency, {1.5 * kMpps, 0}, h), 1);
  // Energy: the lowest power at the rate (linear between idle and loaded).
  EXPECT_EQ(choose(p.points, Policy::kEnergy, {0.5 * kMpps, 0}, h), 0);  // 35 W, 72 W, 66 W
  EXPECT_EQ(choose(p.points, Policy::kEnergy, {1.5 * kMpps, 0}, h), 2);  // -, 96 W, 89 W
  EXPECT_EQ(choose(p.points, Policy::kEnergy, {2.1 * kMpps, 0}, h), 1);  // only the mix carries
  EXPECT_DOUBLE_EQ(p.points[2].power_at(1.0 * kMpps), 55 + 45 * 0.5);
  EXPECT_DOUBLE_EQ(p.points[2].power_at(9.0 * kMpps), 100);
}

TEST(PolicyChoice, LatencyBoundAndFallbacks) {
  const Profile p = three_way();
  const double h = 0.9;
  // Latency-bounded throughput: the fastest point whose p99 is under the bound.
  EXPECT_EQ(choose(p.points, Policy::kThroughput, {0, 400}, h), 1);
  EXPECT_EQ(choose(p.points, Policy::kThroughput, {0, 200}, h), 0);
  // Nothing carries 5 Mpps: the fastest (within the bound when one is given).
  EXPECT_EQ(choose(p.points, Policy::kEnergy, {5 * kMpps, 0}, h), 1);
  EXPECT_EQ(choose(p.points, Policy::kLatency, {5 * kMpps, 100}, h), 0);
  // No point is under the bound: the lowest p99.
  EXPECT_EQ(choose(p.points, Policy::kThroughput, {0, 10}, h), 0);
  EXPECT_EQ(choose({}, Policy::kThroughput, {0, 0}, h), -1);
}

TEST(PolicyScheduler, EnergyFollowsTheLoadUpAndDown) {
  const Profile profile = three_way();
  PolicyScheduler s(profile, config(Policy::kEnergy));
  Driver run(s, as_profiled(profile), 1);
  EXPECT_EQ(s.current_index(), 0u);  // no traffic yet: the lowest idle power
  run.windows(50, 0.2 * kMpps);      // 20 % of the CPU's rate
  EXPECT_EQ(s.current_index(), 0u);
  run.windows(50, 1.5 * kMpps);  // the CPU is backlogged: the device alone is cheapest
  EXPECT_EQ(s.current_index(), 2u);
  run.windows(50, 2.2 * kMpps);  // only the mix carries it
  EXPECT_EQ(s.current_index(), 1u);
  run.windows(50, 0.2 * kMpps);
  EXPECT_EQ(s.current_index(), 0u);
  EXPECT_EQ(s.switches(), 3u);  // one per change of load, none from noise
}

TEST(PolicyScheduler, NoiseAtABoundaryDoesNotMakeItAlternate) {
  // The offer sits at the CPU's loaded capacity (90 % of 1 Mpps), ±5 %: half the windows ask
  // for more than the CPU carries with headroom. The DELTA band and LAMBDA keep the CPU.
  const Profile profile = three_way();
  const Plant plant = as_profiled(profile);
  PolicyScheduler s(profile, config(Policy::kEnergy));
  Driver run(s, plant, 2);
  run.windows(1000, 0.9 * kMpps);
  EXPECT_LE(s.switches(), 1u);
  EXPECT_EQ(s.current_index(), 0u);

  // Without them, the same windows make it alternate: the band is what holds it.
  PolicyConfig tight = config(Policy::kEnergy);
  tight.delta = 1e-6;
  tight.lambda = 1;
  PolicyScheduler t(profile, tight);
  Driver run_t(t, plant, 2);
  run_t.windows(1000, 0.9 * kMpps);
  EXPECT_GT(t.switches(), 50u);
}

TEST(PolicyScheduler, LatencyBoundHoldsUnderLoad) {
  // Latency policy bounded at 400 us: the all-device point (500 us) is never used, even when
  // the offer exceeds everything the others carry.
  const Profile profile = three_way();
  PolicyConfig c = config(Policy::kLatency);
  c.latency_bound_us = 400;
  PolicyScheduler s(profile, c);
  Driver run(s, as_profiled(profile), 3);
  std::vector<size_t> used;
  for (double offer : {0.3, 1.5, 3.0, 0.3}) {
    for (int i = 0; i < 30; ++i) {
      run.window(offer * kMpps);
      used.push_back(s.current_index());
    }
  }
  EXPECT_EQ(std::count(used.begin(), used.end(), 2u), 0);
  EXPECT_EQ(used[29], 0u);
  EXPECT_EQ(used[59], 1u);
  EXPECT_EQ(used.back(), 0u);
}

TEST(PolicyScheduler, AWrongProfileIsLearnedAndTheNextBestTaken) {
  // The profile says the mix does 2.5 Mpps; on this machine it does 1.2 (a slower device), and
  // a larger batch does not help. Under a backlog the scheduler grows the batch up to its
  // maximum (the thesis' step 3 loop), learns the rate, and moves to the device alone (2 Mpps).
  const Profile profile = three_way();
  const Plant plant = [](size_t i, uint32_t) {
    const double mpps[] = {1.0, 1.2, 2.0};
    return mpps[i] * kMpps;
  };
  PolicyConfig c = config(Policy::kThroughput);
  c.max_aggregate = 32;
  PolicyScheduler s(profile, c);
  Driver run(s, plant, 4);
  EXPECT_EQ(s.current_index(), 1u);
  run.windows(40, 4 * kMpps);
  EXPECT_EQ(s.current_index(), 2u);
  EXPECT_GE(s.grows(), 2u);  // 8 -> 16 -> 32 before giving up on the mix
  EXPECT_EQ(s.learned(), 1u);
  EXPECT_NEAR(s.profile().points[1].throughput_pps, 1.2 * kMpps, 0.07 * kMpps);
  EXPECT_EQ(s.switches(), 1u);
}

TEST(PolicyScheduler, TheCpuAloneLearnsItsRateWithoutGrowingABatch) {
  // The CPU alone is profiled at 2.0 Mpps, the device alone at 1.8. While the CPU carries what
  // its profile says (±5 % noise), flat out, nothing is learned. Then it does 1.4 (the host got
  // slower): having carried its profile, it waits SETTLED_PERSIST (5) backlogged windows short
  // of it and learns their mean, with no batch growth (the CPU alone has no device batch), and
  // the device alone, now 1.29x the CPU's learned rate, takes over in the next window.
  Profile profile;
  profile.points = {point(0, 0, 1, 2.0, 60, 40, 30), point(0, 1, 8, 1.8, 300, 100, 55)};
  double cpu = 2.0;
  PolicyConfig c = config(Policy::kThroughput);
  PolicyScheduler s(profile, c);
  Driver run(
      s, [&](size_t i, uint32_t) { return (i == 0 ? cpu : 1.8) * kMpps; }, 8);
  run.windows(50, 4 * kMpps);
  EXPECT_EQ(s.current_index(), 0u);
  EXPECT_EQ(s.learned(), 0u);
  cpu = 1.4;
  run.windows(4, 4 * kMpps);
  EXPECT_EQ(s.learned(), 0u) << "four windows are not enough for a point that carried its profile";
  run.window(4 * kMpps);
  EXPECT_EQ(s.learned(), 1u);
  EXPECT_NEAR(s.profile().points[0].throughput_pps, 1.4 * kMpps, 0.07 * kMpps);
  run.window(4 * kMpps);
  EXPECT_EQ(s.current_index(), 1u);
  EXPECT_EQ(s.grows(), 0u);
  EXPECT_EQ(s.switches(), 1u);
  run.windows(20, 4 * kMpps);
  EXPECT_EQ(s.current_index(), 1u);
  EXPECT_EQ(s.drifts(), 0u) << "one point slower scales nothing else";
  EXPECT_EQ(s.profile().points[1].throughput_pps, 1.8 * kMpps);
}

TEST(PolicyScheduler, TwoPointsSlowerAlikeScaleTheOthers) {
  // Every configuration runs at 0.6 of its profile (the host, not one configuration, is slower),
  // flat out, no batch left to grow. The device alone (2.6 Mpps profiled) learns 1.56 and the
  // scheduler tries the next best, the mix (2.0), which learns 1.2: the same factor twice, so the
  // CPU alone, not measured, is predicted at 0.6 of its 1.6 (DRIFT) and the scheduler goes back
  // to the device alone without trying it. With DRIFT false it tries the CPU too (profiled 1.6,
  // more than the device's learned 1.56) before coming back.
  Profile profile;
  profile.points = {point(0, 0, 1, 1.6, 60, 40, 30), point(0, 0.5, 4, 2.0, 200, 80, 50),
                    point(0, 1, 4, 2.6, 300, 100, 55)};
  for (const bool drift : {true, false}) {
    PolicyConfig c = config(Policy::kThroughput);
    c.max_aggregate = 4;
    c.drift = drift;
    PolicyScheduler s(profile, c);
    ASSERT_EQ(s.current_index(), 2u);
    std::vector<size_t> visited;
    Driver run(
        s,
        [&](size_t i, uint32_t) {
          visited.push_back(i);
          return 0.6 * profile.points[i].throughput_pps;
        },
        9);
    run.windows(40, 4 * kMpps);
    EXPECT_EQ(s.current_index(), 2u) << drift;
    const bool cpu_tried = std::find(visited.begin(), visited.end(), 0u) != visited.end();
    if (drift) {
      EXPECT_FALSE(cpu_tried);
      EXPECT_EQ(s.drifts(), 1u);
      EXPECT_NEAR(s.drift(), 0.6, 0.04);
      EXPECT_NEAR(s.profile().points[0].throughput_pps, s.drift() * 1.6 * kMpps, 1);
      EXPECT_EQ(s.switches(), 2u);
      EXPECT_EQ(s.learned(), 2u);
    } else {
      EXPECT_TRUE(cpu_tried);
      EXPECT_EQ(s.drifts(), 0u);
      EXPECT_EQ(s.drift(), 1.0);
      EXPECT_EQ(s.learned(), 3u);
    }
  }
}

TEST(PolicyScheduler, OneShortWindowAtTheLargestBatchRewritesNothing) {
  // The device alone at its largest batch, flat out, carries its profiled 2.0 Mpps. One window
  // 15 % low (a noisy host) teaches nothing; LEARN_PERSIST (2) such windows in a row do, their
  // mean, with SETTLED_PERSIST off (0: a point that carried its profile is not told apart).
  Profile profile;
  profile.points = {point(0, 0, 1, 1.0, 60, 40, 30), point(0, 1, 32, 2.0, 300, 100, 55)};
  PolicyConfig c = config(Policy::kThroughput);
  c.settled_persist = 0;
  PolicyScheduler s(profile, c);
  ASSERT_EQ(s.current_index(), 1u);
  const auto window = [&](double mpps) { backlogged_window(s, mpps); };
  for (int i = 0; i < 10; ++i) window(2.0);
  window(1.7);
  for (int i = 0; i < 10; ++i) window(2.0);
  EXPECT_EQ(s.learned(), 0u);
  EXPECT_EQ(s.grows(), 0u);
  window(1.6);
  window(1.5);
  EXPECT_EQ(s.learned(), 1u);
  EXPECT_NEAR(s.profile().points[1].throughput_pps, 1.55 * kMpps, 1);
  EXPECT_EQ(s.current_index(), 1u);  // still the fastest point
}

TEST(PolicyScheduler, APointThatCarriedItsProfileRidesOutADipOfAFewWindows) {
  // What the H100 hosts did after a size step: the point in force carried its profile, then
  // 10-20 % less for 2-4 windows, then its rate again. With SETTLED_PERSIST (5) such a dip
  // teaches nothing and the scheduler stays; a slowdown that lasts 5 windows is learned (their
  // mean) and the scheduler moves to the point that now carries more.
  Profile profile;
  profile.points = {point(0, 0, 1, 1.8, 60, 40, 30), point(0, 1, 32, 2.0, 300, 100, 55)};
  PolicyScheduler s(profile, config(Policy::kThroughput));
  ASSERT_EQ(s.current_index(), 1u);
  const auto window = [&](double mpps) { backlogged_window(s, mpps); };
  for (int i = 0; i < 10; ++i) window(2.0);
  for (const double dip : {1.7, 1.65, 1.7, 1.75}) window(dip);
  for (int i = 0; i < 10; ++i) window(2.0);
  for (const double dip : {1.6, 1.7}) window(dip);
  window(1.95);
  EXPECT_EQ(s.learned(), 0u);
  EXPECT_EQ(s.switches(), 0u);
  for (const double slow : {1.5, 1.5, 1.5, 1.5}) window(slow);
  EXPECT_EQ(s.learned(), 0u);
  window(1.5);
  EXPECT_EQ(s.learned(), 1u);
  EXPECT_NEAR(s.profile().points[1].throughput_pps, 1.5 * kMpps, 1);
  window(1.5);
  EXPECT_EQ(s.current_index(), 0u) << "the CPU's 1.8 now beats the device's learned 1.5";
}

TEST(PolicyScheduler, APointThatNeverCarriedItsProfileLearnsAfterLearnPersist) {
  // The same point short of its profile from its first window on (a profile that is wrong, a
  // host slower since the profile): nothing shows the profile right, so LEARN_PERSIST (2)
  // windows teach it, as without SETTLED_PERSIST. After it learned, it must carry the new rate
  // before a dip is ridden out.
  Profile profile;
  profile.points = {point(0, 0, 1, 1.0, 60, 40, 30), point(0, 1, 32, 2.0, 300, 100, 55)};
  PolicyScheduler s(profile, config(Policy::kThroughput));
  ASSERT_EQ(s.current_index(), 1u);
  const auto window = [&](double mpps) { backlogged_window(s, mpps); };
  window(1.6);
  EXPECT_EQ(s.learned(), 0u);
  window(1.6);
  EXPECT_EQ(s.learned(), 1u);
  window(1.3);
  window(1.3);
  EXPECT_EQ(s.learned(), 2u) << "not yet carried since it learned: LEARN_PERSIST again";
  for (int i = 0; i < 5; ++i) window(1.3);
  window(1.1);
  window(1.1);
  EXPECT_EQ(s.learned(), 2u) << "carried 1.3 since: a two-window dip is ridden out";
  EXPECT_EQ(s.current_index(), 1u);
}

TEST(PolicyScheduler, HostDriftTakesADropOfAPointThatCarriedItsProfileForTheHosts) {
  // The device alone (2.0 Mpps profiled) carries its profile, then runs 20 % slower for good.
  // It learns 1.6 after SETTLED_PERSIST windows. Without HOST_DRIFT the CPU alone (1.9
  // profiled, not measured) now promises more than LAMBDA over 1.6 and takes over. With it the
  // drop is the host's: the CPU alone is predicted at 0.8 of its profile, 1.52, and the
  // scheduler stays. A point that never carried its profile scales nothing by itself.
  Profile profile;
  profile.points = {point(0, 0, 1, 1.9, 60, 40, 30), point(0, 1, 32, 2.0, 300, 100, 55)};
  for (const bool host : {false, true}) {
    PolicyConfig c = config(Policy::kThroughput);
    c.host_drift = host;
    PolicyScheduler s(profile, c);
    ASSERT_EQ(s.current_index(), 1u);
    const auto window = [&](double mpps) { backlogged_window(s, mpps); };
    for (int i = 0; i < 10; ++i) window(2.0);
    for (int i = 0; i < 6; ++i) window(1.6);
    EXPECT_EQ(s.learned(), 1u) << host;
    if (host) {
      EXPECT_EQ(s.current_index(), 1u);
      EXPECT_EQ(s.drifts(), 1u);
      EXPECT_NEAR(s.drift(), 0.8, 1e-9);
      EXPECT_NEAR(s.profile().points[0].throughput_pps, 0.8 * 1.9 * kMpps, 1);
    } else {
      EXPECT_EQ(s.current_index(), 0u);
      EXPECT_EQ(s.drifts(), 0u);
    }
  }
  PolicyConfig c = config(Policy::kThroughput);
  c.host_drift = true;
  PolicyScheduler s(profile, c);
  backlogged_window(s, 1.6);
  backlogged_window(s, 1.6);
  EXPECT_EQ(s.learned(), 1u);
  EXPECT_EQ(s.drifts(), 0u) << "short from its first window: the point's own news";
  backlogged_window(s, 1.6);
  EXPECT_EQ(s.current_index(), 0u);
}

TEST(PolicyScheduler, TheFirstWindowsOfARunOnlyWatch) {
  // The H100 host's IPsec run at 1500 B: the CPU alone profiled at 1.80 Mpps, the device alone at
  // 1.71. Its first two windows, start-up, ran 20 % short (1.44): with no warm-up the CPU learned
  // that and the scheduler left it for the device for the rest of the run. With WARMUP 3 those
  // windows teach nothing and it keeps the CPU, which then carries its profile.
  Profile profile;
  profile.points = {point(0, 0, 1, 1.80, 60, 40, 30), point(0, 1, 32, 1.71, 300, 100, 55)};
  for (const uint32_t warmup : {0u, 3u}) {
    PolicyConfig c = config(Policy::kThroughput);
    c.warmup = warmup;
    PolicyScheduler s(profile, c);
    ASSERT_EQ(s.current_index(), 0u);
    double cpu = 1.44;
    Driver run(
        s, [&](size_t i, uint32_t) { return (i == 0 ? cpu : 1.71) * kMpps; }, 3);
    run.windows(2, 4 * kMpps);
    cpu = 1.80;
    run.windows(20, 4 * kMpps);
    if (warmup == 0) {
      EXPECT_EQ(s.learned(), 1u);
      EXPECT_EQ(s.current_index(), 1u) << "start-up taught the CPU point a rate it beats";
    } else {
      EXPECT_EQ(s.learned(), 0u);
      EXPECT_EQ(s.switches(), 0u);
      EXPECT_EQ(s.current_index(), 0u);
    }
  }
}

TEST(PolicyScheduler, FlatOutAmongPointsWithinNoiseItHoldsOne) {
  // Four points profiled within 8 % of each other (2.00-2.15 Mpps), each carrying 1.95 on this
  // machine, flat out: the scheduler holds the point it has (at most one move, and one rate
  // learned, over 400 windows), because no other point promises LAMBDA (10 %) more than the
  // current one. (Before, each point learned a little lower sent it to the next: the walk seen on
  // a GPU host after a size step.) The one move may come late: the fastest point carries its
  // profile in most windows, so it learns only from SETTLED_PERSIST short windows in a row.
  Profile profile;
  profile.points = {point(0, 0, 1, 2.00, 60, 40, 30), point(0, 0.25, 4, 2.05, 80, 60, 40),
                    point(0, 0.5, 4, 2.10, 90, 70, 45), point(0, 1, 4, 2.15, 100, 80, 50)};
  for (Policy policy : {Policy::kEnergy, Policy::kThroughput}) {
    PolicyConfig c = config(policy);
    c.max_aggregate = 4;
    PolicyScheduler s(profile, c);
    Driver run(
        s, [](size_t, uint32_t) { return 1.95 * kMpps; }, 6);
    run.windows(200, 4 * kMpps);
    const size_t held = s.current_index();
    run.windows(200, 4 * kMpps);
    EXPECT_EQ(s.current_index(), held) << policy_name(policy);
    EXPECT_LE(s.switches(), 1u) << policy_name(policy);
    EXPECT_LE(s.learned(), 1u) << policy_name(policy);
  }
}

TEST(PolicyScheduler, BatchGrowsToReachTheProfileThenShrinksToTheLoad) {
  // The device alone reaches its 2 Mpps only with 24 batches per task (a throughput that grows
  // with the batch, the thesis' Fig. 4.3): profiled at 4, the scheduler grows 4 -> 8 -> 16 ->
  // 32 under a backlog (log2 of the ratio). At a light load it shrinks to the smallest batch
  // that still carries the rate and stays there (no alternation at the edge).
  Profile profile;
  profile.points = {point(0, 1, 4, 2.0, 500, 100, 55)};
  const auto carried = [](uint32_t aggregate) {
    return 2.0 * kMpps * std::min(1.0, aggregate / 24.0);
  };
  PolicyConfig c = config(Policy::kThroughput);
  c.max_aggregate = 64;
  PolicyScheduler s(profile, c);
  Driver run(
      s, [&](size_t, uint32_t a) { return carried(a); }, 5);
  run.windows(10, 3 * kMpps);
  EXPECT_EQ(s.aggregate(), 32u);
  EXPECT_EQ(s.grows(), 3u);
  EXPECT_FALSE(s.tuning());

  run.windows(60, 1.0 * kMpps);  // 1 Mpps needs 12 batches per task
  std::vector<uint32_t> tail;
  for (int i = 0; i < 40; ++i) {
    run.window(1.0 * kMpps);
    tail.push_back(s.aggregate());
  }
  EXPECT_TRUE(std::all_of(tail.begin(), tail.end(), [&](uint32_t a) { return a == tail[0]; }))
      << "the batch size still moves after 60 windows";
  EXPECT_GE(carried(tail[0]), 1.0 * kMpps);
  EXPECT_LE(tail[0], 16u);  // well under the 32 it grew to
  EXPECT_GE(s.shrinks(), 2u);
}

RateSample at_rate(double mpps, double p99) {
  RateSample r;
  r.offered_pps = mpps * kMpps;
  r.throughput_pps = mpps * kMpps;
  r.p50_us = p99 / 2;
  r.p99_us = p99;
  return r;
}

TEST(RateProfile, LatencyIsInterpolatedBetweenTheRatesProfiled) {
  ProfilePoint p = point(0, 0.5, 8, 1.0, 200, 100, 50);
  // No rates (a format 1 profile): the sustained figure at every load.
  EXPECT_DOUBLE_EQ(p.p99_at(0.1 * kMpps), 200);
  p.rates = {at_rate(0.2, 20), at_rate(0.5, 30), at_rate(0.8, 60),
             at_rate(1.1, 999)};      // at or above the sustained rate: not used
  EXPECT_DOUBLE_EQ(p.p99_at(0), 20);  // below the lowest: the lowest
  EXPECT_DOUBLE_EQ(p.p99_at(0.2 * kMpps), 20);
  EXPECT_DOUBLE_EQ(p.p99_at(0.35 * kMpps), 25);  // halfway between 20 and 30
  EXPECT_DOUBLE_EQ(p.p99_at(0.8 * kMpps), 60);
  EXPECT_DOUBLE_EQ(p.p99_at(0.9 * kMpps), 130);  // halfway to the sustained point's 200
  EXPECT_DOUBLE_EQ(p.p99_at(1.0 * kMpps), 200);
  EXPECT_DOUBLE_EQ(p.p99_at(5.0 * kMpps), 200);
  EXPECT_DOUBLE_EQ(p.p50_at(0.35 * kMpps), 12.5);
  EXPECT_DOUBLE_EQ(p.p50_at(0.9 * kMpps), 65);
  p.latency_scale = 2;  // learned online
  EXPECT_DOUBLE_EQ(p.p99_at(0.35 * kMpps), 50);
}

// The CPU is fast at a light load and slow near its capacity; the device mix waits to fill its
// device batches at a light load (higher p99 there) but is better near the CPU's capacity.
// Flat out, the mix has the lower p99 (80 against 100): a flat-out profile picks it at every load.
Profile light_and_heavy() {
  Profile p;
  p.points = {point(0, 0, 1, 1.0, 100, 40, 30), point(0, 0.5, 8, 3.0, 80, 120, 60)};
  p.points[0].rates = {at_rate(0.3, 15), at_rate(0.6, 30), at_rate(0.9, 70)};
  p.points[1].rates = {at_rate(0.3, 60), at_rate(1.5, 50), at_rate(2.4, 60)};
  return p;
}

TEST(RateProfile, PoliciesUseTheLatencyAtTheOfferedRate) {
  Profile p = light_and_heavy();
  const double h = 0.9;
  EXPECT_EQ(choose(p.points, Policy::kLatency, {0.3 * kMpps, 0}, h), 0);  // 15 us against 60
  // 0.85 Mpps: the CPU 30 + 40 * 0.25 / 0.3 = 63.3 us, the mix 60 - 10 * 0.55 / 1.2 = 55.4 us.
  EXPECT_NEAR(p.points[0].p99_at(0.85 * kMpps), 63.33, 0.01);
  EXPECT_NEAR(p.points[1].p99_at(0.85 * kMpps), 55.42, 0.01);
  EXPECT_EQ(choose(p.points, Policy::kLatency, {0.85 * kMpps, 0}, h), 1);
  // Latency-bounded throughput at 0.3 Mpps, p99 under 40 us: only the CPU is under it there.
  EXPECT_EQ(choose(p.points, Policy::kThroughput, {0.3 * kMpps, 40}, h), 0);
  // The same profile without its rates (flat out only) picks the mix for both.
  for (ProfilePoint& pt : p.points) pt.rates.clear();
  EXPECT_EQ(choose(p.points, Policy::kLatency, {0.3 * kMpps, 0}, h), 1);
  EXPECT_EQ(choose(p.points, Policy::kThroughput, {0.3 * kMpps, 40}, h), 1);
}

// Windows at `offered` Mpps, none backlogged, whose p99 estimate is `p99(i)` for window i.
void latency_windows(PolicyScheduler& s, int n, double offered,
                     const std::function<double(int)>& p99) {
  for (int i = 0; i < n; ++i) {
    BalanceWindow w;
    w.rate_pps = offered * kMpps;
    w.p99_us = p99(i);
    w.latency_samples = 200;
    s.observe(w);
  }
}

TEST(OnlineLatency, NoiseInsideTheBandOrFromSideToSideChangesNothing) {
  const Profile profile = light_and_heavy();
  PolicyScheduler s(profile, config(Policy::kLatency));
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> noise(0.95, 1.05);
  // 0.3 Mpps: the CPU, predicted 15 us.
  latency_windows(s, 1000, 0.3, [&](int) { return 15 * noise(rng); });
  EXPECT_EQ(s.current_index(), 0u);
  EXPECT_DOUBLE_EQ(s.predicted_p99_us(), 15);
  EXPECT_EQ(s.latency_replans(), 0u);
  // ±15 %, alternating sides: out of the band every window, never twice on one side.
  latency_windows(s, 1000, 0.3, [](int i) { return i % 2 ? 15 * 1.15 : 15 * 0.85; });
  EXPECT_EQ(s.latency_replans(), 0u);
  EXPECT_EQ(s.switches(), 0u);
  EXPECT_DOUBLE_EQ(s.profile().points[0].latency_scale, 1);

  // Without the persistence, the same series re-plans: what the assertion above relies on.
  PolicyConfig eager = config(Policy::kLatency);
  eager.latency_persist = 1;
  PolicyScheduler t(profile, eager);
  latency_windows(t, 100, 0.3, [](int i) { return i % 2 ? 15 * 1.15 : 15 * 0.85; });
  EXPECT_GT(t.latency_replans(), 50u);
}

TEST(OnlineLatency, ALatencyOutsideTheBandIsLearnedOnceAndReplans) {
  const Profile profile = light_and_heavy();
  PolicyConfig c = config(Policy::kLatency);
  PolicyScheduler s(profile, c);
  // The CPU measures 3x its profile at 0.3 Mpps (45 us, not 15): the first estimate after the
  // start is not compared; the next two, above the band, make the point learn; the mix (60 us
  // there) is still slower, so the CPU stays. Later windows agree with the learned figure.
  latency_windows(s, 2, 0.3, [](int) { return 45.0; });
  EXPECT_EQ(s.latency_replans(), 0u);
  latency_windows(s, 1, 0.3, [](int) { return 45.0; });
  EXPECT_EQ(s.latency_replans(), 1u);
  EXPECT_DOUBLE_EQ(s.profile().points[0].latency_scale, 3);
  EXPECT_EQ(s.current_index(), 0u);
  latency_windows(s, 100, 0.3, [](int) { return 45.0; });
  EXPECT_EQ(s.latency_replans(), 1u);
  EXPECT_DOUBLE_EQ(s.predicted_p99_us(), 45);
  // Now 5x (75 us): learned again, and the mix's 60 us wins by more than LAMBDA.
  latency_windows(s, 3, 0.3, [](int) { return 75.0; });
  EXPECT_EQ(s.latency_replans(), 2u);
  EXPECT_EQ(s.current_index(), 1u);
  EXPECT_EQ(s.switches(), 1u);
}

TEST(OnlineLatency, AMeasuredLatencyOverTheBoundMovesAway) {
  // Latency-bounded throughput at 0.3 Mpps. Bounded at 70 us, the mix (60 us there) is within
  // it and the fastest. Bounded at 40 us, only the CPU (15 us there) is; it then measures 90 us:
  // once learned it is over the bound, nothing qualifies, and the fallback takes the lowest p99,
  // the mix's 60 us.
  const Profile profile = light_and_heavy();
  PolicyConfig c = config(Policy::kThroughput);
  c.latency_bound_us = 70;
  PolicyScheduler s(profile, c);
  latency_windows(s, 1, 0.3, [](int) { return 15.0; });
  EXPECT_EQ(s.current_index(), 1u);  // the mix: within 70 us at 0.3 Mpps, and the fastest
  PolicyConfig tight = config(Policy::kThroughput);
  tight.latency_bound_us = 40;
  PolicyScheduler t(profile, tight);
  latency_windows(t, 1, 0.3, [](int) { return 15.0; });
  EXPECT_EQ(t.current_index(), 0u);                      // only the CPU is under 40 us at 0.3 Mpps
  latency_windows(t, 3, 0.3, [](int) { return 90.0; });  // it measures 90: over the bound
  EXPECT_EQ(t.latency_replans(), 1u);
  EXPECT_EQ(t.current_index(), 1u);  // nothing qualifies: the lowest p99 (the mix, 60 us)
  EXPECT_EQ(t.switches(), 1u);
}

// One profile measured at two sizes (`fulcrum profile --sizes 64,1500`): at 64 B the CPU
// carries 1 Mpps and the device mix 2.5; at 1500 B (packets 1520 B long at the balancer) the CPU
// 0.3 and the mix 0.9. Points 0-2 are the 64 B ones, 3-5 the 1500 B ones.
Profile two_sizes() {
  Profile p;
  p.devices = {"emu0"};
  p.points = {point(0, 0, 1, 1.0, 60, 40, 30),     point(0, 0.5, 8, 2.5, 300, 120, 60),
              point(0, 1, 16, 2.0, 500, 100, 55),  point(0, 0, 1, 0.3, 90, 40, 30),
              point(0, 0.5, 8, 0.9, 400, 120, 60), point(0, 1, 16, 0.8, 700, 100, 55)};
  for (size_t i = 0; i < p.points.size(); ++i) p.points[i].frame_bytes = i < 3 ? 84 : 1520;
  return p;
}

// Windows of packets `bytes` long; the plant carries what the profile says at that size.
class SizedDriver {
 public:
  SizedDriver(PolicyScheduler& s, uint64_t seed) : s_(s), rng_(seed) {}
  void window(double offered_pps, double bytes) {
    // The configuration in force carries its rate at the size of the traffic (not the size it
    // was planned at); the sizes meet at their geometric middle.
    constexpr double kMiddle = 357;
    double carried = 0;
    for (const ProfilePoint& p : two_sizes().points)
      if (p.fraction == s_.current().fraction && (p.frame_bytes > kMiddle) == (bytes > kMiddle))
        carried = p.throughput_pps;
    std::uniform_real_distribution<double> noise(0.95, 1.05);
    BalanceWindow w;
    w.full_share = offered_pps > carried ? 1 : 0;
    w.rate_pps = std::min(offered_pps, carried) * noise(rng_);
    w.frame_bytes = bytes;
    s_.observe(w);
    decisions.push_back(s_.current_index());
  }
  void windows(int n, double offered_pps, double bytes) {
    for (int i = 0; i < n; ++i) window(offered_pps, bytes);
  }
  std::vector<size_t> decisions;

 private:
  PolicyScheduler& s_;
  std::mt19937_64 rng_;
};

TEST(SizeProfile, ClassesGroupCloseSizesAndTheNearestIsOnALogScale) {
  std::vector<ProfilePoint> points(5);
  const double bytes[] = {122, 126, 560, 1560, 1530};
  for (size_t i = 0; i < points.size(); ++i) points[i].frame_bytes = bytes[i];
  const std::vector<double> classes = size_classes(points);
  ASSERT_EQ(classes.size(), 3u);
  EXPECT_DOUBLE_EQ(classes[0], 124);
  EXPECT_DOUBLE_EQ(classes[1], 560);
  EXPECT_DOUBLE_EQ(classes[2], 1545);
  EXPECT_EQ(nearest_size_class(classes, 64), 0u);
  EXPECT_EQ(nearest_size_class(classes, 250), 0u);  // 2.0x over 124, 2.2x under 560
  EXPECT_EQ(nearest_size_class(classes, 280), 1u);  // 2.3x over 124, 2.0x under 560
  EXPECT_EQ(nearest_size_class(classes, 9000), 2u);
  EXPECT_EQ(nearest_size_class(classes, 0), 0u);  // not measured
  EXPECT_EQ(size_classes(std::vector<ProfilePoint>(3)), std::vector<double>{0});
}

TEST(SizeProfile, ASizeStepIsFollowedWithinTheConfirmingWindows) {
  // Flat out at 64 B the throughput policy runs the mix (point 1). The traffic steps to 1500 B:
  // two windows later (SIZE_PERSIST) it runs the mix measured at 1500 B (point 4), the best
  // there too, and stays: nothing learned, no other switch. Then a rate step to 20 % of the
  // CPU's 1500 B rate: the energy policy moves to the CPU at 1500 B (point 3) at once.
  for (const Policy policy : {Policy::kThroughput, Policy::kEnergy}) {
    PolicyScheduler s(two_sizes(), config(policy));
    SizedDriver run(s, 7);
    run.windows(50, 5 * kMpps, 84);
    ASSERT_EQ(s.current_index(), 1u) << policy_name(policy);
    EXPECT_EQ(s.size_class_bytes(), 84);
    const uint64_t switches = s.switches();
    run.windows(100, 5 * kMpps, 1520);
    EXPECT_EQ(s.size_class_bytes(), 1520);
    EXPECT_EQ(s.size_switches(), 1u);
    EXPECT_EQ(s.learned(), 0u);
    EXPECT_EQ(s.switches(), switches + 1);
    const std::vector<size_t>& d = run.decisions;
    EXPECT_EQ(d[50], 1u);  // the first 1500 B window: not yet confirmed
    EXPECT_TRUE(std::all_of(d.begin() + 51, d.end(), [](size_t c) { return c == 4; }))
        << policy_name(policy);
    if (policy != Policy::kEnergy) continue;
    run.windows(50, 0.06 * kMpps, 1520);
    EXPECT_EQ(s.current_index(), 3u);
    EXPECT_EQ(s.switches(), switches + 2);
  }
}

TEST(SizeProfile, AProfileOfOneSizeWandersAfterTheStep) {
  // The same step with the 64 B points only (what the profile held before --sizes): at 1500 B
  // the backlogged rate is far under every point's, so the scheduler learns and moves among the
  // points; this is what the size classes prevent (the test above).
  Profile one = two_sizes();
  one.points.resize(3);
  for (ProfilePoint& p : one.points) p.frame_bytes = 0;
  PolicyScheduler s(one, config(Policy::kThroughput));
  SizedDriver run(s, 7);
  run.windows(50, 5 * kMpps, 84);
  run.windows(100, 5 * kMpps, 1520);
  EXPECT_GE(s.learned(), 1u);
  EXPECT_EQ(s.size_switches(), 0u);
}

TEST(SizeProfile, MixedSizesAtTheBoundaryDoNotMakeItAlternate) {
  // The mean packet length jitters across the boundary between the classes (their geometric
  // middle, ~357 B) every other window: never SIZE_PERSIST windows in a row on the far side.
  PolicyScheduler s(two_sizes(), config(Policy::kThroughput));
  SizedDriver run(s, 8);
  for (int i = 0; i < 500; ++i) run.window(5 * kMpps, i % 2 == 0 ? 340 : 375);
  EXPECT_EQ(s.size_switches(), 0u);
  EXPECT_EQ(s.current_index(), 1u);
  // With SIZE_PERSIST 1 the same windows move it every time.
  PolicyConfig eager = config(Policy::kThroughput);
  eager.size_persist = 1;
  PolicyScheduler e(two_sizes(), eager);
  SizedDriver run_e(e, 8);
  for (int i = 0; i < 500; ++i) run_e.window(5 * kMpps, i % 2 == 0 ? 340 : 375);
  EXPECT_GT(e.size_switches(), 400u);
}

namespace fs = std::filesystem;

class ProfileFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("profile-" + std::to_string(::getpid()) + ".json"));
  }
  void TearDown() override { fs::remove(path_); }
  void write(const std::string& text) { std::ofstream(path_) << text; }
  std::string error() {
    Result<Profile> p = read_profile(path_.string());
    EXPECT_FALSE(p.ok());
    return p ? "" : p.error();
  }
  fs::path path_;
};

TEST_F(ProfileFile, RoundTrips) {
  Profile p = three_way();
  p.points[1].rates = {at_rate(1.5, 90), at_rate(0.5, 40)};
  p.pipeline = "configs/ipv4_router_offload.click";
  p.traffic = "gen:size=64";
  p.points[1].power_measured = true;
  ASSERT_TRUE(write_profile(p, path_.string()).ok());
  Result<Profile> back = read_profile(path_.string());
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().pipeline, p.pipeline);
  EXPECT_EQ(back.value().devices, p.devices);
  ASSERT_EQ(back.value().points.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    const ProfilePoint& a = p.points[i];
    const ProfilePoint& b = back.value().points[i];
    EXPECT_EQ(a.device, b.device);
    EXPECT_EQ(a.fraction, b.fraction);
    EXPECT_EQ(a.aggregate, b.aggregate);
    EXPECT_EQ(a.throughput_pps, b.throughput_pps);
    EXPECT_EQ(a.p99_us, b.p99_us);
    EXPECT_EQ(a.power_w, b.power_w);
    EXPECT_EQ(a.idle_w, b.idle_w);
    EXPECT_EQ(a.power_measured, b.power_measured);
  }
  // Read back sorted by throughput.
  const std::vector<RateSample>& rates = back.value().points[1].rates;
  ASSERT_EQ(rates.size(), 2u);
  EXPECT_EQ(rates[0].throughput_pps, 0.5 * kMpps);
  EXPECT_EQ(rates[0].p99_us, 40);
  EXPECT_EQ(rates[1].offered_pps, 1.5 * kMpps);
  EXPECT_EQ(rates[1].p50_us, 45);
  EXPECT_TRUE(back.value().points[0].rates.empty());
}

TEST_F(ProfileFile, SizesRoundTripAndAreAllOrNone) {
  ASSERT_TRUE(write_profile(two_sizes(), path_.string()).ok());
  Result<Profile> back = read_profile(path_.string());
  ASSERT_TRUE(back.ok()) << back.error();
  EXPECT_EQ(back.value().points[0].frame_bytes, 84);
  EXPECT_EQ(back.value().points[5].frame_bytes, 1520);
  const std::string pt =
      "\"device\": 0, \"fraction\": 0, \"aggregate\": 1, \"throughput_pps\": 1e6, "
      "\"p50_us\": 10, \"p99_us\": 20, \"power_w\": 50, \"idle_w\": 20, \"power_measured\": false";
  write("{\"format\": 3, \"points\": [{" + pt + ", \"frame_bytes\": 64}, {" + pt + "}]}");
  EXPECT_NE(error().find("\"frame_bytes\" must be given (> 0) for every point or for none"),
            std::string::npos);
  write("{\"format\": 3, \"points\": [{" + pt + ", \"frame_bytes\": \"big\"}]}");
  EXPECT_NE(error().find("point 0: \"frame_bytes\" must be a number"), std::string::npos);
  write("{\"format\": 2, \"points\": [{" + pt + "}]}");  // format 2: no sizes, one class
  Result<Profile> two = read_profile(path_.string());
  ASSERT_TRUE(two.ok()) << two.error();
  EXPECT_EQ(two.value().points[0].frame_bytes, 0);
}

TEST_F(ProfileFile, FormatOneIsStillRead) {
  write(
      "{\"format\": 1, \"points\": [{\"device\": 0, \"fraction\": 0, \"aggregate\": 1, "
      "\"throughput_pps\": 1e6, \"p50_us\": 10, \"p99_us\": 20, \"power_w\": 50, \"idle_w\": "
      "20, \"power_measured\": false}]}");
  Result<Profile> p = read_profile(path_.string());
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_TRUE(p.value().points[0].rates.empty());
  EXPECT_DOUBLE_EQ(p.value().points[0].p99_at(1e5), 20);
}

TEST_F(ProfileFile, BadFilesSayWhereAndWhat) {
  EXPECT_NE(error().find("cannot open"), std::string::npos);
  write("{\"format\": 1, \"points\": [");
  EXPECT_NE(error().find("not JSON"), std::string::npos);
  write("{\"points\": []}");
  EXPECT_NE(error().find("not a Fulcrum profile"), std::string::npos);
  write("{\"format\": \"1\", \"points\": []}");
  EXPECT_NE(error().find("not a Fulcrum profile"), std::string::npos);
  write("{\"format\": 4, \"points\": []}");
  EXPECT_NE(error().find("profile format 4 is not known"), std::string::npos);
  write("[1, 2]");
  EXPECT_NE(error().find("not a Fulcrum profile"), std::string::npos);
  write("{\"format\": 1, \"points\": []}");
  EXPECT_NE(error().find("\"points\" must be a non-empty array"), std::string::npos);
  const std::string good =
      "\"device\": 0, \"fraction\": 0.5, \"aggregate\": 8, \"throughput_pps\": 1e6, "
      "\"p50_us\": 10, \"p99_us\": 20, \"power_w\": 50, \"idle_w\": 20, \"power_measured\": false";
  write("{\"format\": 1, \"points\": [{" + good + "}, {" + good + ", \"fraction\": 1.5}]}");
  const std::string e = error();
  EXPECT_NE(e.find(path_.string()), std::string::npos) << e;
  EXPECT_NE(e.find("point 1"), std::string::npos) << e;
  EXPECT_NE(e.find("\"fraction\""), std::string::npos) << e;
  write("{\"format\": 1, \"points\": [{\"device\": 0}]}");
  EXPECT_NE(error().find("point 0: \"fraction\" must be a number"), std::string::npos);
  std::string bad_aggregate = good;
  bad_aggregate.replace(bad_aggregate.find("\"aggregate\": 8"), 14, "\"aggregate\": 0");
  write("{\"format\": 1, \"points\": [{" + bad_aggregate + "}]}");
  EXPECT_NE(error().find("\"aggregate\" must be 1..256"), std::string::npos);
  write("{\"format\": 2, \"points\": [{" + good + ", \"rates\": [{\"offered_pps\": 1}]}]}");
  EXPECT_NE(error().find("point 0: rate 0: \"throughput_pps\" must be a number"),
            std::string::npos);
  write("{\"format\": 2, \"points\": [{" + good + ", \"rates\": 5}]}");
  EXPECT_NE(error().find("\"rates\" must be an array"), std::string::npos);
  write("{\"format\": 1, \"pipeline\": 7, \"devices\": [3], \"points\": [{" + good + "}]}");
  Result<Profile> odd_labels = read_profile(path_.string());
  ASSERT_TRUE(odd_labels.ok()) << odd_labels.error();
  EXPECT_EQ(odd_labels.value().pipeline, "");
}

TEST_F(ProfileFile, ADirectoryOrDeviceIsAnErrorNotAnException) {
  const fs::path dir = path_.string() + ".d";
  fs::create_directory(dir);
  Result<Profile> p = read_profile(dir.string());
  fs::remove(dir);
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.error().find("is a directory"), std::string::npos) << p.error();
  Result<Profile> zero = read_profile("/dev/zero");
  ASSERT_FALSE(zero.ok());
  EXPECT_NE(zero.error().find("not a regular file"), std::string::npos) << zero.error();
}

}  // namespace
}  // namespace fulcrum
