#include "elements/ipsec/ipsec_auth_hmac_sha1_offload.hh"

namespace fulcrum {

static_assert(esp::kEspIcvLen == offload::kIpsecIcvBytes);

}  // namespace fulcrum
