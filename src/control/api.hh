// The control plane's JSON: the live state (the --stats-json report so far, rates over the last
// window, mempools) and the pipeline graph, as served at /api/stats and /api/graph.
#pragma once

#include <string>

#include "runtime/live.hh"

namespace fulcrum::control {

std::string stats_json(const LiveState& state);
std::string graph_json(const LiveGraph& graph);

}  // namespace fulcrum::control
