// PolicyScheduler through a synthetic size step shaped like the ones measured on the GPU hosts
// (issue 17; docs/benchmarks.md, "On a GPU"): no packets, no clock, the scheduler's own code fed
// 40 ms windows. Two profiles, each a run's measurement of the IPsec gateway on CUDA (points
// 0–6 at 114 B, 7–13 the same configurations at 1550 B): the H200's
// (docs/gpu-h200-2026-11-26b/adaptive_step-run8-flat-out-lambda.json; its points lie >= 20 %
// apart) and the H100's (docs/gpu-2026-11-26d/step3-1.json; points within 1-20 % of each other).
// Each configuration carries its profiled rate at the traffic's size, times uniform noise of
// ±NOISE, and for TRANSIENT seconds after the step only SLOW of it (what the H200 host did there:
// every 1500 B point 25–35 % under its profile for most of a second). 3 s before the step, 3 s
// after, energy policy, flat out, 200 seeds per scenario: the time from the step to the first
// window after which the profile point stays at its final value (docs/adaptive.md, "Step
// changes"), median, 90th percentile and worst, and how many seeds settle in under 300 ms.
// Dips (what the H100 hosts showed: a point that had settled carried 10-20 % less for 2-4
// windows, then its rate again): at every window a dip begins with probability 40 ms /
// DIP_EVERY_S (none under way), lasts 2-4 windows (uniform) and takes DIP_DEPTH off every
// configuration's rate. They run with LEARN_PERSIST 2 (the default), 3 and 4, and with
// SETTLED_PERSIST 0 (off: a point that carried its profile learns after LEARN_PERSIST too) and 5
// (the default). A late slowdown (LATE_SLOW from 1.5 s after the step to the end: a host that
// really got slower after the scheduler settled) shows what SETTLED_PERSIST costs: the
// settling is then counted to the move after the slowdown.
// Host spells (what the H200 host showed on 2026-11-27, on its profile of that day, points at
// 1550 B within 10 %): at every window a spell begins with probability 40 ms / 1.5 s (none
// under way), lasts 5-50 windows and takes 15-25 % off every configuration's rate. One
// configuration slower (the thesis' case): from 1.5 s after the step the configuration then in
// force runs at 0.7 of its rate to the end, the others do not. Both run with SETTLED_PERSIST 0,
// 5, and 5 with HOST_DRIFT, which settles the first and keeps the scheduler on the slowed
// configuration in the second: each row also gives the share of the best configuration's rate
// that the point in force carried over the last second (median over the seeds).
#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "runtime/balancing/policy_scheduler.hh"

namespace fulcrum::bench {
namespace {

constexpr double kWindowS = 0.04;
constexpr double kStepS = 3;
constexpr int kWindows = 150;
constexpr int kSeeds = 200;
constexpr double kSmallBytes = 114, kLargeBytes = 1550;
constexpr size_t kPerSize = 7;
constexpr int kMinDipWindows = 2, kMaxDipWindows = 4;

using Mpps = double[2][kPerSize];
constexpr Mpps kH200 = {{5.434, 5.333, 5.898, 5.485, 5.357, 7.013, 6.458},
                        {2.139, 2.076, 1.717, 1.668, 2.132, 2.562, 2.039}};
constexpr Mpps kH100 = {{5.69, 3.92, 4.023, 3.005, 3.457, 5.093, 4.008},
                        {2.071, 1.671, 2.1, 1.16, 1.189, 1.288, 1.889}};
constexpr Mpps kH200Today = {{3.864, 3.72, 3.673, 4.934, 4.857, 4.341, 5.311},
                             {1.537, 1.898, 1.827, 1.902, 1.835, 1.545, 1.797}};

Profile gpu_profile(const Mpps& mpps) {
  const double fraction[kPerSize] = {0, 0.25, 0.25, 0.5, 0.5, 1, 1};
  const uint32_t aggregate[kPerSize] = {1, 4, 32, 4, 32, 4, 32};
  Profile p;
  for (int size = 0; size < 2; ++size)
    for (size_t i = 0; i < kPerSize; ++i) {
      ProfilePoint q;
      q.fraction = fraction[i];
      q.aggregate = aggregate[i];
      q.throughput_pps = mpps[size][i] * 1e6;
      q.frame_bytes = size == 0 ? kSmallBytes : kLargeBytes;
      q.p50_us = 50;
      q.p99_us = 100;
      q.power_w = q.fraction > 0 ? 200 : 100;
      q.idle_w = q.fraction > 0 ? 160 : 80;
      p.points.push_back(q);
    }
  return p;
}

struct Scenario {
  double slow, transient_s, noise;
  double dip_every_s = 0, dip_depth = 0;  // dips: mean time between their starts (0: none)
  double late_slow = 1;                   // every rate from kLateSlowS after the step on
  bool spells = false;                    // host spells (the header)
  double own_slow = 1;  // the configuration in force at kLateSlowS after the step, from then on
};

constexpr double kLateSlowS = 1.5;
constexpr double kSpellEveryS = 1.5;
constexpr int kMinSpellWindows = 5, kMaxSpellWindows = 50;
constexpr double kMinSpellDepth = 0.15, kMaxSpellDepth = 0.25;
constexpr double kLastS = 1;  // the span whose carried share of the best rate is reported

// Milliseconds from the step until the point in force stops changing, one seeded run.
struct Run {
  const char* profile;
  Scenario sc;
  bool drift;
  uint32_t learn_persist, settled_persist;
  bool host_drift = false;
};

struct Outcome {
  double settle_ms = 0;
  double last_share = 0;  // of the best configuration's rate, over the last kLastS
};

// One seeded run: the settling (ms from the step until the point in force stops changing) and
// the share of the best rate carried at the end.
Outcome simulate(const Profile& profile, const Run& r, uint64_t seed) {
  const Scenario& sc = r.sc;
  PolicyConfig c;
  c.policy = Policy::kEnergy;
  c.drift = r.drift;
  c.learn_persist = r.learn_persist;
  c.settled_persist = r.settled_persist;
  c.host_drift = r.host_drift;
  PolicyScheduler s(profile, c);
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> factor(1 - sc.noise, 1 + sc.noise);
  std::uniform_real_distribution<double> uniform(0, 1);
  std::uniform_int_distribution<int> dip_windows(kMinDipWindows, kMaxDipWindows);
  std::uniform_int_distribution<int> spell_windows(kMinSpellWindows, kMaxSpellWindows);
  std::uniform_real_distribution<double> spell_depth(kMinSpellDepth, kMaxSpellDepth);
  int dip_left = 0, spell_left = 0;
  double spell = 1;
  size_t slowed = SIZE_MAX;  // the configuration of own_slow, once chosen
  std::vector<size_t> after;
  double carried = 0, best = 0;
  for (int k = 0; k < kWindows; ++k) {
    const double t = k * kWindowS;
    const bool large = t >= kStepS;
    // A configuration's rate in this window, without noise, at the traffic's size.
    const auto true_rate = [&](size_t config) {
      const size_t i = config % kPerSize + (large ? kPerSize : 0);
      double rate = profile.points[i].throughput_pps;
      if (large && t - kStepS < sc.transient_s) rate *= sc.slow;
      if (large && t - kStepS >= kLateSlowS) rate *= sc.late_slow;
      if (config % kPerSize == slowed) rate *= sc.own_slow;
      return rate * spell;
    };
    if (spell_left == 0 && sc.spells && uniform(rng) < kWindowS / kSpellEveryS) {
      spell_left = spell_windows(rng);
      spell = 1 - spell_depth(rng);
    }
    if (large && t - kStepS >= kLateSlowS && slowed == SIZE_MAX)
      slowed = s.current_index() % kPerSize;
    double rate = true_rate(s.current_index()) * factor(rng);
    if (t >= kWindows * kWindowS - kLastS) {
      double top = 0;
      for (size_t j = 0; j < kPerSize; ++j) top = std::max(top, true_rate(j));
      carried += true_rate(s.current_index());
      best += top;
    }
    if (spell_left > 0 && --spell_left == 0) spell = 1;
    if (dip_left == 0 && sc.dip_every_s > 0 && uniform(rng) < kWindowS / sc.dip_every_s)
      dip_left = dip_windows(rng);
    if (dip_left > 0) {
      rate *= 1 - sc.dip_depth;
      --dip_left;
    }
    BalanceWindow w;
    w.full_share = 1;
    w.rate_pps = rate;
    w.frame_bytes = large ? kLargeBytes : kSmallBytes;
    s.observe(w);
    if (large) after.push_back(s.current_index());
  }
  size_t k = after.size();
  while (k > 0 && after[k - 1] == after.back()) --k;
  return {static_cast<double>(k) * kWindowS * 1e3, best > 0 ? carried / best : 0};
}

std::string policy_step_sim(const BenchContext&) {
  std::vector<Run> runs;
  const Scenario plain[] = {{1, 0, 0.05},     {1, 0, 0.15},   {0.7, 0.7, 0.05},
                            {0.7, 0.7, 0.15}, {0.7, 3, 0.05}, {0.7, 3, 0.15}};
  for (const Scenario& sc : plain)
    for (const bool drift : {false, true})
      for (const uint32_t settled : {0u, 5u}) runs.push_back({"h200", sc, drift, 2, settled});
  // Profile right, ±5 % noise, dips of 15 % once a second on average (the H100 traces).
  const Scenario dips[] = {{1, 0, 0.05, 1, 0.15}, {0.7, 0.7, 0.05, 1, 0.15}};
  for (const char* profile : {"h200", "h100"})
    for (const Scenario& sc : dips) {
      for (const uint32_t persist : {2u, 3u, 4u}) runs.push_back({profile, sc, true, persist, 0});
      runs.push_back({profile, sc, true, 2, 5});
    }
  const Scenario late{1, 0, 0.05, 0, 0, 0.7};
  for (const char* profile : {"h200", "h100"})
    for (const uint32_t settled : {0u, 5u}) runs.push_back({profile, late, true, 2, settled});
  Scenario spells{1, 0, 0.05};
  spells.spells = true;
  Scenario own{1, 0, 0.05};
  own.own_slow = 0.7;
  for (const Scenario& sc : {spells, own})
    for (const char* profile : {"h200-2026-11-27", "h100"}) {
      runs.push_back({profile, sc, true, 2, 0});
      runs.push_back({profile, sc, true, 2, 5});
      runs.push_back({profile, sc, true, 2, 5, true});
    }
  std::vector<std::string> rows;
  for (const Run& r : runs) {
    const Scenario& sc = r.sc;
    const std::string name = r.profile;
    const Profile profile = gpu_profile(name == "h200"   ? kH200
                                        : name == "h100" ? kH100
                                                         : kH200Today);
    std::vector<double> ms, shares;
    for (int seed = 1; seed <= kSeeds; ++seed) {
      const Outcome o = simulate(profile, r, seed);
      ms.push_back(o.settle_ms);
      shares.push_back(o.last_share);
    }
    std::sort(ms.begin(), ms.end());
    const auto under = std::count_if(ms.begin(), ms.end(), [](double v) { return v < 300; });
    std::fprintf(stderr,
                 "policy_step_sim: %s profile, slow %.2f for %.1f s, noise ±%.0f %%, dips of "
                 "%.0f %% every %.1f s, late slow %.2f, host spells %s, one configuration "
                 "%.2f, DRIFT %s, LEARN_PERSIST %u, SETTLED_PERSIST %u, HOST_DRIFT %s: settles "
                 "median %.0f ms, p90 %.0f, worst %.0f; under 300 ms in %ld of %d; last second "
                 "%.3f of the best\n",
                 r.profile, sc.slow, sc.transient_s, sc.noise * 100, sc.dip_depth * 100,
                 sc.dip_every_s, sc.late_slow, sc.spells ? "yes" : "no", sc.own_slow,
                 r.drift ? "true" : "false", r.learn_persist, r.settled_persist,
                 r.host_drift ? "true" : "false", median(ms), ms[ms.size() * 9 / 10], ms.back(),
                 static_cast<long>(under), kSeeds, median(shares));
    rows.push_back(Obj()
                       .str("profile", r.profile)
                       .num("slow", sc.slow)
                       .num("transient_s", sc.transient_s)
                       .num("noise", sc.noise)
                       .num("dip_every_s", sc.dip_every_s)
                       .num("dip_depth", sc.dip_depth)
                       .raw("drift", r.drift ? "true" : "false")
                       .num("late_slow", sc.late_slow)
                       .raw("host_spells", sc.spells ? "true" : "false")
                       .num("one_configuration_slow", sc.own_slow)
                       .count("learn_persist", r.learn_persist)
                       .count("settled_persist", r.settled_persist)
                       .raw("host_drift", r.host_drift ? "true" : "false")
                       .num("settle_ms_median", median(ms))
                       .num("settle_ms_p90", ms[ms.size() * 9 / 10])
                       .num("settle_ms_worst", ms.back())
                       .count("under_300ms", static_cast<uint64_t>(under))
                       .count("seeds", kSeeds)
                       .num("last_second_share_of_best_median", median(shares))
                       .done());
  }
  return Obj()
      .str("what",
           "PolicyScheduler (energy policy, 40 ms windows) through a synthetic 114 -> 1550 B "
           "step on the H200 and H100 runs' profiles: a simulation of the scheduler's code, no "
           "packets")
      .raw("scenarios", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(99, "policy_step_sim", policy_step_sim);

}  // namespace fulcrum::bench
