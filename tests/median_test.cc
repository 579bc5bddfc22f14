// core/median.hh: the upper median of an even count, the middle one of an odd count, zero of an
// empty input; median() leaves its input as it was, median_in_place() works on a prefix.
#include "core/median.hh"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <span>
#include <string>
#include <vector>

namespace fulcrum {
namespace {

TEST(Median, OfAnOddCountIsTheMiddleSample) {
  EXPECT_EQ(median(std::vector<double>{7}), 7);
  EXPECT_EQ(median(std::vector<double>{9, 1, 5}), 5);
  EXPECT_EQ(median(std::vector<int>{4, 4, 1, 9, 4}), 4);
  EXPECT_EQ(median(std::vector<double>{3.5, -2, 10, 0, 8}), 3.5);
}

TEST(Median, OfAnEvenCountIsTheUpperOfTheTwoMiddleSamples) {
  EXPECT_EQ(median(std::vector<double>{2, 1}), 2);
  EXPECT_EQ(median(std::vector<double>{40, 10, 30, 20}), 30);  // not 25: a measured value
  EXPECT_EQ(median(std::vector<int>{6, 1, 5, 2, 4, 3}), 4);
}

TEST(Median, OfNothingIsZero) {
  EXPECT_EQ(median(std::vector<double>{}), 0);
  std::vector<float> none;
  EXPECT_EQ(median_in_place(none), 0.0f);
  EXPECT_EQ(median(std::vector<std::string>{}, [](const std::string& s) { return s.size(); }), 0);
}

TEST(Median, LeavesItsInputAsItWas) {
  const std::vector<double> samples = {5, 3, 9, 1, 7};
  EXPECT_EQ(median(samples), 5);
  EXPECT_EQ(samples, (std::vector<double>{5, 3, 9, 1, 7}));
  const std::array<double, 3> rounds = {3.0, 1.0, 2.0};
  EXPECT_EQ(median(rounds), 2.0);
  EXPECT_EQ(rounds, (std::array<double, 3>{3.0, 1.0, 2.0}));
}

TEST(Median, KeepsTheSampleType) {
  const std::vector<float> cycles = {1.25f, 0.5f, 3.0f};
  const float m = median(cycles);
  EXPECT_EQ(m, 1.25f);
}

TEST(Median, OfAKeyOverItems) {
  struct Run {
    double mpps;
    int id;
  };
  const std::vector<Run> runs = {{3.0, 0}, {1.0, 1}, {2.0, 2}, {5.0, 3}};
  EXPECT_EQ(median(runs, [](const Run& r) { return r.mpps; }), 3.0);
  EXPECT_EQ(median(runs, &Run::id), 2);
}

TEST(Median, InPlaceOnAPrefixLeavesTheRestAlone) {
  std::vector<int> v = {8, 2, 6, 4, 100, -100};
  EXPECT_EQ(median_in_place(std::span(v.data(), 4)), 6);
  EXPECT_EQ(v[4], 100);
  EXPECT_EQ(v[5], -100);
  std::vector<int> prefix(v.begin(), v.begin() + 4);
  std::sort(prefix.begin(), prefix.end());
  EXPECT_EQ(prefix, (std::vector<int>{2, 4, 6, 8}));  // reordered, not changed
}

TEST(Median, AgreesWithSortingForEverySizeUpTo64) {
  for (size_t n = 1; n <= 64; ++n) {
    std::vector<double> v(n);
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>((i * 37 + 11) % 101);
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    EXPECT_EQ(median(v), sorted[n / 2]) << n << " samples";
  }
}

}  // namespace
}  // namespace fulcrum
