// The hand-off between two stages as the runtime makes it (calibration.hh HandoffCost): a
// reference pipeline whose consumer reads and then writes the packet's header, run through the
// runtime (plan::run's machinery: the generator to a transmit-only net_null) cloned on one worker
// and cut before its first element on 1+1 workers, at each frame size. Each side's cost comes from
// the per-element cycle accounting and each worker's CPU time in the RunReport
// (docs/placement-model.md, "The hand-off").
#pragma once

#include <vector>

#include "core/result.hh"
#include "plan/calibration.hh"
#include "runtime/runtime.hh"

namespace fulcrum::plan {

// The reference pipeline (element names fixed: the cut is at `check`): `check` reads the header
// the producer's core wrote, `ttl` writes it, `out` transmits whole batches by the port they came
// in on, the generator, whose TX frees the buffers into the consumer's mempool cache.
inline constexpr const char* kHandoffReference =
    "in :: FromInput -> check :: CheckIPHeader -> ttl :: DecIPTTL -> out :: ToOutput;";
// The spread reference: the same with `route` before `ttl`, routing each flow to one of two ports
// (two /1 routes in a file of the run's own) as the routers do: the consumer then frees its
// buffers in two groups per batch and they come back to the producer out of order
// (HandoffCost::spread). Its points' frame size.
inline constexpr const char* kHandoffSpreadRoutes = "0.0.0.0/1 0\n128.0.0.0/1 1\n";
inline constexpr unsigned kHandoffSpreadFrame = 64;
// The scan reference: the same with `scan` before `ttl`, an IDSMatch whose Hyperscan prefilter
// scans every payload, asking for its lines kWholeFrameReadAhead packets ahead (rules of the
// run's own, literals the generator's zero payloads never hold), at kHandoffScanFrame: what a
// stage that scans whole frames pays for their lines beyond the header when they come from the
// other core (HandoffCost::scan, handoff_scan_line_cycles).
inline constexpr const char* kHandoffScanRules =
    "alert udp any any -> any any (msg:\"scan reference 1\"; content:\"|de ad be ef|\"; sid:1;)\n"
    "alert udp any any -> any any (msg:\"scan reference 2\"; content:\"GET /\"; sid:2;)\n"
    "alert udp any any -> any any (msg:\"scan reference 3\"; content:\"password=\"; nocase; "
    "sid:3;)\n"
    "alert udp any any -> any any (msg:\"scan reference 4\"; content:\"|90 90 90 90 90 90 90 "
    "90|\"; sid:4;)\n"
    "alert udp any any -> any any (msg:\"scan reference 5\"; content:\"/bin/sh\"; sid:5;)\n"
    "alert udp any any -> any any (msg:\"scan reference 6\"; content:\"SELECT \"; nocase; "
    "sid:6;)\n"
    "alert udp any any -> any any (msg:\"scan reference 7\"; content:\"|ca fe ba be 01|\"; "
    "sid:7;)\n"
    "alert udp any any -> any any (msg:\"scan reference 8\"; content:\"fulcrum-scan\"; sid:8;)\n";
inline constexpr unsigned kHandoffScanFrame = 512;
inline constexpr unsigned kHandoffFrames[] = {64, 512};
inline constexpr unsigned kHandoffRuns = 3;
inline constexpr double kHandoffSecondsPerRun = 0.5;

// What one run of the reference gave, reduced to what the hand-off needs (cycles per packet, CPU
// time: each worker's wall-clock cycles in elements scaled by its CPU share, so that a worker
// preempted for part of the run is charged what it ran).
struct HandoffRun {
  double stage_cycles[2] = {0, 0};  // each stage's CPU cycles per packet (cloned: stage 0 only)
  double producer_elements = 0;     // in, and the Pipeliner's enqueue (cut)
  double consumer_elements = 0;     // check, route, scan, ttl, out
  double tx_flush = 0;              // the workers' transmit flushes (WorkerReport::tx_flush_cycles)
  double pipeliner = 0;             // the Pipeliner's own cycles (the producer's enqueue)
  double dequeue = 0;  // the consumer's dequeues with the prefetch of their lines (0: not reported)
  double consumer_busy = 0;     // the consumer's loop iterations that took packets (0: not timed)
  bool consumer_bound = false;  // most enqueues met a full ring
};
Result<HandoffRun> reduce_handoff_run(const RunReport& r, bool cut);

// One point from the runs at a frame size (the median of each figure over the runs: the
// benchmarks compare with medians too). `ring_enqueue` / `ring_dequeue`: the plain ring's
// costs, for what the runtime's accounting cannot separate (below; the dequeue only where the
// runs did not report theirs).
HandoffPoint handoff_point(unsigned frame_bytes, const std::vector<HandoffRun>& clone,
                           const std::vector<HandoffRun>& cut, double ring_enqueue,
                           double ring_dequeue);

// Whether two measurements of the ring (enqueue + dequeue) are of one cross-CPU regime: within
// kSameRegime of each other. (On the 2-vCPU VM of docs/benchmarks.md the cost of moving lines
// between the CPUs switches between two levels ~3.5x apart from one minute to the next.)
inline constexpr double kSameRegime = 1.6;
bool same_regime(double ring_a, double ring_b);

// Runs the reference at each of kHandoffFrames, the spread reference at kHandoffSpreadFrame and
// the scan reference at kHandoffScanFrame,
// the ring measured before and after each point (HandoffPoint::ring_cycles); when they are not
// all of one regime, the whole set again, at most
// kHandoffAttempts times (HandoffCost::consistent says whether the last one was). Needs the EAL
// with 2 worker lcores on 2 CPUs; with fewer it returns no points (the model then charges the
// ring).
inline constexpr unsigned kHandoffAttempts = 3;
Result<HandoffCost> measure_handoff(unsigned batch, unsigned cpus);

}  // namespace fulcrum::plan
