// Measuring the machine for the calibration (calibration.hh): cache sizes from sysfs, the TSC
// rate, memory latency by pointer chasing over buffers sized for each cache level, and the cost of
// handing packets from one core to another through an rte_ring. Each takes well under a second.
#pragma once

#include <string>

#include "core/result.hh"
#include "plan/calibration.hh"

namespace fulcrum::plan {

// Cache sizes of cpu0 from `sysfs_cache` (/sys/devices/system/cpu/cpu0/cache: index*/level,
// type, size, shared_cpu_list, coherency_line_size) and the online CPU count. Errors name the
// file that could not be read.
Result<MachineInfo> read_machine_info(
    const std::string& sysfs_cache = "/sys/devices/system/cpu/cpu0/cache");

// The TSC rate: DPDK's when the EAL is up, else measured against the steady clock.
double tsc_hz();

// Cycles per dependent load with the data in each level (a random cyclic pointer chase over a
// buffer of half of L1, half of L2, and four times the LLC), and the misses to memory that
// overlap (independent chases at once over the largest buffer). Sets m.llc_bytes to the LLC as
// measured: the largest buffer, doubling from twice L2 to the sysfs size, whose chase stays
// below the midpoint of the L2 and memory latencies; its latency is the LLC's. Also the
// group reads over the largest buffer (measure_group_reads).
MemoryLatency measure_memory_latency(MachineInfo& m);

// One random pointer chase over `bytes`: cycles per access.
double chase_cycles(size_t bytes, size_t line_bytes, unsigned chains = 1);

// Random lines of `bytes` read in groups of 1..64, each group prefetched one group ahead of its
// reads or just before them: cycles per line into lat.group_ahead_line_cycles and
// group_within_line_cycles (left 0 when the buffer could not be mapped).
void measure_group_reads(size_t bytes, size_t line_bytes, MemoryLatency& lat);

// The ring hand-off (calibration.hh RingCost): producer on one CPU, consumer on another when the
// machine has two; bursts of `batch` packets, and of batch / 8 for the cost of a burst. Needs the
// EAL (rte_ring lives in its memory).
// Also fills RingCost::line_read_cycles and line_rewrite_cycles (measure_frame_lines).
Result<RingCost> measure_ring(unsigned batch, unsigned cpus);

// The cost of the frame's lines beyond the header's (RingCost::line_read_cycles,
// line_rewrite_cycles) at cost.batch: the ring again with frames of 8 lines, the producer writing
// every line, the consumer reading the first two lines, then all 8 one after the other; and
// RingCost::line_scan_cycles: the same with the consumer working on each line and asking for each
// frame's lines kWholeFrameReadAhead packets ahead, as the runtime's whole-frame readers do.
// Left as they are on one CPU.
Status measure_frame_lines(RingCost& cost, unsigned cpus);

}  // namespace fulcrum::plan
