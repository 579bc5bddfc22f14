#include "elements/standard/counter.hh"

namespace fulcrum {

void CounterElement::counters(std::vector<Counter>& out) const {
  out.push_back({"count", count_.load(std::memory_order_relaxed)});
  out.push_back({"bytes", bytes_.load(std::memory_order_relaxed)});
}

}  // namespace fulcrum
