// FlowShader's flow scheduler, cost model fit and dynamic threshold (paper 004 §III-B, §IV):
// Alg. 1 against an exhaustive search over every partition index, the regression against known
// coefficients, the threshold's walk on a synthetic throughput curve, the policies' partitions.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "l7/flow/batch_manager.hh"
#include "l7/flow/scheduler.hh"

namespace fulcrum::l7 {
namespace {

// The partition index an exhaustive search finds: the smallest T_total, ties to the most device
// flows (where Alg. 1, walking down from N, stops).
size_t exhaustive(const std::vector<uint64_t>& sizes, size_t m, const CostModel& model) {
  size_t best = sizes.size();
  double t_min = total_ns(sizes, m, best, model);
  for (size_t p = sizes.size(); p-- > 0;) {
    const double t = total_ns(sizes, m, p, model);
    if (t < t_min) {
      t_min = t;
      best = p;
    }
  }
  return best;
}

std::vector<uint64_t> heavy_tailed(std::mt19937_64& rng, size_t n, double alpha) {
  std::vector<uint64_t> s(n);
  std::uniform_real_distribution<double> u(1e-9, 1.0);
  for (auto& x : s) x = static_cast<uint64_t>(32.0 * std::pow(u(rng), -1.0 / alpha));
  std::sort(s.begin(), s.end());
  return s;
}

TEST(L7Scheduler, Alg1FindsTheExhaustiveSearchPartitionOnMonotoneModels) {
  std::mt19937_64 rng(42);
  std::uniform_real_distribution<double> coef(0.01, 5.0);
  size_t cpu_share_nonzero = 0, all_device = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const size_t n = 1 + rng() % 300;
    const std::vector<uint64_t> sizes = heavy_tailed(rng, n, 0.8 + coef(rng) / 2);
    CostModel model;
    // k1 > 0 and positive sizes make T_GPU strictly increasing in the partition index and T_CPU
    // strictly decreasing (k5 > k4): T_total is then unimodal, where Alg. 1 is exact.
    model.c.k1 = coef(rng);
    model.c.b1 = coef(rng) * 1e3;
    model.c.k2 = coef(rng) * 10;
    model.c.k3 = coef(rng) * 100;
    model.c.k4 = coef(rng) * 0.1;
    model.c.k5 = model.c.k4 + coef(rng);
    model.c.b2 = coef(rng) * 1e3;
    model.n_sm = 1 + static_cast<uint32_t>(rng() % 80);
    const size_t m = n * (1 + rng() % 4);
    const size_t p = schedule_flows(sizes, m, model);
    ASSERT_EQ(p, exhaustive(sizes, m, model)) << "trial " << trial << " n " << n;
    cpu_share_nonzero += p < n;
    all_device += p == n;
  }
  // Both outcomes occur: the test covers splits and the all-device case.
  EXPECT_GT(cpu_share_nonzero, 200u);
  EXPECT_GT(all_device, 20u);
}

TEST(L7Scheduler, Alg1SendsTheLargestFlowsToTheCpuWhenTheyDominateTheDeviceTime) {
  // 1000 flows of 1 KiB and 5 of 4 MiB: the device's time is the largest flow's, so those go
  // to the CPU.
  std::vector<uint64_t> sizes(1000, 1024);
  for (int i = 0; i < 5; ++i) sizes.push_back(4u << 20);
  CostModel model;
  model.c = {0.08, 5e3, 20.0, 100, 0.1, 1.0, 1e3};
  model.n_sm = 56;
  EXPECT_EQ(schedule_flows(sizes, sizes.size(), model), 1000u);
}

TEST(L7Scheduler, PoliciesPartitionAsThePaperDescribes) {
  const std::vector<uint64_t> sizes = {50, 10, 40, 30, 20, 60, 70, 80, 90, 100};
  CostModel model;
  auto count = [](const std::vector<bool>& v) { return std::count(v.begin(), v.end(), true); };
  EXPECT_EQ(count(partition(*Policy::parse("cpu"), sizes, 10, model)), 0);
  EXPECT_EQ(count(partition(*Policy::parse("device"), sizes, 10, model)), 10);
  const std::vector<bool> f20 = partition(*Policy::parse("fixed:20"), sizes, 10, model);
  EXPECT_EQ(count(f20), 8);
  EXPECT_FALSE(f20[8]);  // 90 and 100: the two largest on the CPU
  EXPECT_FALSE(f20[9]);
  const std::vector<bool> rr = partition(*Policy::parse("round-robin"), sizes, 10, model);
  for (size_t i = 0; i < rr.size(); ++i) EXPECT_EQ(rr[i], i % 2 == 0);
  EXPECT_FALSE(Policy::parse("fixed:120").ok());
  EXPECT_FALSE(Policy::parse("fastest").ok());
  EXPECT_EQ(Policy::parse("fixed:10")->name(), "fixed:10");
  EXPECT_EQ(Policy::parse("round-robin")->name(), "round-robin");
}

TEST(L7Scheduler, RegressionRecoversKnownCoefficientsFromNoisySamples) {
  std::mt19937_64 rng(9);
  std::normal_distribution<double> noise(0.0, 0.01);  // 1 % multiplicative noise
  CostModel truth;
  truth.c = {0.08, 7e3, 3.5, 150, 0.3, 1.7, 2e3};
  truth.n_sm = 56;
  CostModel model;  // starts from the defaults, far from the truth
  model.n_sm = truth.n_sm;
  CostFit fit(200);
  for (int round = 0; round < 200; ++round) {
    const size_t n_gpu = 1 + rng() % 8000;
    const uint64_t largest = 64 + rng() % (1u << 20);
    const uint64_t s_g = n_gpu * (32 + rng() % 2048) + largest;
    const size_t m = 32 + rng() % 4000;
    const uint64_t s_c = rng() % (8u << 20);
    const double g = truth.gpu_ns(n_gpu, largest, s_g) * (1 + noise(rng));
    const double c = truth.cpu_ns(m, s_g, s_c) * (1 + noise(rng));
    fit.add_round(model, n_gpu, largest, s_g, m, s_c, g, c);
    EXPECT_EQ(fit.maybe_refit(model), round == 199);
  }
  EXPECT_EQ(fit.fits(), 1u);
  auto near = [](double got, double want, double rel) {
    return std::abs(got - want) <= rel * want;
  };
  EXPECT_PRED3(near, model.c.k1, truth.c.k1, 0.05);
  EXPECT_PRED3(near, model.c.k2, truth.c.k2, 0.05);
  EXPECT_PRED3(near, model.c.k3, truth.c.k3, 0.10);
  EXPECT_PRED3(near, model.c.k4, truth.c.k4, 0.10);
  EXPECT_PRED3(near, model.c.k5, truth.c.k5, 0.05);
  // The intercepts are small next to the byte terms: looser.
  EXPECT_PRED3(near, model.c.b1, truth.c.b1, 0.5);
}

TEST(L7Scheduler, RegressionKeepsCoefficientsTheSamplesDoNotDetermine) {
  // Every round all on the device: S_c is always 0, so k5 cannot be fitted and stays.
  CostModel model;
  model.c.k5 = 1.25;
  CostFit fit(10);
  for (int r = 0; r < 10; ++r)
    fit.add_round(model, 100 + r, 1000 + 10 * r, 50000 + 777 * r, 200 + 3 * r, 0, 1e4 + 5 * r * r,
                  2e3 + 100 * r);
  ASSERT_TRUE(fit.maybe_refit(model));
  EXPECT_NEAR(model.c.k5, 1.25, 1e-6);
  EXPECT_GE(model.c.k1, 0);
  EXPECT_GE(model.c.k2, 0);
}

TEST(L7Scheduler, LinearFitSolvesAnExactSystemUpToTheRidge) {
  // y = 2 x0 - 3 x1 + 5, exactly.
  std::vector<double> x, y;
  for (int i = 0; i < 20; ++i) {
    const double a = i, b = (i * 7) % 11;
    x.insert(x.end(), {a, b, 1.0});
    y.push_back(2 * a - 3 * b + 5);
  }
  // The ridge pulls each coefficient towards the prior by about 0.1 %: from a prior of zero
  // the fit is within 1 %; from the true values as prior, exact.
  const std::vector<double> zero = {0, 0, 0}, truth = {2, -3, 5};
  const std::vector<double> beta = fit_linear(x, y, zero);
  EXPECT_NEAR(beta[0], 2, 0.02);
  EXPECT_NEAR(beta[1], -3, 0.03);
  EXPECT_NEAR(beta[2], 5, 0.05);
  const std::vector<double> exact = fit_linear(x, y, truth);
  for (size_t i = 0; i < 3; ++i) EXPECT_NEAR(exact[i], truth[i], 1e-6);
}

TEST(L7DynamicThreshold, StartsAt32AndClimbsWhileThroughputRises) {
  DynamicThreshold t;
  EXPECT_EQ(t.value(), 32u);
  EXPECT_TRUE(t.plus());
  t.update(100);  // no previous period: one step plus
  EXPECT_EQ(t.value(), 64u);
  t.update(110);  // +10 % > 0.5 %: same direction
  EXPECT_EQ(t.value(), 96u);
  t.update(110.4);  // +0.36 %: within r_thresh, unchanged
  EXPECT_EQ(t.value(), 96u);
  t.update(100);  // -9.4 %: flip to minus and step
  EXPECT_EQ(t.value(), 64u);
  EXPECT_FALSE(t.plus());
  t.update(120);  // better: keep going minus
  EXPECT_EQ(t.value(), 32u);
  t.update(130);  // still minus, but never below one step
  EXPECT_EQ(t.value(), 32u);
}

TEST(L7DynamicThreshold, SettlesNearThePeakOfAThroughputCurve) {
  // Throughput rises to a peak at 1024 and falls after it (Fig. 13's shape).
  auto curve = [](double th) { return 1e6 * (1 - std::pow((th - 1024) / 2048, 2)); };
  DynamicThreshold t;
  std::vector<uint32_t> seen;
  for (int period = 0; period < 200; ++period) {
    t.update(curve(t.value()));
    seen.push_back(t.value());
  }
  // It climbs in steps of 32 from 32 and stops where one step changes the throughput by less
  // than r_thresh (0.5 %): here 736, at 98 % of the peak.
  for (size_t i = 1; i < seen.size(); ++i) {
    const int64_t d = int64_t{seen[i]} - int64_t{seen[i - 1]};
    EXPECT_TRUE(d == 0 || d == 32 || d == -32) << i;
  }
  EXPECT_EQ(seen.back(), 736u);
  EXPECT_GT(curve(seen.back()), 0.98 * curve(1024));
}

TEST(L7DynamicThreshold, DispatchRuleFiresOnCountOrTimeout) {
  DispatchRule r;
  EXPECT_EQ(r.timeout_ns, 100 * kNsPerMs);
  r.threshold = 10;
  EXPECT_FALSE(r.due(0, 0, 1ull << 40));
  EXPECT_FALSE(r.due(9, 1000, 1000 + 100 * kNsPerMs - 1));
  EXPECT_TRUE(r.due(9, 1000, 1000 + 100 * kNsPerMs));
  EXPECT_TRUE(r.due(10, 1000, 1000));
}

TEST(L7DynamicThreshold, MeterReportsOncePerPeriod) {
  ThroughputMeter m(1000000);
  EXPECT_LT(m.add(1, 10), 0);
  EXPECT_LT(m.add(500000, 10), 0);
  EXPECT_NEAR(m.add(1000001, 10), 30.0 * 1e9 / 1000000, 1e-6);
  EXPECT_LT(m.add(1500000, 5), 0);
}

}  // namespace
}  // namespace fulcrum::l7
