// Offline profiling (the thesis, paper 001 §5.1): the pipeline run once per configuration with
// its one balancer (FixedFraction, AdaptiveBalancer, PolicyBalancer, CPUOnly or DeviceOnly)
// replaced by FixedFraction(w, DEVICE d, AGGREGATE a): the CPU alone, then every device × share
// × device batch size. Each run gives the sustained throughput (transmitted packets per second
// over its second half), RX-to-TX latency p50/p99, and power: RAPL where the machine exposes it,
// else the model below, marked `power_measured = false`; then, with the generator paced to
// shares of that throughput (ProfileSweep::rates), the throughput and latency at each rate. Used by
// `fulcrum profile` and the policy benchmark; docs/adaptive.md documents the result (the profile
// file).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "core/config/ast.hh"
#include "runtime/balancing/profile.hh"
#include "runtime/energy_model.hh"
#include "runtime/runtime.hh"

namespace fulcrum {

struct ProfileSweep {
  std::vector<double> fractions = {0.25, 0.5, 0.75, 1};  // w > 0, on every device
  std::vector<uint32_t> aggregates = {1, 4, 16, 32};
  double seconds = 0.5;  // per configuration
  // Offered rates below the maximum, as shares of the configuration's measured throughput: each
  // a run of its own with the generator ports paced (gen:...,rate=); empty: none.
  std::vector<double> rates = {0.2, 0.5, 0.8};
  double rate_seconds = 0;       // per rate; 0: half of `seconds`
  std::vector<int32_t> devices;  // indices in `fulcrum devices` order; empty: every device
  // Frame sizes, bytes: the whole sweep once per size, every generator port sending frames of
  // that size (gen:...,size=); empty: the traffic as given. Each point records the mean length
  // of the packets reaching the balancer (ProfilePoint::frame_bytes) in any case.
  std::vector<uint32_t> sizes;
  // Watts where RAPL cannot be read (runtime/energy_model.hh's point_power): the workers poll,
  // so their cores count busy whatever the load; the device counts idle plus its busy share
  // (tasks × device time / run time) of the difference; plus each one's joules per packet.
  EnergyModel energy = EnergyModel::defaults();
};

bool is_balancer_class(const std::string& class_name);
// True when one of `ports` is the traffic generator (gen:...), which --rates paces.
bool has_generator(const std::vector<std::string>& ports);
// `ports` with every generator port offering an equal share of `total_pps` (its rate= set).
std::vector<std::string> paced_ports(const std::vector<std::string>& ports, double total_pps);
// `ports` with every generator port sending `bytes`-byte frames (its size= set, any step
// removed).
std::vector<std::string> sized_ports(const std::vector<std::string>& ports, uint32_t bytes);
// An error unless `config` holds exactly one balancer.
Status check_one_balancer(const PipelineConfig& config);

// Profiles the pipeline of `base` (its ports, workers, batch) on the devices offload discovery
// finds now. `on_point` sees every point as it is measured. The EAL must be up.
Result<Profile> profile_pipeline(const RunOptions& base, const ProfileSweep& sweep,
                                 const std::function<void(const ProfilePoint&)>& on_point = {});

}  // namespace fulcrum
