// The planner behind `fulcrum plan` and `fulcrum run --placement auto`: calibrates (or reads a
// calibration), turns the pipeline into the chain of elements paper 002's model cuts, predicts
// every placement for N cores (placement_model.hh) and the batch size and prefetch group of each
// lookup element (batch_model.hh), and explains the choice. docs/placement-model.md.
#pragma once

#include <string>
#include <vector>

#include "core/config/ast.hh"
#include "core/result.hh"
#include "plan/batch_model.hh"
#include "plan/calibration.hh"
#include "plan/placement_model.hh"
#include "runtime/placement.hh"
#include "runtime/runtime.hh"

namespace fulcrum::plan {

inline constexpr double kDefaultMeasureSeconds = 0.5;

// The machine part of a calibration: sysfs, the TSC, memory latencies, the ring hand-off at
// `batch`. Needs the EAL (the ring).
Result<Calibration> calibrate_machine(unsigned batch);

// A short run of `options`' pipeline on one worker (its ports: the generator keeps it busy) and
// each element's cycles and tables. Needs the EAL.
Result<PipelineMeasure> measure_pipeline(const RunOptions& options, double seconds);

// `m` with its working set bounded by the distinct keys the run's element counted
// (MemoryProfile::bytes_per_key, keys_counter): the lines the traffic touched, not the table's
// allocation; unchanged for a profile that does not say how.
MemoryProfile bound_by_keys(const MemoryProfile& m, const ElementReport& run);

// The pipeline as a chain: the path from FromInput along output 0; an element off that path is
// folded into the chain element it hangs from (its cycles added there). cut_ok[i]: a stage may
// begin at chain element i (not the first, not ToOutput).
struct Chain {
  std::vector<ChainElement> measured;  // as measured, per packet the pipeline received
  std::vector<ChainElement> isolated;  // C(i): the measured contention taken out
  std::vector<bool> cut_ok;
  std::vector<std::string> folded;  // "element (into chain element)"
};
Result<Chain> chain_of(const PipelineConfig& config, const Calibration& c);

// One lookup element's batch size and prefetch group (paper 003's model).
struct LookupAdvice {
  std::string element;
  std::string class_name;
  MemoryProfile memory;
  BatchPoint now;       // the run's batch and the element's group
  BatchPoint at_batch;  // the best group at the run's batch
  BatchPoint best;      // the best of the whole grid
};

struct ScalingRow {
  unsigned cores = 0;
  PlacementPrediction clone;
  PlacementPrediction best;
};

struct Plan {
  unsigned cores = 0;
  std::string pipeline;
  std::string calibration_source;
  ServerProfile server;
  Chain chain;
  std::vector<PlacementPrediction> placements;  // best first
  std::vector<LookupAdvice> lookups;
  std::vector<ScalingRow> scaling;  // predictions for 1..64 cores
  std::vector<std::string> assumptions;
};

// `ring_now`: the plain ring measured right before (measure_ring), so that the hand-off follows
// the machine's cross-CPU regime (placement_model.hh follow_regime); nullptr: as calibrated.
Plan make_plan(const Calibration& c, const Chain& chain, unsigned cores,
               const RingCost* ring_now = nullptr);
std::string plan_text(const Plan& p);
std::string plan_json(const Plan& p);

// One run of placement `x` of `p` on p.cores workers for `seconds` (the EAL must have that
// many): what verify_plan measures each placement with, and the report with it (per worker: its
// stage, packets and CPU time) for a caller that repeats and compares runs (bench
// placement_verify).
Result<RunReport> run_placement(const Plan& p, const Placement& x, const RunOptions& options,
                                double seconds);

// Runs every placement of `p` that this runtime can run, `seconds` each on p.cores workers
// (the EAL must have that many), and records its throughput (received packets per second) as
// measured_pps. Returns how many ran; a placement it cannot run keeps measured_pps < 0.
Result<size_t> verify_plan(Plan& p, const RunOptions& options, double seconds);

// Whether `c` holds a pipeline measurement of `config` (the same file and element names).
bool calibration_matches(const Calibration& c, const PipelineConfig& config);

// For `fulcrum run --placement auto`: the placement predicted fastest for `cores` workers, from
// `calibration_file` (its machine part, and its pipeline part when it matches the pipeline) or,
// with "", a calibration measured now (about ten seconds). The EAL must be up.
Result<Placement> auto_placement(const RunOptions& options, unsigned cores,
                                 const std::string& calibration_file = "");

}  // namespace fulcrum::plan
