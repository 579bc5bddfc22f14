// Which CPUs a run's lcores use: the control thread and one CPU per worker, chosen by default or
// with --cores LIST; and which other Fulcrum processes on this machine use the same CPUs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"

namespace fulcrum {

// "1,3-5" -> {1, 3, 4, 5}, in the order written; a CPU named twice, an empty item, a reversed
// range or a number over 4095 is an error naming it.
Result<std::vector<int>> parse_core_list(std::string_view text);

// "0-2,5" for {0, 1, 2, 5} (sorted).
std::string format_core_list(std::vector<int> cpus);

// The CPUs this process may run on (sched_getaffinity: taskset and cgroup cpusets count).
std::vector<int> allowed_cpus();

struct CorePlan {
  int control_cpu = 0;
  std::vector<int> worker_cpus;  // worker w runs on worker_cpus[w]
};

// Default (`requested` empty): workers on the allowed CPUs after the first, wrapping around;
// the control thread on the first. With --cores: worker w on requested[w] (each must be
// allowed; as many as workers), the control thread on the first allowed CPU no worker uses, or
// the first worker's CPU when all are taken.
Result<CorePlan> plan_cores(int workers, const std::vector<int>& requested,
                            const std::vector<int>& allowed = allowed_cpus());

// The EAL --lcores map for a plan: "0@C,1@W0,2@W1,...".
std::string lcore_map(const CorePlan& plan);

// Another live Fulcrum process and the worker CPUs it shares with `cpus`, from the "cores"
// files the runs leave in their DPDK runtime folders under `runtime_parent` (skipping `self`).
struct CoreNeighbour {
  int pid = 0;
  std::vector<int> shared;
};
std::vector<CoreNeighbour> core_neighbours(const std::string& runtime_parent,
                                           const std::string& self, const std::vector<int>& cpus);

// Writes this run's worker CPUs to DIR/cores ("PID CPU,CPU,...").
Status publish_cores(const std::string& dir, const std::vector<int>& cpus);

}  // namespace fulcrum
