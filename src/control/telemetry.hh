// Fulcrum's commands on DPDK's telemetry socket (/var/run/dpdk/fulcrumPID/dpdk_telemetry.v2,
// read with DPDK's usertools/dpdk-telemetry.py), answered from the live view:
//   /fulcrum/info      version, commit, pipeline, workers, uptime, running
//   /fulcrum/stats     the packet balance: received, created, transmitted, dropped, in flight
//   /fulcrum/ports     port indices; /fulcrum/port,N the port's counters and device string
//   /fulcrum/drops     drops by "element/reason"
//   /fulcrum/elements  packets into each element
// (dict keys keep letters, digits, '_' and '/', DPDK's rule: other characters become '_')
// DPDK's own commands (/ethdev/stats, /mempool/list, ...) answer beside them.
#pragma once

#include "runtime/live.hh"

namespace fulcrum::control {

// Registers the commands once per process; they read `live` (which must outlive the process's
// telemetry thread: a global).
void register_telemetry(LiveView& live);

}  // namespace fulcrum::control
