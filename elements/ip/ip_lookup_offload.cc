#include "elements/ip/ip_lookup_offload.hh"

#include "core/registry.hh"

namespace fulcrum {

FULCRUM_REGISTER_ELEMENT(IPLookupOffload);

}  // namespace fulcrum
