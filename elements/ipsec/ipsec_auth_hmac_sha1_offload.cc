#include "elements/ipsec/ipsec_auth_hmac_sha1_offload.hh"

#include "core/registry.hh"

namespace fulcrum {

static_assert(esp::kEspIcvLen == offload::kIpsecIcvBytes);

FULCRUM_REGISTER_ELEMENT(IPsecAuthHMACSHA1Offload);

}  // namespace fulcrum
