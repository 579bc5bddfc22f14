#include "elements/l2/ether_mirror.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(EtherMirror);
}  // namespace fulcrum
