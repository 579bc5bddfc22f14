// Placement: how a pipeline's elements are laid out over the workers' cores (paper 002).
//
// `clone` (the default) runs the whole pipeline to completion on every worker. A pipelined
// placement cuts the graph into stages: a cut names an element, and every edge into that element
// crosses a ring from one stage to the next (a `Pipeliner` goes in front of it; a cut that names
// a Pipeliner written in the configuration makes that one the boundary, and Pipeliners no cut
// names pass packets through). Stage 0 holds the inputs; `cores` gives
// the workers of each stage, in order, and sums to the run's worker count. A stage over several
// cores is a hybrid: it is cloned on them, and packets enter it by flow hash, so a flow keeps its
// order. `auto` asks the planner (fulcrum plan) for the placement it predicts fastest.
//
// The command-line form (`fulcrum run --placement SPEC`, printed by `fulcrum plan`):
//   clone | auto | cut=ELEMENT[,cut=ELEMENT...],cores=N0+N1[+N2...]
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"

namespace fulcrum {

struct Placement {
  bool automatic = false;
  std::vector<std::string> cuts;  // elements that begin stages 1, 2, ...
  std::vector<unsigned> cores;    // workers per stage; cuts.size() + 1 entries, or empty for clone

  bool cloned() const { return !automatic && cuts.empty(); }
  size_t stages() const { return cuts.size() + 1; }
};

// `spec` parsed; the error names what was expected. Cuts are checked against the pipeline's
// element names, and cores against the worker count, when the run is built, not here.
Result<Placement> parse_placement(std::string_view spec);

// The command-line form of `p` (parse_placement(to_string(p)) gives `p` back).
std::string to_string(const Placement& p);

}  // namespace fulcrum
