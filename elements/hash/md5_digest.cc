#include "elements/hash/md5_digest.hh"

#include "core/registry.hh"

namespace fulcrum {

FULCRUM_REGISTER_ELEMENT(MD5Digest);

}  // namespace fulcrum
