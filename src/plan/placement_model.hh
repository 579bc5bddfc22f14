// The cloning-vs-pipelining model of paper 002 (Dobrescu et al., PRESTO'10, §3.2), for a chain
// of elements cut into stages, each stage on k cores (k > 1: a hybrid, the stage cloned).
//
// Stage j's cycles per packet (Eq. for C_j):
//   C_j = sum_i C(i) + O_j^s + O_j^c (+ the worker's work outside elements: RX and the loop on
//         the first stage, flushing the transmit buffers on the last)
//   O_j^s = the hand-offs into and out of the stage: each side's cost as the runtime's hand-off
//           was measured (calibration.hh HandoffCost, a reference pipeline cut on 1+1 workers
//           whose consumer reads the frame's header), linear in the frame's cache lines (the
//           pipeline's frame size), scaled to the cross-CPU regime of the ring measured now
//           (ServerProfile::ring_now); the first stage's sending side also carries its RX/TX
//           change (it no longer transmits). Without a runtime measurement (a format-1
//           calibration, one CPU): the plain ring's costs.
//           Plus the frame's lines the stage reads beyond the reference's header line: a stage
//           with an element that reads the whole frame (ElementTraits::reads) pays
//           (frame lines - 1) x what the runtime's scan reference paid a line
//           (handoff_scan_line_cycles; scan_line_cycles) to bring them from the first stage's
//           core (its RX wrote the frame) beyond the work it does on them, and the
//           first stage pays line_rewrite_cycles for each
//           such line it writes again (the lines a header-reading stage never asks for stay in
//           the first stage's cache).
//   O_j^c = sum_i e_i x N(i) x [ (pi_j^L2 - pi^LLC) x O_l + pi^LLC x O_m ]
//   pi_j^L2 = max(0, 1 - L2 / S_j)      S_j: the working sets of the stage's elements
//   pi^LLC  = max(0, 1 - LLC / S)       S: every stage's working sets (the LLC is shared by
//                                       the cores; per-worker tables count once per core)
// The paper's pi_j = 1 - LLC/S_j is the LLC term for an LLC per processor; here the cores share
// one LLC and each has a private L2, so the same form is applied at both levels (the private
// one per stage). O_l, O_m: the measured LLC and DRAM latencies. Throughput (Eq. 1):
//   R = min_j k_j x f / C_j        f: the TSC rate
// C(i), the element in isolation, is its measured cycles per packet less the contention the
// model puts on it in the measured configuration (one worker, the whole chain). e_i (ours, not
// the paper's): the share of that contention the measurement leaves room for, at most 1, so that
// the model predicts the measured configuration as measured; an element whose misses are hidden
// (group prefetch, a traffic footprint smaller than its table) pays that share elsewhere too.
#pragma once

#include <string>
#include <vector>

#include "core/packet_reads.hh"
#include "plan/calibration.hh"
#include "runtime/placement.hh"

namespace fulcrum::plan {

// The server profile the model uses, from a calibration.
struct ServerProfile {
  MachineInfo machine;
  MemoryLatency memory;
  RingCost ring;
  HandoffCost handoff;     // the runtime's hand-off (empty: the ring's)
  double frame_bytes = 0;  // the pipeline's mean frame (0: not known: the smallest point)
  unsigned batch = 64;
  double io_cycles_per_packet = 0;  // RX, loop and TX work, on the first stage
  double tx_cycles_per_packet = 0;  // of it: transmit flushes, on the last stage when cut
  // The packets leave by several ports (PipelineMeasure::out_ports): a cut's consumer also pays
  // handoff_spread_cycles.
  bool spread = false;
  // The plain ring's enqueue + dequeue (ring_cycles()) measured when the prediction is made, `ring`
  // then being that measurement: the hand-off is scaled to it (calibration.hh handoff_*_cycles).
  // 0: the hand-off as measured.
  double ring_now = 0;
};
ServerProfile server_profile(const Calibration& c);

// `s` in the cross-CPU regime of `now` (the plain ring measured at prediction time): the hand-off
// scaled to it, the frame's lines at its per-line costs. Call it right before predicting.
ServerProfile follow_regime(const ServerProfile& s, const RingCost& now);

// The lines of the reference hand-off's consumer reads of the frame (the Ethernet and IP headers
// of kHandoffReference's CheckIPHeader and DecIPTTL): the hand-off's measured cost holds them.
inline constexpr double kReferenceReadLines = 1;

// One element of the chain (already in isolation: isolate()).
struct ChainElement {
  std::string name;
  std::string class_name;
  double cycles_per_packet = 0;  // C(i)
  MemoryProfile memory;          // S(i), N(i)
  // The share of the modelled miss latency the element pays (prefetching and the traffic's own
  // locality hide the rest): fitted by isolate() so that the measured configuration predicts
  // what was measured.
  double exposed = 1;
  PacketReads reads = PacketReads::kHeaders;  // its class's ElementTraits::reads
  double frame_bytes = 0;  // mean bytes of the frames it receives (0: the pipeline's, not known)
  uint8_t anno = 0;        // its class's ElementTraits::anno (kAnnoReads | kAnnoWrites)
};

// The frame's lines the elements [first, last] read beyond kReferenceReadLines: the lines of the
// frame as the stage receives it (chain[first].frame_bytes, else the pipeline's frame) less the
// reference's when one of them reads the whole frame, else 0 (0 too when the frame size is not
// known).
double extra_lines_read(const ServerProfile& s, const std::vector<ChainElement>& chain,
                        size_t first, size_t last);
// What each of those lines costs the stage that reads them, from the plain ring:
// RingCost::line_scan_cycles, or line_read_cycles where the calibration has no scan figure.
double line_cycles(const RingCost& r);
// What each of those lines costs a stage that scans them asking ahead: what the runtime's scan
// reference paid a line (handoff_scan_line_cycles, carried to the regime now), line_cycles where
// the calibration has no scan reference.
double scan_line_cycles(const ServerProfile& s);
// The hand-off cycles per packet a stage pays for receiving (consumer) and for sending
// (producer; `first`: the first stage, whose RX/TX change the runtime measurement carries). The
// consumer's includes the spread extra when the packets leave by several ports (ServerProfile).
double consumer_handoff(const ServerProfile& s);
double producer_handoff(const ServerProfile& s, bool first);

// Contention cycles per table access for a core whose stage touches `stage_bytes` while all cores
// together touch `socket_bytes`.
double contention_per_access(const ServerProfile& s, double stage_bytes, double socket_bytes);

// C(i) from measured cycles: each element's measured cycles less its contention in the measured
// run (one stage of the whole chain on `workers` cores), never below `floor_share` of what was
// measured; `exposed` is what is left of the modelled contention there over the modelled one
// (1 when the model's whole contention fits in the measurement).
std::vector<ChainElement> isolate(const ServerProfile& s, const std::vector<ChainElement>& measured,
                                  unsigned workers, double floor_share = 0.1);

struct Stage {
  size_t first = 0;  // elements [first, last] of the chain
  size_t last = 0;
  unsigned cores = 1;
};

// Whether stage j of `stages` receives the packets' private annotation line from another core:
// one of its elements reads the line and an element of an earlier stage wrote it.
bool receives_anno_line(const std::vector<ChainElement>& chain, const std::vector<Stage>& stages,
                        size_t j);
// What the lines stage j receives from another core cost it a packet (beyond the reference's
// header): a stage with an element that reads each line as it comes (PacketReads::kWholeFrame)
// waits once a packet for its frame lines and annotation line together (RingCost::
// line_read_cycles); otherwise each frame line costs scan_line_cycles and the annotation line a
// dependent read.
double received_lines_cycles(const ServerProfile& s, const std::vector<ChainElement>& chain,
                             const std::vector<Stage>& stages, size_t j);

struct StagePrediction {
  Stage stage;
  double compute = 0, sync = 0, contention = 0, io = 0;  // cycles per packet, by term
  // Of sync: the frame's lines beyond the header's and the private annotation line, read from or
  // written again for another core.
  double frame_lines = 0;
  double cycles_per_packet = 0;  // C_j
  double stage_bytes = 0;        // S_j
  double pi_l2 = 0, pi_llc = 0;
  double pps = 0;  // k_j x f / C_j
};

struct PlacementPrediction {
  Placement placement;
  std::vector<StagePrediction> stages;
  double pps = 0;
  size_t bottleneck = 0;  // the stage that bounds R
  double socket_bytes = 0;
  std::string kind;          // "clone", "pipeline", "hybrid"
  double measured_pps = -1;  // what a run of it gave (fulcrum plan --verify); < 0: not run
};

PlacementPrediction predict(const ServerProfile& s, const std::vector<ChainElement>& chain,
                            const std::vector<Stage>& stages);

// Every cut set of the chain at the allowed boundaries (cut_ok[i]: a stage may begin at element
// i) with at most `cores` stages, each with its cores split to raise the bottleneck (one each,
// then one more at a time to the slowest stage), beside cloning on all `cores`. Sorted by
// predicted throughput, best first; cloning first among equals.
std::vector<PlacementPrediction> enumerate(const ServerProfile& s,
                                           const std::vector<ChainElement>& chain,
                                           const std::vector<bool>& cut_ok, unsigned cores,
                                           size_t max_cut_sets = 4096);

// One line saying which stage bounds the throughput and why (its largest term).
std::string explain(const PlacementPrediction& p, const std::vector<ChainElement>& chain);

}  // namespace fulcrum::plan
