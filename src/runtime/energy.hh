// Energy measured where the machine exposes it: RAPL (Intel and AMD) through the Linux powercap
// tree, /sys/class/powercap/intel-rapl:N (one zone per CPU package; energy_uj counts up and wraps
// at max_energy_range_uj). A run reads the packages' counters at its start and end; the report
// then says "measured" with joules, average watts and joules per Mbit transmitted, or says it
// was not measured and why (no powercap tree, no permission: energy_uj is root-only on current
// kernels). Nothing is estimated here; a model belongs to the profiles of the policy scheduler.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum {

class RaplMeter {
 public:
  // The package zones under `root` (a directory laid out as /sys/class/powercap).
  static RaplMeter open(const std::string& root = "/sys/class/powercap");

  bool available() const { return !zones_.empty(); }
  // Why it is not available ("no RAPL zones under ...", "cannot read ...: Permission denied").
  const std::string& why_not() const { return why_not_; }
  // "package-0, package-1"
  std::string zones() const;

  // One reading of every zone's counter, microjoules; empty when a read fails.
  std::vector<uint64_t> read() const;
  // Joules between two readings, each zone's wrap-around counted once.
  double joules(const std::vector<uint64_t>& from, const std::vector<uint64_t>& to) const;

 private:
  struct Zone {
    std::string name;
    std::string energy_file;
    uint64_t range_uj = 0;
  };
  std::vector<Zone> zones_;
  std::string why_not_;
};

struct EnergyReport {
  bool measured = false;
  std::string source;  // "RAPL package-0" or why it was not measured
  double joules = 0;
  double watts = 0;
  double joules_per_mbit = 0;  // per megabit transmitted (frame bytes)
};

}  // namespace fulcrum
