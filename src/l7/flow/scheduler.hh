// The flow scheduler (paper 004 §IV): which of a round's flows the CPU processes and which the
// device, so that the round's completion time T_total = max(T_CPU, T_GPU) is smallest.
//
//   CostModel      §IV-B's model of a round, nanoseconds:
//                    T_GPU = k2 * ceil((N / N_block) / N_sm) * M + 2 * k1 * S_g + 2 * b1
//                    T_CPU = k3 * m + k4 * S_g + k5 * S_c + b2
//                  N flows and S_g bytes on the device, M the largest device flow's bytes, m the
//                  round's messages, S_c the CPU's bytes. No flow on the device: T_GPU = 0.
//   schedule_flows §IV-C Alg. 1: flow sizes in ascending order; the smallest p go to the device,
//                  the rest to the CPU. Starts with every flow on the device and moves the
//                  largest to the CPU one at a time while T_total decreases. O(N) after the sort.
//   CostFit        the coefficients refitted by linear regression from measured rounds, every
//                  `refit_rounds` rounds (the paper: 200): T_GPU against (R * M, S_g, 1), T_CPU
//                  against (m, S_g, S_c, 1); a coefficient the samples do not determine (a
//                  feature that never varied) keeps its previous value; none goes negative.
//   Policy         flowshader (Alg. 1) and the paper's baselines (§VI): cpu (CPU only), device
//                  (GPU only), fixed:X (the X % largest flows to the CPU), round-robin (flows
//                  alternately, in the order given).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"

namespace fulcrum::l7 {

struct CostCoefficients {
  double k1 = 0.1;   // ns per byte copied (each way)
  double b1 = 10e3;  // ns per copy
  double k2 = 1.0;   // ns per byte of the largest device flow, per wave of thread blocks
  double k3 = 200;   // ns per message received
  double k4 = 0.2;   // ns per byte batched for the device
  double k5 = 1.0;   // ns per byte processed on the CPU
  double b2 = 1e3;   // ns per round
};

struct CostModel {
  CostCoefficients c;
  uint32_t n_block = 64;  // work items per group (FlowShader: 64)
  uint32_t n_sm = 1;      // compute units of the device

  // ceil((N / N_block) / N_sm): waves of thread blocks.
  double waves(size_t n_flows) const;
  double gpu_ns(size_t n_flows, uint64_t largest, uint64_t s_g) const;
  double cpu_ns(size_t m, uint64_t s_g, uint64_t s_c) const;
};

// Alg. 1. `sizes` ascending (bytes per flow), `m` the round's messages. Returns p: flows
// [0, p) to the device, [p, N) to the CPU.
size_t schedule_flows(std::span<const uint64_t> sizes, size_t m, const CostModel& model);

// T_total for the partition p (what Alg. 1 minimises).
double total_ns(std::span<const uint64_t> sizes, size_t m, size_t p, const CostModel& model);

enum class PolicyKind : uint8_t { kFlowShader, kCpu, kDevice, kFixed, kRoundRobin };

struct Policy {
  PolicyKind kind = PolicyKind::kFlowShader;
  double cpu_percent = 0;  // kFixed: the share of flows (largest first) the CPU takes

  // "flowshader" | "cpu" | "device" | "fixed:X" (0 <= X <= 100) | "round-robin".
  static Result<Policy> parse(std::string_view text);
  std::string name() const;
};

// The partition of one round: for each flow (in the order of `sizes`, any order), true when the
// device takes it. `sizes` is not required to be sorted.
std::vector<bool> partition(const Policy& policy, std::span<const uint64_t> sizes, size_t m,
                            const CostModel& model);

// Least squares with each coefficient pulled weakly towards `prior` (a ridge scaled per
// feature): the solution of (XᵀX + Λ) β = Xᵀy + Λ prior. X is row-major, rows of prior.size().
std::vector<double> fit_linear(std::span<const double> x, std::span<const double> y,
                               std::span<const double> prior);

inline constexpr uint32_t kDefaultRefitRounds = 200;

class CostFit {
 public:
  explicit CostFit(uint32_t refit_rounds = kDefaultRefitRounds) : refit_rounds_(refit_rounds) {}

  // One round's measurements. gpu_ns < 0: the device part was not measured (no device flows,
  // or its completion was not seen).
  void add_round(const CostModel& model, size_t n_flows_gpu, uint64_t largest_gpu, uint64_t s_g,
                 size_t m, uint64_t s_c, double gpu_ns, double cpu_ns);
  // Every refit_rounds rounds: refits `model`'s coefficients from the rounds since the last fit
  // and returns true.
  bool maybe_refit(CostModel& model);
  uint32_t fits() const { return fits_; }

 private:
  uint32_t refit_rounds_;
  uint32_t rounds_ = 0;
  uint32_t fits_ = 0;
  std::vector<double> gx_, gy_, cx_, cy_;
};

}  // namespace fulcrum::l7
