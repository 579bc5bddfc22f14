// The chaining pass (datablock reuse, NBA §3.3 and its graph analysis): after every element is
// initialised, each offloadable element is offered the offloadable elements that follow it in a
// line (its only output feeds an element with no other input) while their region datablock has
// its name; each one taken joins its tasks (OffloadStage::chain). Then each task's kernels run
// once with nothing to do (OffloadStage::warm), before traffic.
#include "core/graph.hh"
#include "offload/stage/offload_stage.hh"

namespace fulcrum::offload {
namespace {

Status chain_offload_stages(Pipeline& pipeline) {
  const size_t n = pipeline.nodes().size();
  std::vector<bool> chained(n, false);
  for (size_t i = 0; i < n; ++i) {
    if (chained[i]) continue;
    OffloadStage* head = pipeline.element(i).offload_stage();
    if (head == nullptr) continue;
    for (int next = pipeline.only_successor(i); next >= 0;
         next = pipeline.only_successor(static_cast<size_t>(next))) {
      OffloadStage* stage = pipeline.element(static_cast<size_t>(next)).offload_stage();
      if (stage == nullptr) break;
      Result<bool> took = head->chain(*stage);  // false unless the region names match
      if (!took) return make_error(pipeline.nodes()[i].loc.str() + ": " + took.error());
      if (!took.value()) break;
      chained[static_cast<size_t>(next)] = true;
    }
  }
  for (size_t i = 0; i < n; ++i)
    if (OffloadStage* stage = pipeline.element(i).offload_stage(); stage != nullptr && !chained[i])
      stage->warm();
  return {};
}

}  // namespace

FULCRUM_REGISTER_GRAPH_PASS(offload_chaining, chain_offload_stages);

}  // namespace fulcrum::offload
