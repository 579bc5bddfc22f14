#include "elements/l2/cross_connect.hh"

#include <sstream>
#include <string>

namespace fulcrum {

Status CrossConnect::configure(Args& args) {
  peer_.fill(kNoPort);
  const std::vector<std::string> pairs =
      args.rest("\"A B\"",
                "at least one port pair: frames from A leave by B and frames from B by A; a port "
                "may be in one pair only; \"A A\" sends a port's frames back through it");
  if (Status s = args.finish(); !s) return s;
  if (pairs.empty()) return args.error("expected at least one port pair \"A B\"");
  loc_ = args.loc();
  for (const std::string& pair : pairs) {
    std::istringstream in(pair);
    std::string a_text, b_text, extra;
    uint16_t a = 0, b = 0;
    in >> a_text >> b_text >> extra;
    if (!parse_value(a_text, a) || !parse_value(b_text, b) || !extra.empty())
      return args.error("expected a port pair \"A B\", got '" + pair + "'");
    if (a >= kMaxPorts || b >= kMaxPorts)
      return args.error("port pair '" + pair + "': ports must be below " +
                        std::to_string(kMaxPorts));
    if (peer_[a] != kNoPort || peer_[b] != kNoPort)
      return args.error("port pair '" + pair + "': a port may be in one pair only");
    peer_[a] = b;
    peer_[b] = a;
  }
  return {};
}

Status CrossConnect::initialize(const InitContext& ctx) {
  const Args args({}, loc_, name(), kTraits.class_name);
  for (uint16_t port = 0; port < kMaxPorts; ++port)
    if (ctx.ports > 0 && peer_[port] != kNoPort && port >= ctx.ports)
      return args.error("port " + std::to_string(port) + " is not a port (" +
                        std::to_string(ctx.ports) + " ports)");
  return {};
}

}  // namespace fulcrum
