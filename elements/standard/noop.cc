#include "elements/standard/noop.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(NoOp);
}  // namespace fulcrum
