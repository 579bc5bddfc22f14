// The runtime: N shared-nothing workers, each pinned to a core and running its own replica of
// the pipeline to completion on the RX queues it polls (NBA §3.1; SPEC B2). Ports and queues are
// mapped here, outside the pipeline.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/graph.hh"
#include "core/result.hh"
#include "core/shared_storage.hh"
#include "runtime/energy_model.hh"
#include "runtime/live.hh"
#include "runtime/placement.hh"
#include "runtime/stages.hh"
#include "runtime/stats.hh"

struct rte_mempool;

namespace fulcrum {

inline constexpr double kDefaultWatchdogS = 10;
// Packets per worker pool for what source elements create.
inline constexpr unsigned kSourcePoolSize = 2047;
// How often the live view is refreshed (RunOptions::live).
inline constexpr double kDefaultLivePeriodS = 0.1;

struct RunOptions {
  std::string pipeline_file;
  std::string pipeline_text;  // used instead of the file when not empty (benchmarks, tests)
  std::map<std::string, std::string> parameters;  // NAME=value for $NAME in the pipeline
  bool strict_rules = false;                      // InitContext::strict_rules
  std::vector<std::string> ports;
  int workers = 1;
  // Clone (every worker runs the whole pipeline) or a pipelined / hybrid cut (runtime/stages.hh).
  Placement placement;
  // Entries of each ring between two stages (a power of two; runtime/stages.hh).
  unsigned stage_ring_size = kStageRingSize;
  uint32_t batch = kDefaultBatch;
  uint64_t packets = 0;  // stop after this many received packets; 0 = no limit
  double seconds = 0;    // stop after this long; 0 = no limit
  BranchMode branch = BranchMode::kReuse;
  bool progress = false;  // live one-line progress on stderr
  // Stamp packets at RX and record each one's RX-to-TX time (RunReport::latency; benchmarks).
  bool latency = false;
  // The energy of what no meter measures (RAPL, NVML): RunReport::energy (`--energy-model`).
  EnergyModel energy_model = EnergyModel::defaults();
  // Set (e.g. by a signal handler) to end the run early; the run still drains and reports.
  const std::atomic<bool>* interrupt = nullptr;
  // The watchdog: a worker whose loop makes no progress for this long is reported on stderr
  // (and to on_stall, with a note naming the element it is in); the report counts it
  // (RunReport::stalls). One still stuck that long after the run was told to stop is left
  // behind: run() returns an error. 0 turns the watchdog off.
  double watchdog_s = kDefaultWatchdogS;
  std::function<void(int worker, const std::string& note)> on_stall;
  // Called by the control thread every control period (20 ms) with the time since the start and
  // the packets received and transmitted so far (benchmarks: throughput over time).
  std::function<void(double elapsed_s, uint64_t rx_packets, uint64_t tx_packets)> on_tick;
  // The live view for the control plane (HTTP endpoint, telemetry): the graph before the first
  // packet, a state every live_period_s while the run goes on, and the final one. May be null.
  LiveView* live = nullptr;
  double live_period_s = kDefaultLivePeriodS;
  // Set (by SIGUSR1) to print the summary so far on stdout; run() clears it once printed.
  std::atomic<bool>* summary_signal = nullptr;
  // Set (by SIGHUP) to reload every reloadable table from its file (runtime/reload.hh); run()
  // clears it when it starts the reload.
  std::atomic<bool>* reload_signal = nullptr;
  // Applied to the parsed pipeline before it is checked and built (`fulcrum profile` puts its
  // own balancer in place of the configuration's).
  std::function<Status(PipelineConfig&)> rewrite;
};

// Parses and checks the pipeline against the registry without starting anything.
Result<PipelineConfig> load_pipeline(const RunOptions& options);

// Builds one replica of `config` as run() does before it opens a port, so that every error an
// element finds while loading (arguments, tables, rules, SAs, devices) comes out with nothing
// started; the tables it loads stay in `shared` for the replicas that follow. `ports` is the port
// count (0: not known, port numbers unchecked); `pool` feeds source elements. Returns
// Pipeline::unconnected_outputs(); what elements note about their loading goes to `notes`.
Result<std::vector<std::string>> check_pipeline(const PipelineConfig& config,
                                                const RunOptions& options, int ports,
                                                SharedStorage& shared, rte_mempool* pool,
                                                std::vector<std::string>* notes = nullptr);

// Runs the pipeline until a stop condition (packets, seconds, end of all pcap inputs).
// The EAL must be initialised with at least options.workers worker lcores.
Result<RunReport> run(const RunOptions& options);

}  // namespace fulcrum
