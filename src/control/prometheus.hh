// The Prometheus text exposition (format 0.0.4) of a live state: ports, workers, elements
// (packets, batches, cycles, outputs, counters), drops by element and reason, devices, mempools
// and the run's metadata. Names follow Prometheus' conventions (fulcrum_ prefix, base units,
// _total for counters).
#pragma once

#include <string>

#include "runtime/live.hh"

namespace fulcrum::control {

std::string prometheus_text(const LiveState& state);

// A label value as the text format writes it: backslash, double quote and newline escaped.
std::string prometheus_label(std::string_view value);

}  // namespace fulcrum::control
