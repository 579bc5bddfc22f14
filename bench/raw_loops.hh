// Ceilings measured in the same process as the pipelines: the rate of the bare DPDK loops that
// a pipeline run wraps.
#pragma once

#include <string>

namespace fulcrum::bench {

// rx_burst + tx_burst on one port with nothing in between, on a worker lcore (Mpps).
double raw_echo_mpps(const std::string& port_spec, double seconds, unsigned burst = 64);

}  // namespace fulcrum::bench
