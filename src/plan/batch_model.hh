// The batch and group-prefetch model of paper 003 (P4C, APSys'17 §2, Algorithm 1 and §3.5): the
// time a lookup element spends per packet as a function of the batch size B and the prefetch
// group (sub-batch) d, from the measured memory latencies and the element's compute cycles.
//
// A lookup walks `levels` dependent table accesses. The element hashes/prefetches a group of d
// keys, then resolves the previous group (one group ahead, Algorithm 1's loop fission), so the
// accesses of one group are in flight while d lookups of work run. Per packet:
//
//   t(B, d) = c                                  compute, data in L1 (measured)
//           + levels * max(0, M(d) - d*c/levels) / d    exposed memory stall
//           + o_g / d + o_b / B                  per-group and per-call (per-batch) overheads
//   (where the hot cost h(B, d) was measured, c + o_g/d + o_b/B is h(B, d))
//           + pollution(B, d)                    lines evicted before use (P4C §3.5's dip)
//   M(d)    = max(L, d * lines * miss_share * A / P)   latency, or the misses' issue bound
//
// with A the expected access latency into the working set (access_cycles), L = A - L1 latency,
// P the overlapping misses measured, miss_share the share of accesses missing L1. pollution:
// when the batch's per-packet state plus the lines in flight (2 groups) exceed L1, the share
// of them that does not fit is refetched from L2.
//
// Where the calibration holds the group reads measured in memory (MemoryLatency's
// group_*_line_cycles: cycles per random line read in groups of d, prefetched ahead or within
// the group), they replace M(d), L and P, which a single latency and overlap describe poorly
// (the out-of-order core overlaps groups, so one lookup at a time is far from L; more lines in
// flight keep paying past P), and the stall adds to the hot cost instead of overlapping it:
//
//   stall   = memory = s * lines * ((levels - w) * R_ahead'(B, d) + w * R_within(d))
//   R_ahead'(B, d) = (d/B) * R_within(d) + (1 - d/B) * R_ahead(d)   (a call's first group)
//   s       = (A - L1 latency) / (memory latency - L1 latency)
//
// with w the levels prefetched within their group (an IPv6 trie's walk, a MAC table's second
// bucket) and s the share of a memory access the working set pays. Assumptions:
// docs/placement-model.md.
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "plan/calibration.hh"

namespace fulcrum::plan {

// Shares of random accesses into `bytes` served by each level (each byte equally likely to be
// cached: paper 002 §3.2 assumption 3, applied per level: a level of size Z holds min(1, Z/S)).
struct LevelShares {
  double l1 = 1, l2 = 0, llc = 0, dram = 0;
};
LevelShares level_shares(const MachineInfo& m, double bytes);
// Expected cycles of one access into `bytes` of data (the shares weighted by the latencies).
double access_cycles(const MachineInfo& m, const MemoryLatency& lat, double bytes);

// One lookup element as the model sees it.
struct LookupProfile {
  double compute_cycles = 0;          // c: one lookup with its data in L1
  double call_cycles = 0;             // o_b: per lookup_bulk call, i.e. per batch
  double group_cycles = 0;            // o_g: per prefetch group
  double levels = 1;                  // dependent table accesses per lookup
  double within_group_levels = 0;     // of them, prefetched within their group (not ahead)
  double lines_per_level = 1;         // cache lines fetched (in parallel) per access
  double working_set_bytes = 0;       // bytes the lookups touch
  double state_bytes_per_packet = 0;  // what the batch keeps per packet (keys, results)
  // Measured cycles per lookup with the data in L1 per batch and group (MemoryProfile's grid):
  // where present they replace c + o_g/d + o_b/B (they hold the overlap of independent lookups
  // in the core and what the batch's size does to it).
  std::array<std::array<double, kProbedGroups>, kProbedBatches> hot{};
};

LookupProfile to_lookup_profile(const MemoryProfile& m);

struct BatchPoint {
  unsigned batch = 0;
  unsigned group = 0;
  double cycles_per_packet = 0;
  double compute = 0, stall = 0, overhead = 0, pollution = 0;  // its terms
  double memory = 0;  // cycles per lookup of the group reads (0: a calibration without them)
};

BatchPoint predict_batch(const MachineInfo& m, const MemoryLatency& lat, const LookupProfile& e,
                         unsigned batch, unsigned group);

// The point of least predicted cycles per packet over the grid (groups above the batch size
// are skipped); ties go to the smaller batch, then the smaller group.
BatchPoint choose_batch(const MachineInfo& m, const MemoryLatency& lat, const LookupProfile& e,
                        const std::vector<unsigned>& batches, const std::vector<unsigned>& groups);

// The candidate grids: batch sizes 8..256, groups 1..64 (powers of two).
const std::vector<unsigned>& batch_grid();
const std::vector<unsigned>& group_grid();

}  // namespace fulcrum::plan
