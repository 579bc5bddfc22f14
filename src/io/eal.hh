// DPDK environment setup. Runs without hugepages (--no-huge, in-memory, a unique file prefix per
// process so tests and runs can go in parallel) and uses hugepages when the machine has them.
#pragma once

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
};

// Initialises the EAL once per process. Later calls return the first call's status. The EAL's
// runtime directory (/var/run/dpdk/fulcrumPID) is removed at exit.
Status init_eal(const EalOptions& options);
// Removes the runtime directory now (for exits that skip atexit handlers).
void remove_eal_runtime_dir();
bool eal_ready();
bool hugepages_available();

// For tests: initialises the EAL with defaults (no devices, one worker) if it is not yet.
void init_eal_for_tests();

}  // namespace fulcrum
