#include "runtime/balancing/profile.hh"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>

#include "core/text_file.hh"

namespace fulcrum {
namespace {

using nlohmann::json;

// Format 2 added each point's "rates", format 3 its "frame_bytes"; formats 1 and 2 (without
// them) are still read.
constexpr int kFormat = 3;
constexpr int kOldestFormat = 1;

std::string text_field(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Result<double> number(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || !it->is_number())
    return make_error(where + ": \"" + key + "\" must be a number");
  const double v = it->get<double>();
  if (!std::isfinite(v) || v < 0)
    return make_error(where + ": \"" + key + "\" must be finite and >= 0");
  return v;
}

Result<ProfilePoint> read_point(const json& j, const std::string& where) {
  if (!j.is_object()) return make_error(where + ": a point is an object");
  ProfilePoint p;
  double* const fields[] = {&p.fraction, &p.throughput_pps, &p.p50_us,
                            &p.p99_us,   &p.power_w,        &p.idle_w};
  const char* const names[] = {"fraction", "throughput_pps", "p50_us",
                               "p99_us",   "power_w",        "idle_w"};
  for (size_t i = 0; i < std::size(fields); ++i) {
    Result<double> v = number(j, names[i], where);
    if (!v) return make_error(v.error());
    *fields[i] = v.value();
  }
  Result<double> device = number(j, "device", where);
  Result<double> aggregate = number(j, "aggregate", where);
  if (!device) return make_error(device.error());
  if (!aggregate) return make_error(aggregate.error());
  constexpr double kMaxDevice = 63, kMaxAggregate = 256;
  if (device.value() > kMaxDevice || device.value() != std::floor(device.value()))
    return make_error(where + ": \"device\" must be an index 0..63");
  if (aggregate.value() < 1 || aggregate.value() > kMaxAggregate ||
      aggregate.value() != std::floor(aggregate.value()))
    return make_error(where + ": \"aggregate\" must be 1..256");
  if (p.fraction > 1) return make_error(where + ": \"fraction\" must be in [0, 1]");
  if (p.throughput_pps <= 0) return make_error(where + ": \"throughput_pps\" must be > 0");
  if (p.idle_w > p.power_w) return make_error(where + ": \"idle_w\" is above \"power_w\"");
  p.device = static_cast<int32_t>(device.value());
  p.aggregate = static_cast<uint32_t>(aggregate.value());
  const auto measured = j.find("power_measured");
  if (measured == j.end() || !measured->is_boolean())
    return make_error(where + ": \"power_measured\" must be true or false");
  p.power_measured = measured->get<bool>();
  if (j.contains("frame_bytes")) {
    Result<double> bytes = number(j, "frame_bytes", where);
    if (!bytes) return make_error(bytes.error());
    p.frame_bytes = bytes.value();
  }
  const auto rates = j.find("rates");
  if (rates == j.end()) return p;
  if (!rates->is_array()) return make_error(where + ": \"rates\" must be an array");
  for (size_t i = 0; i < rates->size(); ++i) {
    const json& r = (*rates)[i];
    const std::string at = where + ": rate " + std::to_string(i);
    if (!r.is_object()) return make_error(at + ": a rate is an object");
    RateSample sample;
    double* const rfields[] = {&sample.offered_pps, &sample.throughput_pps, &sample.p50_us,
                               &sample.p99_us};
    const char* const rnames[] = {"offered_pps", "throughput_pps", "p50_us", "p99_us"};
    for (size_t k = 0; k < std::size(rfields); ++k) {
      Result<double> v = number(r, rnames[k], at);
      if (!v) return make_error(v.error());
      *rfields[k] = v.value();
    }
    if (sample.throughput_pps <= 0) return make_error(at + ": \"throughput_pps\" must be > 0");
    p.rates.push_back(sample);
  }
  std::sort(p.rates.begin(), p.rates.end(), [](const RateSample& a, const RateSample& b) {
    return a.throughput_pps < b.throughput_pps;
  });
  return p;
}

// Linear interpolation in `rate` over the rate samples' field `f`, ending at (sustained, top).
double along_rates(const ProfilePoint& p, double rate, double RateSample::*f, double top) {
  double x0 = 0, y0 = 0;
  bool have = false;
  for (const RateSample& r : p.rates) {
    if (r.throughput_pps >= p.throughput_pps) break;  // at the sustained point: use its figure
    if (rate <= r.throughput_pps) {
      if (!have) return r.*f;
      return y0 + (r.*f - y0) * (rate - x0) / (r.throughput_pps - x0);
    }
    x0 = r.throughput_pps;
    y0 = r.*f;
    have = true;
  }
  if (!have || rate >= p.throughput_pps) return top;
  return y0 + (top - y0) * (rate - x0) / (p.throughput_pps - x0);
}

}  // namespace

double ProfilePoint::p50_at(double rate_pps) const {
  return latency_scale * along_rates(*this, rate_pps, &RateSample::p50_us, p50_us);
}

double ProfilePoint::p99_at(double rate_pps) const {
  return latency_scale * along_rates(*this, rate_pps, &RateSample::p99_us, p99_us);
}

double ProfilePoint::power_at(double rate_pps) const {
  const double load = std::clamp(rate_pps / throughput_pps, 0.0, 1.0);
  return idle_w + (power_w - idle_w) * load;
}

Result<Profile> read_profile(const std::string& path) {
  constexpr size_t kMaxProfileBytes = size_t{64} << 20;
  Result<std::string> text = read_input_file(path, "the profile", kMaxProfileBytes);
  if (!text) return make_error(text.error());
  const json j = json::parse(text.value(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return make_error(path + ": not JSON");
  const auto format = j.is_object() ? j.find("format") : j.end();
  if (format == j.end() || !format->is_number_integer())
    return make_error(path + ": not a Fulcrum profile (no \"format\"; write one with `fulcrum " +
                      "profile`)");
  if (const int64_t f = format->get<int64_t>(); f < kOldestFormat || f > kFormat)
    return make_error(path + ": profile format " + std::to_string(f) + " is not known (this " +
                      "Fulcrum reads formats " + std::to_string(kOldestFormat) + " to " +
                      std::to_string(kFormat) + "; write it again with `fulcrum profile`)");
  Profile p;
  p.pipeline = text_field(j, "pipeline");
  p.traffic = text_field(j, "traffic");
  if (const auto d = j.find("devices"); d != j.end() && d->is_array())
    for (const json& label : *d)
      if (label.is_string()) p.devices.push_back(label.get<std::string>());
  const auto points = j.find("points");
  if (points == j.end() || !points->is_array() || points->empty())
    return make_error(path + ": \"points\" must be a non-empty array");
  for (size_t i = 0; i < points->size(); ++i) {
    Result<ProfilePoint> pt = read_point((*points)[i], path + ": point " + std::to_string(i));
    if (!pt) return make_error(pt.error());
    p.points.push_back(pt.value());
  }
  const auto sized = std::count_if(p.points.begin(), p.points.end(),
                                   [](const ProfilePoint& pt) { return pt.frame_bytes > 0; });
  if (sized != 0 && static_cast<size_t>(sized) != p.points.size())
    return make_error(path + ": \"frame_bytes\" must be given (> 0) for every point or for none");
  return p;
}

std::vector<double> size_classes(const std::vector<ProfilePoint>& points) {
  std::vector<double> sizes;
  for (const ProfilePoint& p : points)
    if (p.frame_bytes > 0) sizes.push_back(p.frame_bytes);
  if (sizes.empty()) return {0};
  std::sort(sizes.begin(), sizes.end());
  std::vector<double> classes;
  size_t first = 0;
  for (size_t i = 1; i <= sizes.size(); ++i) {
    if (i < sizes.size() && sizes[i] <= sizes[first] * (1 + kSizeClassTolerance)) continue;
    double sum = 0;
    for (size_t k = first; k < i; ++k) sum += sizes[k];
    classes.push_back(sum / static_cast<double>(i - first));
    first = i;
  }
  return classes;
}

size_t nearest_size_class(const std::vector<double>& classes, double frame_bytes) {
  if (frame_bytes <= 0 || classes.size() < 2) return 0;
  size_t best = 0;
  for (size_t i = 1; i < classes.size(); ++i)
    if (std::fabs(std::log(frame_bytes / classes[i])) <
        std::fabs(std::log(frame_bytes / classes[best])))
      best = i;
  return best;
}

Status write_profile(const Profile& profile, const std::string& path) {
  json points = json::array();
  for (const ProfilePoint& p : profile.points) {
    json rates = json::array();
    for (const RateSample& r : p.rates)
      rates.push_back({{"offered_pps", r.offered_pps},
                       {"throughput_pps", r.throughput_pps},
                       {"p50_us", r.p50_us},
                       {"p99_us", r.p99_us}});
    points.push_back({{"device", p.device},
                      {"fraction", p.fraction},
                      {"aggregate", p.aggregate},
                      {"throughput_pps", p.throughput_pps},
                      {"p50_us", p.p50_us},
                      {"p99_us", p.p99_us},
                      {"power_w", p.power_w},
                      {"idle_w", p.idle_w},
                      {"power_measured", p.power_measured},
                      {"frame_bytes", p.frame_bytes},
                      {"rates", rates}});
  }
  const json j = {{"format", kFormat},
                  {"pipeline", profile.pipeline},
                  {"traffic", profile.traffic},
                  {"devices", profile.devices},
                  {"points", points}};
  std::ofstream out(path);
  out << j.dump(2) << '\n';
  out.close();
  if (!out) return make_error(path + ": cannot write the profile");
  return {};
}

Result<Policy> parse_policy(const std::string& name) {
  if (name == "throughput") return Policy::kThroughput;
  if (name == "latency") return Policy::kLatency;
  if (name == "energy") return Policy::kEnergy;
  return make_error("POLICY must be throughput, latency or energy, not '" + name + "'");
}

const char* policy_name(Policy p) {
  switch (p) {
    case Policy::kThroughput:
      return "throughput";
    case Policy::kLatency:
      return "latency";
    case Policy::kEnergy:
      return "energy";
  }
  return "?";
}

double merit(const ProfilePoint& p, Policy policy, const Demand& demand) {
  switch (policy) {
    case Policy::kThroughput:
      return p.throughput_pps;
    case Policy::kLatency: {
      const double p99 = p.p99_at(std::min(demand.offered_pps, p.throughput_pps));
      return p99 > 0 ? 1 / p99 : std::numeric_limits<double>::infinity();
    }
    case Policy::kEnergy: {
      const double w = p.power_at(demand.offered_pps);
      return w > 0 ? 1 / w : std::numeric_limits<double>::infinity();
    }
  }
  return 0;
}

int choose(const std::vector<ProfilePoint>& points, Policy policy, const Demand& demand,
           double headroom, const std::vector<size_t>* among) {
  std::vector<size_t> all;
  if (among == nullptr) {
    all.resize(points.size());
    for (size_t i = 0; i < all.size(); ++i) all[i] = i;
    among = &all;
  }
  const auto p99 = [&](const ProfilePoint& p) {
    return p.p99_at(std::min(demand.offered_pps, p.throughput_pps));
  };
  const auto within_bound = [&](const ProfilePoint& p) {
    return demand.latency_bound_us <= 0 || p99(p) <= demand.latency_bound_us;
  };
  const auto carries = [&](const ProfilePoint& p) {
    return p.throughput_pps * headroom >= demand.offered_pps;
  };
  int best = -1;
  for (const size_t i : *among) {
    const ProfilePoint& p = points[i];
    if (!within_bound(p) || (policy != Policy::kThroughput && !carries(p))) continue;
    if (best < 0 || merit(p, policy, demand) > merit(points[best], policy, demand))
      best = static_cast<int>(i);
  }
  if (best >= 0) return best;
  // Nothing qualifies: the point closest to qualifying. Under a bound, the fastest point within
  // it, or the lowest p99 when none is; otherwise the fastest.
  const bool any_within =
      std::any_of(among->begin(), among->end(), [&](size_t i) { return within_bound(points[i]); });
  for (const size_t i : *among) {
    const ProfilePoint& p = points[i];
    if (any_within && !within_bound(p)) continue;
    const bool better = best < 0 || (any_within ? p.throughput_pps > points[best].throughput_pps
                                                : p99(p) < p99(points[best]));
    if (better) best = static_cast<int>(i);
  }
  return best;
}

}  // namespace fulcrum
