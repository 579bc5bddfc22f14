// The benchmark harness (`fulcrum bench`): runs the foundation's experiments on one worker and
// writes JSON. Every throughput figure comes with a ceiling measured in the same run, so results
// read as ratios on a shared, noisy machine.
#pragma once

#include <string>
#include <vector>

namespace fulcrum::bench {

struct BenchOptions {
  double seconds = 1.0;           // per measured configuration
  std::vector<std::string> only;  // run only these groups (exact names); empty: all
  std::string out;                // JSON file; stdout when empty
  bool large_tables = true;       // include the 500k-route router
  bool no_huge = false;           // 4 KiB pages even where hugepages are free (--no-huge)
  bool other_pages = true;        // BenchContext::other_pages
  // Scratch directory to use and keep (--keep DIR): the routes and captures the groups wrote,
  // to measure another framework on the same inputs. Empty: a temporary one, removed.
  std::string keep_dir;
};

int run_benchmarks(const BenchOptions& options);

}  // namespace fulcrum::bench
