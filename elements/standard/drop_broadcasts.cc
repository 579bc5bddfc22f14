#include "elements/standard/drop_broadcasts.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(DropBroadcasts);
}  // namespace fulcrum
