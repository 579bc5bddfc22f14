// PolicyBalancer — the thesis' policy scheduler: device mix and batch size from a profile.
// Picks the configuration (device, offloaded share w, device batch size) that a profile written
// by `fulcrum profile` says is best for the policy at the measured rate, then adapts online
// (paper 001 §5.2; runtime/balancing/policy_scheduler.hh has the algorithm, docs/adaptive.md
// the file).
//
// Ports:     input 0: any batch. output 0: the same batch, unchanged.
// Uses:      the batch's rx_tsc.  Sets: timestamp_ns of the packets it samples; the batch's
//            device decision (DEVICE of the configuration with probability w, else CPU) and
//            device batch size (batch annotation `aggregate`: the offloadable elements
//            downstream close their tasks at that many batches, at most their own AGGREGATE).
// Counters:  offloaded, kept (batches); config (index of the profile point in force),
//            fraction_permille, aggregate, rate_pps (all workers, last window), windows,
//            switches, grows, shrinks, learned (profile points updated from measurement),
//            drifts (two points learned alike scaled the unmeasured ones, DRIFT);
//            p99_ns (the last online p99 estimate), predicted_p99_ns (the profile's for it, at
//            the measured rate), latency_replans (estimates outside the band that made a point
//            learn its latency), latency_samples (behind the last estimate); frame_bytes (mean
//            packet length of the last window, with a profile of several sizes), size_class_bytes
//            (the profile's size in force: 0 for a profile without sizes), size_switches.
// Offload:   every replica (all workers) shares one scheduler, steered by the packets per
//            second through the balancer and the share of batches that arrive full (the input
//            is backlogged), and the p99 of sampled packets (SAMPLE: one packet of every SAMPLE
//            batches carries its batch's RX time in timestamp_ns; the worker times it at TX;
//            a window's p99 needs 100 samples; SAMPLE auto, the default, sets the interval each
//            window for about 400 samples in the next). Set AFFINITY on the offloadable element so
//            that a flow keeps its processor while the mix moves and is never reordered. A profile
//            point offloading to a device the run does not have is a configuration error; a run
//            with no device at all runs every batch on the CPU, with a note. With a profile
//            measured at several packet sizes (`fulcrum profile --sizes`) it sums the lengths
//            of the packets it passes (one load a packet) and plans among the points of the
//            size nearest the window's mean (SIZE_PERSIST windows in a row to move). The first
//            WARMUP (3) windows of the run only watch: start-up is no measure of a point.
// Energy:    the thesis powers an unused GPU off; a process cannot, but it can give the device
//            back to its driver (a CUDA context held idle keeps a GPU at its boost clock: 45 W
//            measured on an H200, docs/benchmarks.md). With POLICY energy the devices of the
//            profile are released after RELEASE_IDLE_MS (1000) with nothing to do, and taken
//            back by the next task (docs/offload.md, "Releasing an idle device"); the other
//            policies leave the run's --release-idle-ms unless RELEASE_IDLE_MS is given. Not on
//            machines with several NUMA nodes (a note says so).
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/element.hh"
#include "core/registry.hh"
#include "elements/balance/shared_balancer_element.hh"
#include "runtime/balancing/policy_scheduler.hh"

namespace fulcrum {

class PolicyBalancer final : public SharedBalancerElement<PolicyBalancer, PolicyScheduler> {
 public:
  static constexpr ElementTraits kTraits{"PolicyBalancer", 1, 1, {}};
  static constexpr const char* kTraceHeader =
      "time_s rate_pps full_share fraction device aggregate config p99_us frame_bytes";
  static int trace_row(std::FILE* f, const TracePoint& p) {
    return std::fprintf(f, "%.4f %.0f %.3f %.4f %d %u %d %.1f %.1f\n", p.t_s, p.window.rate_pps,
                        p.window.full_share, p.choice.fraction, p.choice.device, p.choice.aggregate,
                        p.choice.config, p.window.p99_us, p.window.frame_bytes);
  }
  // A window's p99 needs this many samples; fewer count toward the next window's.
  static constexpr uint64_t kMinLatencySamples = 100;
  // SAMPLE auto: the samples a window aims for (each window sets the next one's interval).
  static constexpr uint64_t kTargetLatencySamples = 400;

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void counters(std::vector<Counter>& out) const override;

 private:
  // Applies RELEASE_IDLE_MS to the devices the profile's points use (`used`, by index).
  void release_devices(const InitContext& ctx, const std::vector<bool>& used) const;

  std::string profile_file_;
  PolicyConfig policy_;
  double window_ms_ = 40;
  uint32_t sample_every_ = 1;     // SAMPLE as a number
  bool sample_auto_ = true;       // SAMPLE auto
  int64_t release_idle_ms_ = -1;  // -1: kEnergyReleaseMs with POLICY energy, else the run's
  static constexpr int64_t kEnergyReleaseMs = 1000;
  static constexpr uint32_t kWarmupWindows = 3;
};

FULCRUM_REGISTER_ELEMENT(PolicyBalancer);

}  // namespace fulcrum
