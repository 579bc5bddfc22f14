// The runtime: N shared-nothing workers, each pinned to a core and running its own replica of
// the pipeline to completion on the RX queues it polls (NBA §3.1; SPEC B2). Ports and queues are
// mapped here, outside the pipeline.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "core/graph.hh"
#include "core/result.hh"
#include "runtime/stats.hh"

namespace fulcrum {

struct RunOptions {
  std::string pipeline_file;
  std::string pipeline_text;  // used instead of the file when not empty (benchmarks, tests)
  std::vector<std::string> ports;
  int workers = 1;
  uint32_t batch = kDefaultBatch;
  uint64_t packets = 0;  // stop after this many received packets; 0 = no limit
  double seconds = 0;    // stop after this long; 0 = no limit
  BranchMode branch = BranchMode::kReuse;
  bool progress = false;  // live one-line progress on stderr
  // Stamp packets at RX and record each one's RX-to-TX time (RunReport::latency; benchmarks).
  bool latency = false;
  // Set (e.g. by a signal handler) to end the run early; the run still drains and reports.
  const std::atomic<bool>* interrupt = nullptr;
};

// Parses and checks the pipeline against the registry without starting anything.
Result<PipelineConfig> load_pipeline(const RunOptions& options);

// Runs the pipeline until a stop condition (packets, seconds, end of all pcap inputs).
// The EAL must be initialised with at least options.workers worker lcores.
Result<RunReport> run(const RunOptions& options);

}  // namespace fulcrum
