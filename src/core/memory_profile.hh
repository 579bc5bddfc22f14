// MemoryProfile: what an element's own data structures cost the cache, for the performance
// models (src/plan/): the element profile of paper 002 (Dobrescu et al., §3.2: S(i), N(i)) and,
// for lookups that prefetch in groups, the costs paper 003's model needs (P4C, APSys'17),
// measured on the element's own table with its data in L1 (src/plan/lookup_probe.hh). Packet
// data is not in it: every placement touches that alike.
//
// An element with tables implements MemoryProfiled beside Element; the planner finds it with a
// dynamic_cast (control path only).
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

namespace fulcrum {

// The grid of the hot measurements: batches 8, 16, ..., 256 (row i: batch 2^(i+3)) by groups
// 1, 2, ..., 64 (column j: group 2^j).
inline constexpr size_t kProbedBatches = 6;
inline constexpr size_t kProbedGroups = 7;
inline constexpr unsigned kSmallestProbedBatch = 8;

struct MemoryProfile {
  size_t working_set_bytes = 0;    // bytes its lookups can touch (S(i))
  double accesses_per_packet = 0;  // table accesses (cache lines) per packet (N(i))
  bool per_worker = false;         // one copy per worker replica (not shared by all workers)
  // A table whose traffic touches fewer lines than it holds (a MAC table holds the addresses it
  // learned, a few in a table of millions): the bytes one distinct key's lookups touch, and the
  // element's counter (counters()) that holds its distinct keys after a run. The planner then
  // takes S(i) = min(working_set_bytes, max(1, keys) x bytes_per_key), keys from the calibration
  // run (plan::measure_pipeline), and keeps the allocated size in table_bytes.
  double bytes_per_key = 0;
  std::string_view keys_counter;
  size_t table_bytes = 0;  // allocated, when the working set was bounded by the keys (else 0)
  // Group-prefetching lookups only (prefetch_group 0: none).
  unsigned prefetch_group = 0;        // the group (prefetch distance) in use
  double compute_cycles = 0;          // per lookup, its data in L1
  double call_cycles = 0;             // per lookup_bulk call (per batch)
  double group_cycles = 0;            // per group
  double levels = 0;                  // dependent accesses per lookup
  double within_group_levels = 0;     // of them, prefetched within their group (the rest: ahead)
  double lines_per_level = 0;         // lines fetched together per access
  double state_bytes_per_packet = 0;  // what a batch keeps per packet (keys, results)
  // Cycles per lookup with the data in L1, per batch (lookups per call) and group, overheads
  // and the lookups' overlap in the core included; 0: not measured (a group above the batch).
  std::array<std::array<double, kProbedGroups>, kProbedBatches> hot_cycles{};
};

class MemoryProfiled {
 public:
  virtual ~MemoryProfiled() = default;
  // Valid once the element has initialized (its table built).
  virtual MemoryProfile memory_profile() const = 0;
};

}  // namespace fulcrum
