// The median of measured samples, one definition for every figure that reports one: benchmark
// rounds, calibration probes, a balancer's windows.
//
// Convention: the upper median. Of an even count it is the sample at index n / 2 of the sorted
// samples (of 4: the 3rd smallest), never the mean of the two middle ones, so the result is a
// value that was measured (a run that happened, not an average no run held). Of an empty input it
// is the value type's zero (T{}; 0 for numbers): callers that must tell "no sample" apart check
// emptiness themselves.
//
//   median(samples)               copies, so `samples` is left as it was (any input range)
//   median(items, key)            the median of key(item) over items, as double
//   median_in_place(samples)      no copy: reorders `samples` (std::nth_element, O(n)); for a
//                                 prefix, pass a subrange (std::span(v.data(), n))
#pragma once

#include <algorithm>
#include <functional>
#include <iterator>
#include <ranges>
#include <vector>

namespace fulcrum {

// A range median_in_place can reorder: random access, size known.
template <class R>
concept SampleRange = std::ranges::random_access_range<R> && std::ranges::sized_range<R>;

template <SampleRange R>
std::ranges::range_value_t<R> median_in_place(R&& samples) {
  const auto n = std::ranges::size(samples);
  if (n == 0) return {};
  const auto mid =
      std::ranges::begin(samples) + static_cast<std::ranges::range_difference_t<R>>(n / 2);
  std::ranges::nth_element(samples, mid);
  return *mid;
}

template <std::ranges::input_range R>
std::ranges::range_value_t<R> median(const R& samples) {
  std::vector<std::ranges::range_value_t<R>> copy;
  for (const auto& s : samples) copy.push_back(s);
  return median_in_place(copy);
}

template <std::ranges::input_range R, class Key>
double median(const R& items, Key&& key) {
  std::vector<double> values;
  for (const auto& item : items) values.push_back(static_cast<double>(std::invoke(key, item)));
  return median_in_place(values);
}

}  // namespace fulcrum
