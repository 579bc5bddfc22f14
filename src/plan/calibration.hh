// Calibration: what the performance models (src/plan/placement_model.hh, batch_model.hh) need to
// know about this machine and this pipeline, measured by `fulcrum plan --calibrate` and stored as
// JSON (docs/placement-model.md, "The calibration file"). Nothing in it is hard-coded per
// machine: every figure is measured (measure_machine.hh) or read from sysfs.
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <vector>

#include "core/memory_profile.hh"
#include "core/result.hh"

namespace fulcrum::plan {

// 2: the runtime hand-off ("handoff") and the pipeline's frame size ("pipeline.frame_bytes").
// A format-1 file still reads: no runtime hand-off (the model charges the ring's), frame size 0.
inline constexpr int kCalibrationFormat = 2;
inline constexpr int kOldestCalibrationFormat = 1;

// Cache sizes (sysfs /sys/devices/system/cpu/cpu0/cache) and the TSC rate.
struct MachineInfo {
  unsigned cpus = 1;           // online CPUs
  double tsc_hz = 0;           // the TSC's rate (cycles below are TSC cycles)
  size_t line_bytes = 64;      // cache line
  size_t l1d_bytes = 0;        // private per core
  size_t l2_bytes = 0;         // private per core
  size_t llc_bytes = 0;        // the last level as measured (what the models use)
  size_t llc_sysfs_bytes = 0;  // the last level as sysfs lists it, shared by llc_shared_cpus
  unsigned llc_shared_cpus = 1;
};

// Load-to-use latency of one dependent access (pointer chase) with the data in each level, and
// how many misses to memory overlap (independent chases at once: dram / cycles per access).
struct MemoryLatency {
  double l1_cycles = 0;
  double l2_cycles = 0;
  double llc_cycles = 0;
  double dram_cycles = 0;
  double parallel_misses = 1;
  // Cycles per line of random lines in memory (four times the sysfs LLC) read in groups of 2^j
  // lines (column j, as MemoryProfile::hot_cycles), each group prefetched one group before it is
  // read (`ahead`, DIR-24-8's loop) or just before, the whole group then its reads (`within`, the
  // IPv6 trie's). They hold what one latency and `parallel_misses` do not: the out-of-order core
  // overlapping groups, and more lines in flight beyond the chases' overlap. 0: not measured
  // (a file written before them): the batch model falls back to latency and parallel_misses.
  std::array<double, kProbedGroups> group_ahead_line_cycles{};
  std::array<double, kProbedGroups> group_within_line_cycles{};
  bool has_group_lines() const {
    return group_ahead_line_cycles[0] > 0 && group_within_line_cycles[0] > 0;
  }
};

// Handing batches of packets from one core to another through an rte_ring (single producer,
// single consumer, bursts of `batch`), each packet's two cache lines written by the producer and
// read and written by the consumer, buffers returned through a second ring: the synchronisation
// overhead of paper 002 §3.1 (metadata sharing, content sharing, memory recycling).
struct RingCost {
  bool cross_core = false;  // measured between two cores (false: one core, both sides)
  unsigned batch = 0;
  double enqueue_cycles_per_packet = 0;    // producer: touch, enqueue, take back returned buffers
  double dequeue_cycles_per_packet = 0;    // consumer: dequeue, touch the packet, return it
  double same_core_cycles_per_packet = 0;  // both sides on one core (no hand-off): the baseline
  // The part of each side's cost that is per burst (from a second burst size, batch / 8):
  // per packet at burst B = cycles_per_packet + cycles_per_burst x (1/B - 1/batch).
  double enqueue_cycles_per_burst = 0;
  double dequeue_cycles_per_burst = 0;
  // A frame's lines beyond its first two (measure_machine.hh measure_frame_lines: frames of 8
  // lines written whole by the producer, read by the consumer by their first two lines or
  // whole), per line: the consumer bringing it from the producer's cache, the producer writing
  // it again once the consumer has read it. 0: not measured (one CPU, a file without them).
  double line_read_cycles = 0;
  double line_rewrite_cycles = 0;
  // The same lines read by a consumer that scans them as a payload scanner does: it works on each
  // line (measure_machine.cc kPayloadWorkCycles) and asks for a frame's lines
  // kWholeFrameReadAhead packets ahead, so the transfers overlap its work; per line, what is left
  // beyond the work (0: all of it hidden). The charge for an element that reads the whole frame.
  // kNotMeasured: a file without it (line_read_cycles is charged instead).
  static constexpr double kNotMeasured = -1;
  double line_scan_cycles = kNotMeasured;
};

// The plain ring's enqueue + dequeue: the figure that tells the machine's cross-CPU regime
// (measure_handoff.hh kSameRegime) and that the hand-off follows (handoff_*_cycles).
double ring_cycles(const RingCost& r);

// The hand-off per packet at burst size `b` (RingCost's two sides together when both).
double enqueue_cycles(const RingCost& r, unsigned b);
double dequeue_cycles(const RingCost& r, unsigned b);

// The hand-off as the runtime makes it (a Pipeliner between two workers, runtime/stages.hh),
// measured on a reference pipeline whose consumer reads the packet's header and then writes it
// (kHandoffReference: FromInput -> CheckIPHeader -> DecIPTTL -> ToOutput, generator to a
// transmit-only net_null), run cloned on one worker and cut before CheckIPHeader on 1+1, at
// several frame sizes (measure_handoff.hh). Per packet, relative to the cloned run:
// - consumer: the receiving stage's cycles per packet less what its elements cost cloned (the
//   dequeue, the mbuf's and the header's lines coming from the producer's core, the line
//   written again by a later element, freeing buffers into its own mempool cache, and its
//   transmit);
// - producer: the sending first stage's cycles outside its elements plus the enqueue, less the
//   cloned run's RX/TX work (it receives buffers that come back from the consumer's core through
//   the mempool's shared ring, and no longer transmits: this side can be negative).
struct HandoffPoint {
  unsigned frame_bytes = 0;
  double producer_cycles_per_packet = 0;
  double consumer_cycles_per_packet = 0;
  // What they came from (cycles per packet, CPU time): the cloned run's whole cost and its
  // RX/TX work, the cut's receiving stage's cost and its elements' cloned cost, the cut's first
  // stage's cost outside its elements; whether the consumer was the bottleneck (the producer
  // met a full ring: the receiving stage's cost is then its CPU time, no idle polling in it).
  double clone_cycles_per_packet = 0;
  double clone_io_cycles_per_packet = 0;
  double consumer_stage_cycles_per_packet = 0;
  double consumer_elements_clone_cycles = 0;
  double producer_io_cycles_per_packet = 0;
  bool consumer_bound = false;
  // The plain ring's enqueue + dequeue measured before and after the point's runs (their mean):
  // which cross-CPU regime the point was measured in (measure_handoff.hh kSameRegime); and the
  // ring's RingCost::line_read_cycles then (0: a file without it), a record of the regime that
  // the carry into another regime does not use (handoff_consumer_cycles).
  double ring_cycles = 0;
  double line_read_cycles = 0;
};

struct HandoffCost {
  bool cross_core = false;  // the two workers on two CPUs
  unsigned batch = 0;
  unsigned runs = 0;                 // runs per point and placement (the median is kept)
  unsigned attempts = 0;             // sets of points measured until the ring stayed in one regime
  bool consistent = false;           // every point's ring of one regime (else the last attempt's)
  std::vector<HandoffPoint> points;  // by frame size, ascending; empty: not measured
  // The spread reference (measure_handoff.hh kHandoffSpreadRoutes: each flow routed to one of
  // two ports) at kHandoffSpreadFrame; frame_bytes 0: not measured (an older file).
  HandoffPoint spread;
  // The scan reference (measure_handoff.hh kHandoffScanRules: an IDSMatch scanning every
  // payload) at kHandoffScanFrame; frame_bytes 0: not measured (an older file).
  HandoffPoint scan;
};

// Each side's cycles per packet for frames of `frame_bytes`: linear in the frame's cache lines
// between the measured points, the end segments extended (never below 0 for the consumer);
// without points, the ring's (RingCost) enqueue and dequeue at burst `batch`.
// `now` (the plain ring measured now; nullptr: as measured): each point carried into now's
// cross-CPU regime, so that a hand-off measured in one regime follows the machine into the other.
// Of each side, the share the smallest point's cost is of its ring (ring_cycles()) follows the
// ring; the rest (the lines of a larger frame) stays as measured:
//   cost_now(point) = cost(point) + cost(smallest) / ring(smallest) x (ring_now - ring(point)).
// docs/placement-model.md, "Regimes".
double handoff_producer_cycles(const HandoffCost& h, const RingCost& ring, double frame_bytes,
                               size_t line_bytes, unsigned batch, const RingCost* now = nullptr);
double handoff_consumer_cycles(const HandoffCost& h, const RingCost& ring, double frame_bytes,
                               size_t line_bytes, unsigned batch, const RingCost* now = nullptr);
// What the consumer pays beyond handoff_consumer_cycles when the packets leave by several ports:
// the spread point's consumer less the points' at its frame size, both carried to `now` as
// handoff_consumer_cycles does (at least 0; 0 without a spread point).
double handoff_spread_cycles(const HandoffCost& h, const RingCost& ring, size_t line_bytes,
                             unsigned batch, const RingCost* now = nullptr);
// What a consumer that scans whole frames asking ahead (PacketReads::kWholeFrameAhead) pays for
// each line of the frame beyond the header's: the scan point's consumer less the points' at its
// frame size, both carried to `now` as handoff_consumer_cycles does, over the scan point's lines
// beyond the first (at least 0); -1 without a scan point (the caller then charges the plain
// ring's RingCost::line_scan_cycles).
double handoff_scan_line_cycles(const HandoffCost& h, const RingCost& ring, size_t line_bytes,
                                unsigned batch, const RingCost* now = nullptr);

// One element of the pipeline as measured (the element profile of paper 002 §3.2: C(i), S(i),
// N(i)): cycles in process_batch per packet and per batch, and its tables.
struct ElementMeasure {
  std::string name;
  std::string class_name;
  double cycles_per_packet = 0;  // per packet it received
  double cycles_per_batch = 0;
  double packet_share = 1;  // its packets per packet the pipeline received
  // Mean bytes of the frames it received (ElementReport::frame_bytes; 0: not known, an older
  // file): an element after an encapsulation receives larger frames than the pipeline does.
  double frame_bytes = 0;
  MemoryProfile memory;
};

// A short run of the pipeline (one worker, the generator port) and what it cost.
struct PipelineMeasure {
  std::string file;  // the pipeline file ("" when none was calibrated)
  unsigned batch = 0;
  unsigned workers = 0;
  double seconds = 0;
  double mpps = 0;
  // Worker cycles per packet outside every element's process_batch (RX, the loop, TX bursts).
  double io_cycles_per_packet = 0;
  // Of io_cycles_per_packet: sending what the transmit buffers held after each loop iteration
  // (WorkerReport::tx_flush_cycles). A pipelined placement does it on the stage that transmits.
  double tx_cycles_per_packet = 0;
  double frame_bytes = 0;  // mean bytes per received packet (0: not known, a format-1 file)
  // The ports that sent at least kSpreadPortShare of the transmitted packets (1: a file without
  // it). With 2 or more, a cut's consumer pays HandoffCost::spread's extra.
  unsigned out_ports = 1;
  std::vector<ElementMeasure> elements;  // in the pipeline's declaration order
};

inline constexpr double kSpreadPortShare = 0.1;

struct Calibration {
  int format = kCalibrationFormat;
  std::string created;  // what made it ("fulcrum plan --calibrate", "built-in")
  MachineInfo machine;
  MemoryLatency memory;
  RingCost ring;
  HandoffCost handoff;       // empty points: the model uses the ring
  PipelineMeasure pipeline;  // empty elements: no pipeline calibrated
};

std::string calibration_json(const Calibration& c);
// Parses the file's text; `path` names it in errors: "PATH:LINE:COL: ..." for JSON syntax,
// "PATH: field memory.dram_cycles: ..." for a missing or wrong field.
Result<Calibration> parse_calibration(const std::string& text, const std::string& path);
Result<Calibration> read_calibration(const std::string& path);
Status write_calibration(const Calibration& c, const std::string& path);

}  // namespace fulcrum::plan
