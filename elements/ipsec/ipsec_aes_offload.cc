#include "elements/ipsec/ipsec_aes_offload.hh"

#include "elements/ipsec/ipsec_auth_hmac_sha1_offload.hh"

namespace fulcrum {

std::optional<offload::TaskLaunch> IPsecAESOffload::fuse(
    const Element& next, const std::vector<offload::TaskArg>& next_args) {
  const auto* hmac = dynamic_cast<const IPsecAuthHMACSHA1Offload*>(&next);
  if (hmac == nullptr || hmac->file() != file()) return std::nullopt;
  return offload::TaskLaunch{offload::kIpsecFusedKernel, next_args};
}

}  // namespace fulcrum
