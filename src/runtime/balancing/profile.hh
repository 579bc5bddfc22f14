// A pipeline's profile (the thesis, paper 001 §5.1): every configuration `fulcrum profile`
// measured — which device takes the offloaded batches, the share w of batches it takes, and the
// device batch size (batches per task, the offloadable elements' AGGREGATE) — with its sustained
// throughput, RX-to-TX latency and power. The thesis keeps one red-black tree per metric; a
// profile is a few dozen points, so a scan does the same lookups. docs/adaptive.md documents the
// file (JSON).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/result.hh"

namespace fulcrum {

// A configuration measured at an offered rate below its maximum (`fulcrum profile --rates`).
struct RateSample {
  double offered_pps = 0;         // what the generator offered
  double throughput_pps = 0;      // what the configuration carried
  double p50_us = 0, p99_us = 0;  // RX-to-TX latency there
};

struct ProfilePoint {
  int32_t device = 0;             // index in `fulcrum devices` order, for the offloaded batches
  double fraction = 0;            // share of batches offloaded, 0..1
  uint32_t aggregate = 1;         // batches per device task
  double throughput_pps = 0;      // sustained (the generator flat out)
  double p50_us = 0, p99_us = 0;  // RX-to-TX latency at that rate
  // Mean length of the packets reaching the balancer, bytes (format 3, `fulcrum profile
  // --sizes`); 0: not recorded (formats 1 and 2), the point holds at every size.
  double frame_bytes = 0;
  // Power at the sustained rate and with no traffic, of the devices the configuration keeps on
  // (the CPU cores always, the device when w > 0); `power_measured` false: modelled.
  double power_w = 0, idle_w = 0;
  bool power_measured = false;
  // The same configuration at offered rates below throughput_pps, ascending by throughput_pps;
  // empty in a profile without them (format 1, `--rates none`).
  std::vector<RateSample> rates;
  // Not in the file: the factor the policy scheduler has learned its latency to be off by
  // (measured p99 / predicted p99), 1 until it measures otherwise.
  double latency_scale = 1;

  // RX-to-TX latency when carrying `rate_pps`: linear between the rates measured, the sustained
  // point the last; below the lowest rate, the lowest's; at or above the sustained rate, the
  // sustained point's. Times latency_scale.
  double p50_at(double rate_pps) const;
  double p99_at(double rate_pps) const;

  // Watts at `rate_pps` (at most the sustained rate): linear between idle and the sustained
  // point (the thesis' utilization-based model).
  double power_at(double rate_pps) const;
};

struct Profile {
  std::string pipeline;  // what was profiled (informational)
  std::string traffic;
  std::vector<std::string> devices;  // labels, in index order
  std::vector<ProfilePoint> points;
};

// The packet sizes a profile was measured at (`fulcrum profile --sizes`): the points' frame_bytes,
// those within kSizeClassTolerance of the smallest in a group one class, each class the mean of
// its points' sizes, ascending. A profile without sizes (frame_bytes 0) has one class, 0.
inline constexpr double kSizeClassTolerance = 0.1;
std::vector<double> size_classes(const std::vector<ProfilePoint>& points);
// The class nearest to `frame_bytes` on a log scale (64 B is as far from 128 B as 750 B from
// 1500 B); 0 for a size <= 0 or a single class.
size_t nearest_size_class(const std::vector<double>& classes, double frame_bytes);

// Errors name the file and, for a bad point, its index and field.
Result<Profile> read_profile(const std::string& path);
Status write_profile(const Profile& profile, const std::string& path);

enum class Policy { kThroughput, kLatency, kEnergy };
Result<Policy> parse_policy(const std::string& name);
const char* policy_name(Policy p);

// What a configuration must do: carry `offered_pps` with headroom, and keep p99 under
// `latency_bound_us` (0: no bound).
struct Demand {
  double offered_pps = 0;
  double latency_bound_us = 0;
};

// The point the policy prefers for `demand` (paper 001 §5.2 step 1), an index into `points`:
//   throughput: the highest throughput;
//   latency:    the lowest p99 at the offered rate among the points that carry it;
//   energy:     the lowest power at the offered rate among the points that carry it.
// A latency bound first keeps only the points whose p99 at the offered rate (p99_at, at most
// their sustained rate) is under it (for throughput: latency-bounded throughput). When no point
// qualifies, the one closest to qualifying: the highest throughput, or under a bound the lowest
// p99. `headroom` is the share of its throughput a point may be loaded to (0.9: it carries 90 % of
// its sustained rate). `among`: only these indices (the points of one size class); nullptr: all.
// No point to choose from: -1.
int choose(const std::vector<ProfilePoint>& points, Policy policy, const Demand& demand,
           double headroom, const std::vector<size_t>* among = nullptr);

// The policy's figure of merit for `p` at `demand` (higher is better), for the λ comparison.
double merit(const ProfilePoint& p, Policy policy, const Demand& demand);

}  // namespace fulcrum
