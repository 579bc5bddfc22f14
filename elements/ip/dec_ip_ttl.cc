#include "elements/ip/dec_ip_ttl.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(DecIPTTL);
}  // namespace fulcrum
