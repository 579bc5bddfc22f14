#include "elements/ip6/check_ip6_header.hh"

#include "core/registry.hh"

namespace fulcrum {
FULCRUM_REGISTER_ELEMENT(CheckIP6Header);
}  // namespace fulcrum
