// Re-convergence after a step (runtime/balancing/reconvergence.hh) on synthetic series whose
// answer is known by construction.
#include "runtime/balancing/reconvergence.hh"

#include <gtest/gtest.h>

#include <vector>

namespace fulcrum {
namespace {

constexpr double kWindow = 0.02;
constexpr double kStep = 0.04;  // NBA's delta: a probe moves w this far
constexpr double kBand = 1.5 * kStep;

struct Series {
  std::vector<double> t, v;
  void add(double value) {
    t.push_back(kWindow * static_cast<double>(t.size() + 1));
    v.push_back(value);
  }
};

TEST(Reconvergence, ClimbAfterTheStepWithProbes) {
  // w at 0.2 (probing 0.24 every fourth window) until the step at 1.01 s (mid-window: the 50th
  // window ends at 1.00 s), then a climb of 0.04 a window to 0.6, reached in the window ending at
  // 1.2 s, then probes.
  Series s;
  for (int i = 0; i < 50; ++i) s.add(i % 4 == 3 ? 0.24 : 0.2);
  for (int i = 1; i <= 10; ++i) s.add(0.2 + kStep * i);
  for (int i = 0; i < 100; ++i) s.add(i % 4 == 3 ? 0.56 : 0.6);
  const Reconvergence r = reconvergence(s.t, s.v, 1.01, kBand);
  ASSERT_TRUE(r.converged);
  EXPECT_DOUBLE_EQ(r.final_value, 0.6);
  // In the band from w = 0.56 (> 0.54): the 9th window after the step, which starts at 1.16 s.
  EXPECT_EQ(r.windows, 8u);
  EXPECT_NEAR(r.time_s, 0.15, 1e-9);
  EXPECT_EQ(r.after_step, 110u);
  EXPECT_NEAR(r.max_excursion, 0.36, 1e-9);
  // 0.24 is within the band of the 0.2 before the step; 0.28, the second window, is not.
  ASSERT_TRUE(r.reacted);
  EXPECT_NEAR(r.reaction_s, 0.01, 1e-9);
  ASSERT_TRUE(r.arrived);
  EXPECT_NEAR(r.arrival_s, r.time_s, 1e-9);
}

TEST(Reconvergence, NeverLeavingTheBandIsZero) {
  Series s;
  for (int i = 0; i < 100; ++i) s.add(i % 5 == 0 ? 0.04 : 0);
  const Reconvergence r = reconvergence(s.t, s.v, 1.01, kBand);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.final_value, 0);
  EXPECT_EQ(r.windows, 0u);
  EXPECT_EQ(r.time_s, 0);
  EXPECT_FALSE(r.reacted);
  ASSERT_TRUE(r.arrived);
  EXPECT_EQ(r.arrival_s, 0);
}

TEST(Reconvergence, ALateExcursionCounts) {
  // Settled at once, but one window far off late in the run: re-converged only after it.
  Series s;
  for (int i = 0; i < 100; ++i) s.add(i == 80 ? 0.5 : 0.1);
  const Reconvergence r = reconvergence(s.t, s.v, 1.01, kBand);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.windows, 31u);  // windows 50..80 end after the step; window 81 starts at 1.62 s
  EXPECT_NEAR(r.time_s, 0.61, 1e-9);
  EXPECT_NEAR(r.max_excursion, 0.4, 1e-9);
  // It was at its final value from the first window and left it only for the excursion.
  ASSERT_TRUE(r.arrived);
  EXPECT_EQ(r.arrival_s, 0);
  ASSERT_TRUE(r.reacted);
  EXPECT_NEAR(r.reaction_s, 0.59, 1e-9);
}

TEST(Reconvergence, DiscreteChoiceWithAZeroBand) {
  // PolicyBalancer's profile point: 0 until the step at 0.51 s, then 3, 1, 2 for a few windows,
  // then 2.
  Series s;
  for (int i = 0; i < 25; ++i) s.add(0);
  for (double c : {3.0, 1.0, 2.0, 1.0}) s.add(c);
  for (int i = 0; i < 30; ++i) s.add(2);
  const Reconvergence r = reconvergence(s.t, s.v, 0.51, 0);
  ASSERT_TRUE(r.converged);
  EXPECT_EQ(r.final_value, 2);
  EXPECT_EQ(r.windows, 4u);
  EXPECT_NEAR(r.time_s, 0.07, 1e-9);
  // It reacted in the window the step fell in, reached 2 in the third and left it once more.
  ASSERT_TRUE(r.reacted);
  EXPECT_EQ(r.reaction_s, 0);
  ASSERT_TRUE(r.arrived);
  EXPECT_NEAR(r.arrival_s, 0.03, 1e-9);
}

TEST(Reconvergence, StillMovingAtTheEndIsNotConverged) {
  // A ramp that never stops: the tail's median is a value the last window is not at.
  Series s;
  for (int i = 0; i < 60; ++i) s.add(i < 20 ? 0 : 0.02 * (i - 20));
  const Reconvergence r = reconvergence(s.t, s.v, 0.41, 0.01);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.after_step, 40u);
}

TEST(Reconvergence, NoWindowAfterTheStep) {
  Series s;
  for (int i = 0; i < 10; ++i) s.add(0.3);
  const Reconvergence r = reconvergence(s.t, s.v, 5.0, kBand);
  EXPECT_FALSE(r.converged);
  EXPECT_EQ(r.after_step, 0u);
  EXPECT_FALSE(r.reacted);
  EXPECT_FALSE(r.arrived);
}

}  // namespace
}  // namespace fulcrum
