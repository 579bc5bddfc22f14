// IPv4 LPM micro-benchmark: our Dir24_8 against DPDK's rte_lpm on the same generated table and
// the same destination addresses, looked up in batches of 64 as the router does. Needs the EAL
// (rte_lpm allocates from DPDK memory).
//
// Mind the rte_lpm build time: rte_lpm_add scans every rule of the same depth, so building is
// quadratic in the routes per prefix length (about 1.3 s for 100k generated routes and 30-45 s
// for 500k on a 2-vCPU EPYC VM; our build takes 15 ms and 60-100 ms).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace fulcrum {

struct LpmBenchResult {
  double ours_mlookups_per_s = 0;
  double rte_lpm_mlookups_per_s = 0;
  double build_ms_ours = 0;
  double build_ms_rte = 0;
  size_t routes = 0;
  size_t lookups = 0;
  size_t segments = 0;      // TBLlong segments of our table
  size_t memory_bytes = 0;  // our TBL24 + TBLlong
  uint64_t mismatches = 0;  // lookups where the two disagreed (must be 0)
  std::string error;        // set when a table could not be built; the rates are then 0
};

// Builds both tables from generate_routes4(routes, seed) and looks up `lookups` addresses, each
// drawn inside a random route of the table (traffic to routed destinations, so the more-specific
// /25../32 routes are exercised). Each side runs kLpmBenchRounds passes; the best pass counts.
LpmBenchResult bench_lpm(size_t routes, size_t lookups, uint64_t seed);

inline constexpr int kLpmBenchRounds = 3;

// {"routes":...,"lookups":...,"ours_mlookups_per_s":...,...}: one JSON object, no newline; an
// "error" member only when the run failed.
std::string to_json(const LpmBenchResult& r);

}  // namespace fulcrum
