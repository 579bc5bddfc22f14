// Calibration: what the performance models (src/plan/placement_model.hh, batch_model.hh) need to
// know about this machine and this pipeline, measured by `fulcrum plan --calibrate` and stored as
// JSON (docs/placement-model.md, "The calibration file"). Nothing in it is hard-coded per
// machine: every figure is measured (measure_machine.hh) or read from sysfs.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "core/memory_profile.hh"
#include "core/result.hh"

namespace fulcrum::plan {

inline constexpr int kCalibrationFormat = 1;

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
};

// The hand-off per packet at burst size `b` (RingCost's two sides together when both).
double enqueue_cycles(const RingCost& r, unsigned b);
double dequeue_cycles(const RingCost& r, unsigned b);

// One element of the pipeline as measured (the element profile of paper 002 §3.2: C(i), S(i),
// N(i)): cycles in process_batch per packet and per batch, and its tables.
struct ElementMeasure {
  std::string name;
  std::string class_name;
  double cycles_per_packet = 0;  // per packet it received
  double cycles_per_batch = 0;
  double packet_share = 1;  // its packets per packet the pipeline received
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
  std::vector<ElementMeasure> elements;  // in the pipeline's declaration order
};

struct Calibration {
  int format = kCalibrationFormat;
  std::string created;  // what made it ("fulcrum plan --calibrate", "built-in")
  MachineInfo machine;
  MemoryLatency memory;
  RingCost ring;
  PipelineMeasure pipeline;  // empty elements: no pipeline calibrated
};

std::string calibration_json(const Calibration& c);
// Parses the file's text; `path` names it in errors: "PATH:LINE:COL: ..." for JSON syntax,
// "PATH: field memory.dram_cycles: ..." for a missing or wrong field.
Result<Calibration> parse_calibration(const std::string& text, const std::string& path);
Result<Calibration> read_calibration(const std::string& path);
Status write_calibration(const Calibration& c, const std::string& path);

}  // namespace fulcrum::plan
