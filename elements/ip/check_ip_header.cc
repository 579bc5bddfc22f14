#include "elements/ip/check_ip_header.hh"

#include <sstream>
#include <string>

namespace fulcrum {

Status CheckIPHeader::configure(Args& args) {
  std::string badsrc;
  if (Status s = args.key("CHECKSUM", verify_checksum_, "verify the header checksum")
                     .key("BADSRC", badsrc,
                          "more source addresses to reject, space-separated (e.g. BADSRC "
                          "10.0.0.255 192.168.1.255)")
                     .finish();
      !s)
    return s;
  bad_sources_.clear();
  std::istringstream words(badsrc);
  for (std::string word; words >> word;) {
    uint32_t addr = 0;
    if (!parse_ipv4(word, addr))
      return args.error("BADSRC: expected IPv4 address, got '" + word + "'");
    bad_sources_.push_back(addr);
  }
  return {};
}

}  // namespace fulcrum
