// The latency histogram behind RunOptions::latency: bucket bounds cover every value exactly
// once, percentiles agree with exact order statistics of the same samples (sorted copies,
// computed independently) within the histogram's 1/32 resolution, merging equals recording
// everything in one, and an empty histogram reads 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "runtime/latency.hh"

namespace fulcrum {
namespace {

constexpr double kResolution = 1.0 / LatencyHistogram::kSub;

TEST(LatencyHistogram, BucketsAreContiguousAndContainTheirValues) {
  for (size_t b = 0; b + 1 < LatencyHistogram::kBuckets; ++b) {
    const uint64_t lo = LatencyHistogram::lower_bound(b);
    const uint64_t next = LatencyHistogram::lower_bound(b + 1);
    ASSERT_LT(lo, next) << b;
    ASSERT_EQ(LatencyHistogram::bucket(lo), b);
    ASSERT_EQ(LatencyHistogram::bucket(next - 1), b);
  }
  EXPECT_EQ(LatencyHistogram::bucket(UINT64_MAX), LatencyHistogram::kBuckets - 1);
}

TEST(LatencyHistogram, PercentilesMatchExactOrderStatistics) {
  std::mt19937_64 rng(5);
  std::lognormal_distribution<double> dist(9.0, 1.2);  // around 8 us, a long tail
  std::vector<uint64_t> v(200000);
  LatencyHistogram h;
  for (uint64_t& x : v) {
    x = static_cast<uint64_t>(dist(rng));
    h.record(x);
  }
  std::sort(v.begin(), v.end());
  ASSERT_EQ(h.samples(), v.size());
  EXPECT_EQ(h.max(), v.back());
  for (double q : {0.5, 0.9, 0.99, 0.999}) {
    const auto rank = static_cast<size_t>(std::ceil(q * static_cast<double>(v.size()))) - 1;
    const double exact = static_cast<double>(v[rank]);
    EXPECT_NEAR(h.percentile(q), exact, exact * kResolution) << q;
  }
}

TEST(LatencyHistogram, SmallValuesAreExact) {
  LatencyHistogram h;
  for (uint64_t x = 1; x <= 40; ++x) h.record(x);
  EXPECT_EQ(h.percentile(0.5), 20);
  EXPECT_EQ(h.percentile(1.0), 40);
}

TEST(LatencyHistogram, MergeEqualsRecordingInOne) {
  LatencyHistogram a, b, all;
  for (uint64_t x = 0; x < 5000; ++x) {
    const uint64_t v = x * x % 100003;
    (x % 3 ? a : b).record(v);
    all.record(v);
  }
  a.merge(b);
  EXPECT_EQ(a.samples(), all.samples());
  EXPECT_EQ(a.max(), all.max());
  for (double q : {0.1, 0.5, 0.99}) EXPECT_EQ(a.percentile(q), all.percentile(q));
}

TEST(LatencyHistogram, EmptyReadsZero) {
  LatencyHistogram h;
  EXPECT_EQ(h.samples(), 0u);
  EXPECT_EQ(h.percentile(0.99), 0);
}

}  // namespace
}  // namespace fulcrum
