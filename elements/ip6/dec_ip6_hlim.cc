#include "elements/ip6/dec_ip6_hlim.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(DecIP6HLim);
}  // namespace fulcrum
