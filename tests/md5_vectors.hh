// RFC 1321 appendix A.5's test suite: messages and their MD5 digests (hex), the RFC's, not
// computed by us. Shared by the MD5 tests of the CPU, multi-buffer and device paths.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fulcrum::testing {

inline std::vector<std::pair<std::string, std::string>> rfc1321_suite() {
  return {{"", "d41d8cd98f00b204e9800998ecf8427e"},
          {"a", "0cc175b9c0f1b6a831c399e269772661"},
          {"abc", "900150983cd24fb0d6963f7d28e17f72"},
          {"message digest", "f96b697d7cb7938d525a2f31aaf161d0"},
          {"abcdefghijklmnopqrstuvwxyz", "c3fcd3d76192e4007dfb496cca67e13b"},
          {"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
           "d174ab98d277d9f5a5611c2c9f419d9f"},
          {"1234567890123456789012345678901234567890"
           "1234567890123456789012345678901234567890",
           "57edf4a22be3c955ac49da2e2107b67a"}};
}

}  // namespace fulcrum::testing
