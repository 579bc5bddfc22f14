#include "elements/standard/from_input.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(FromInput);
}  // namespace fulcrum
