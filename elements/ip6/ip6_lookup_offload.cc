#include "elements/ip6/ip6_lookup_offload.hh"

#include "core/registry.hh"

namespace fulcrum {

FULCRUM_REGISTER_ELEMENT(IP6LookupOffload);

}  // namespace fulcrum
