#include "elements/standard/discard.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(Discard);
}  // namespace fulcrum
