// Re-convergence after a step change in traffic (issue 17's step experiments, bench
// `adaptive_step`): how long a balancer's decision takes to settle again, from its trace.
//
// The series is one value per observation window (w for AdaptiveBalancer, the profile point for
// PolicyBalancer), each stamped with the time its window ended. The windows after the step are
// those ending after `step_s`. Their final value is the median of the last `tail` share of them
// (at least one window). The decision has re-converged at the start of the first window after
// the step from which every later window is within `band` of the final value; the re-convergence
// time is that start minus the step, 0 when the decision never left the band. When the last
// window is itself out of the band (the median is an average the series never holds), it has not
// re-converged within the run.
// Two earlier moments are reported beside it: the reaction (the start of the first window after
// the step whose value differs from the last one before it by more than `band`) and the first
// arrival (the start of the first window after the step within `band` of the final value, even
// if the decision leaves the band again later: a balancer that reaches the new optimum at once
// and later wanders between points its profile rates within noise of each other arrives early
// and settles late).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <span>
#include <vector>

#include "core/median.hh"

namespace fulcrum {

struct Reconvergence {
  bool converged = false;
  double final_value = 0;
  double time_s = 0;         // from the step to the start of the settled run of windows
  size_t windows = 0;        // windows after the step until the settled run
  size_t after_step = 0;     // windows that ended after the step
  double max_excursion = 0;  // the largest |value - final| after the step
  bool reacted = false;      // some window after the step left the last value before it
  double reaction_s = 0;     // from the step to the start of that window
  bool arrived = false;      // some window after the step was within the band of the final value
  double arrival_s = 0;      // from the step to the start of the first such window
};

// `t_s` and `value` are the same length, t_s increasing.
inline Reconvergence reconvergence(std::span<const double> t_s, std::span<const double> value,
                                   double step_s, double band, double tail = 0.25) {
  Reconvergence r;
  const size_t n = std::min(t_s.size(), value.size());
  size_t first = 0;
  while (first < n && t_s[first] <= step_s) ++first;
  r.after_step = n - first;
  if (r.after_step == 0) return r;
  const size_t tail_n = std::max<size_t>(
      1, static_cast<size_t>(std::floor(static_cast<double>(r.after_step) * tail)));
  std::vector<double> last(value.begin() + static_cast<std::ptrdiff_t>(n - tail_n),
                           value.begin() + static_cast<std::ptrdiff_t>(n));
  r.final_value = median_in_place(last);
  size_t settled = n;  // the first window of the run that stays in the band
  for (size_t i = n; i-- > first;) {
    const double off = std::abs(value[i] - r.final_value);
    r.max_excursion = std::max(r.max_excursion, off);
    if (off > band) break;
    settled = i;
  }
  for (size_t i = first; i < settled; ++i)
    r.max_excursion = std::max(r.max_excursion, std::abs(value[i] - r.final_value));
  // The start of window i after the step: the end of the one before it, or the step itself.
  const auto start_of = [&](size_t i) {
    return std::max(0.0, (i == first ? step_s : t_s[i - 1]) - step_s);
  };
  for (size_t i = first; first > 0 && i < n; ++i)
    if (std::abs(value[i] - value[first - 1]) > band) {
      r.reacted = true;
      r.reaction_s = start_of(i);
      break;
    }
  for (size_t i = first; i < n; ++i)
    if (std::abs(value[i] - r.final_value) <= band) {
      r.arrived = true;
      r.arrival_s = start_of(i);
      break;
    }
  if (settled == n) return r;
  r.converged = true;
  r.windows = settled - first;
  r.time_s = start_of(settled);
  return r;
}

}  // namespace fulcrum
