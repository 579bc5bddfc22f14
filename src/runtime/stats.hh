// Run statistics: what the runtime counts while it runs, and the report it builds at the end.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "core/output_loss.hh"
#include "runtime/energy.hh"

namespace fulcrum {

// A counter written by one worker and read by the control thread while it runs.
struct LiveCounter {
  std::atomic<uint64_t> v{0};
  void add(uint64_t n) {
    v.store(v.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  uint64_t get() const { return v.load(std::memory_order_relaxed); }
};

struct alignas(64) PortCounters {
  LiveCounter rx_packets, rx_bytes, tx_packets, tx_bytes;
};

// Drop reasons owned by the runtime (not by an element).
inline constexpr std::string_view kDropNoSuchPort = "no-such-port";
inline constexpr std::string_view kDropTxFull = "tx-full";
// A frame that arrived in several mbufs and could not be made one contiguous frame (longer than
// 16128 bytes, or no jumbo buffer free).
inline constexpr std::string_view kDropMultiSegment = "multi-segment";
// Transmitted packets a port's capture file does not hold (the disk filled up, ...).
inline constexpr std::string_view kDropTxWriteFailed = "tx-write-failed";

struct ElementReport {
  std::string name;
  std::string class_name;
  uint64_t in_packets = 0;
  uint64_t batches = 0;
  uint64_t cycles = 0;     // TSC cycles in process_batch, all workers (NodeStats::cycles)
  double frame_bytes = 0;  // mean bytes of the frames it received (sampled; 0: none sampled)
  std::vector<uint64_t> out_packets;
  std::vector<std::pair<std::string, uint64_t>> drops;     // by reason, non-zero only
  std::vector<std::pair<std::string, uint64_t>> counters;  // element-specific
};

// One worker: where it ran and what passed through it.
struct WorkerReport {
  unsigned lcore = 0;
  int cpu = -1;  // the CPU its lcore is pinned to
  uint64_t rx_packets = 0, tx_packets = 0;
  uint64_t dropped = 0;  // inside its pipeline and at its ports (no such port, TX ring full, ...)
  // Its stage in a pipelined placement (runtime/stages.hh; 0 when cloned), and the packets that
  // entered the stage on it: received from the ports and taken from its input rings.
  unsigned stage = 0;
  uint64_t stage_packets = 0;
  // The CPU time its thread had while it ran (less than the run's duration where the CPU is
  // shared): stage_packets / cpu_s is the stage's rate per CPU-second, which a loaded machine
  // changes less than the rate per wall-clock second. Polling without work counts as CPU time.
  double cpu_s = 0;
  // TSC cycles it spent sending the packets left in its transmit buffers after each loop
  // iteration: transmit work outside the elements' cycles (Worker::tx_flush_cycles).
  uint64_t tx_flush_cycles = 0;
  // TSC cycles of its loop iterations that received or dequeued packets (0: not timed: only a
  // worker with deferred packets times them, Worker::busy_cycles).
  uint64_t busy_cycles = 0;
};

// One ring between the workers of two stages (runtime/stages.hh): packets enqueued by the
// producer and dequeued by the consumer, enqueues that found it full and waited, and the most
// packets it held.
struct RingReport {
  std::string link;  // the Pipeliner
  int producer = 0, consumer = 0;
  unsigned capacity = 0;
  uint64_t enqueued = 0, dequeued = 0, back_pressure = 0, max_occupancy = 0;
  uint64_t dequeue_cycles = 0;  // the consumer's TSC cycles in dequeues that took packets
};

// How the run was made (issue 14's "say how the run was made"): enough to tell two reports apart
// and to repeat one.
struct RunMeta {
  std::string version;   // core/version.hh
  std::string git_hash;  // the commit the binary was built from
  bool hugepages = false;
  std::string packet_pools;  // io/mempool.hh packet_pool_memory()
  std::string pipeline;      // the pipeline file ("" for a pipeline given as text)
  // What elements said about how they loaded (skipped IDS rules...), in order.
  std::vector<std::string> notes;
};

struct PortReport {
  std::string spec;
  uint64_t rx_packets = 0, rx_bytes = 0, tx_packets = 0, tx_bytes = 0;
};

// One offload device the run used (offload/service.hh's DeviceStats); times are means per
// completed task, microseconds.
struct DeviceReport {
  std::string label;
  bool emulated = false;  // the emu backend: a model, never a GPU's figures
  std::string backend;    // offload::backend_name: "opencl", "cuda", "emu"
  bool on_host = false;   // computes on the host's cores (an OpenCL CPU device: PoCL)
  uint64_t batches = 0, packets = 0, tasks_ok = 0, tasks_failed = 0;
  double task_us = 0, queue_us = 0, device_us = 0, return_us = 0;
  double on_s = 0;  // 40 ms windows in which a task completed (DeviceStats::on_windows), seconds
  // Time at least one task was on the device (DeviceThread::busy_ns, summed over its threads):
  // tasks overlap on its queues, so tasks_ok x device_us overstates it.
  double busy_s = 0;
  // Releases of the idle device (--release-idle-ms, PolicyBalancer's energy policy;
  // Device::release), the next tasks' takings back, and its time released during the run.
  uint64_t releases = 0, reacquires = 0;
  double released_s = 0;
};

struct RunReport {
  double duration_s = 0;
  double tsc_hz = 0;  // the TSC's rate, for cycles to nanoseconds
  int workers = 0;
  uint32_t batch = 0;
  std::string placement = "clone";  // runtime/placement.hh's form
  unsigned stages = 1;
  RunMeta meta;
  std::vector<WorkerReport> per_worker;
  uint64_t packets_in = 0, bytes_in = 0;
  uint64_t packets_created = 0;  // made inside the pipeline by source elements
  uint64_t packets_out = 0, bytes_out = 0;
  uint64_t dropped = 0;
  uint64_t queued = 0;  // neither transmitted nor dropped at exit
  std::vector<PortReport> ports;
  std::vector<ElementReport> elements;
  std::vector<RingReport> rings;      // between stages, when pipelined
  std::vector<DeviceReport> devices;  // offload devices, when an offloadable element ran
  EnergyReport energy;                // CPU packages' energy over the run, when RAPL can be read
  std::vector<std::pair<std::string, uint64_t>> drops;  // "element/reason" -> count
  // Output that could not be written (alert logs, capture files); the run failed when not empty.
  std::vector<OutputLoss> output_losses;
  uint64_t stalls = 0;  // workers the watchdog reported (RunOptions::watchdog_s)
  // Hot reloads (runtime/reload.hh): tables replaced, and reloads refused (old table kept).
  uint64_t reloads = 0, reload_failures = 0;
  // RX-to-TX time per packet, with RunOptions::latency only (runtime/latency.hh).
  struct Latency {
    uint64_t samples = 0;
    double p50_us = 0, p90_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
  } latency;

  double mpps_in() const { return duration_s > 0 ? packets_in / duration_s / 1e6 : 0; }
  double mpps_out() const { return duration_s > 0 ? packets_out / duration_s / 1e6 : 0; }
  double gbps_in() const { return duration_s > 0 ? bytes_in * 8 / duration_s / 1e9 : 0; }
  double gbps_out() const { return duration_s > 0 ? bytes_out * 8 / duration_s / 1e9 : 0; }
  bool balanced() const {
    return packets_in + packets_created == packets_out + dropped + queued && queued == 0;
  }
};

std::string report_json(const RunReport& r);
std::string report_text(const RunReport& r);

}  // namespace fulcrum
