#include "elements/ip/check_ip_checksum_offload.hh"

#include "core/registry.hh"

namespace fulcrum {

FULCRUM_REGISTER_ELEMENT(CheckIPChecksumOffload);

}  // namespace fulcrum
