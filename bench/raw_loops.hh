// Ceilings measured in the same process as the pipelines: the rate of the bare DPDK loops that
// a pipeline run wraps.
#pragma once

#include <string>

namespace fulcrum::bench {

struct RawRate {
  double mpps = 0;      // packets per second of wall-clock time (M)
  double cpu_mpps = 0;  // packets per second of CPU time the loop's thread got (M)
};

// rx_burst + tx_burst on one port with nothing in between, on a worker lcore.
RawRate raw_echo(const std::string& port_spec, double seconds, unsigned burst = 64);
// raw_echo's wall-clock rate (Mpps).
inline double raw_echo_mpps(const std::string& port_spec, double seconds, unsigned burst = 64) {
  return raw_echo(port_spec, seconds, burst).mpps;
}

}  // namespace fulcrum::bench
