// DPDK environment setup. Runs without hugepages (--no-huge, in-memory, a unique file prefix per
// process so tests and runs can go in parallel) and uses hugepages when the machine has them.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "core/result.hh"

namespace fulcrum {

struct EalOptions {
  int workers = 1;               // worker lcores besides the control lcore
  std::vector<std::string> pci;  // PCI addresses to allow
  int memory_mb = 1024;          // memory when running without hugepages
  bool force_no_huge = false;
  bool quiet = true;
  std::vector<int> cores;  // --cores: worker w on cores[w] (io/cores.hh); empty: the default
  // Leave this run's worker CPUs in its runtime folder, and warn about other Fulcrum runs that
  // use the same ones (eal_warnings()). For commands that run workers.
  bool announce_cores = false;
  // DPDK's telemetry socket in the runtime folder (/var/run/dpdk/fulcrumPID/dpdk_telemetry.v2).
  bool telemetry = true;
};

// Initialises the EAL once per process. Later calls return the first call's status. The EAL's
// runtime directory (/var/run/dpdk/fulcrumPID) is removed at exit.
Status init_eal(const EalOptions& options);
// Removes the runtime directory now (for exits that skip atexit handlers).
void remove_eal_runtime_dir();
bool eal_ready();
// Whether the EAL was started with PCI devices allowed (a NIC may DMA into packet pools).
bool eal_has_pci();
// Warnings from initialisation: "CPU 1 is also a worker CPU of fulcrum pid 4242 ...".
const std::vector<std::string>& eal_warnings();
bool hugepages_available();
// The EAL lcore worker `w` runs on: the w-th worker lcore in RTE_LCORE_FOREACH_WORKER order
// (runtime/runtime.cc starts and builds each worker there); RTE_MAX_LCORE when there are fewer.
unsigned worker_lcore(int w);

// Collects what DPDK logs while it lives (instead of printing it), so that a failing DPDK call
// can report DPDK's own reason: `DpdkLogCapture log; rc = rte_vdev_init(...); log.reason()`.
// Not thread-safe: use it on the control thread, before workers start.
class DpdkLogCapture {
 public:
  DpdkLogCapture();
  ~DpdkLogCapture();
  DpdkLogCapture(const DpdkLogCapture&) = delete;
  DpdkLogCapture& operator=(const DpdkLogCapture&) = delete;
  // The logged lines joined by "; ", each without DPDK's "SUBSYSTEM: " prefix and trailing
  // newline, at most kMaxReason characters; empty when DPDK said nothing.
  std::string reason();
  static constexpr size_t kMaxReason = 400;

 private:
  void restore();
  FILE* stream_ = nullptr;
  char* buffer_ = nullptr;
  size_t size_ = 0;
};

// For tests: initialises the EAL with defaults (no devices, one worker) if it is not yet.
void init_eal_for_tests();

}  // namespace fulcrum
