// Graph passes: analyses a subsystem runs over a built pipeline, after every element is
// initialised and before the first packet (the offload layer's chaining pass is one). A pass
// registers itself with FULCRUM_REGISTER_GRAPH_PASS(name, function) in its .cc file; passes run
// in name order, and an error stops the pipeline from being built.
#pragma once

#include <map>
#include <string>

#include "core/result.hh"

namespace fulcrum {

class Pipeline;
using GraphPass = Status (*)(Pipeline&);

inline std::map<std::string, GraphPass>& graph_passes() {
  static std::map<std::string, GraphPass> passes;
  return passes;
}

struct GraphPassRegistration {
  GraphPassRegistration(const char* name, GraphPass pass) { graph_passes()[name] = pass; }
};

#define FULCRUM_REGISTER_GRAPH_PASS(name, function) \
  static const ::fulcrum::GraphPassRegistration fulcrum_graph_pass_##name(#name, function)

}  // namespace fulcrum
