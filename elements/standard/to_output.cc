#include "elements/standard/to_output.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(ToOutput);
}  // namespace fulcrum
