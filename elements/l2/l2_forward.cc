#include "elements/l2/l2_forward.hh"

#include <string>

namespace fulcrum {

Status L2Forward::configure(Args& args) {
  std::string method, port;
  if (Status s = args.key("METHOD", method,
                          "echo (the default: out_port left as it is, so the frame leaves "
                          "through the port it came in on) or roundrobin (out_port cycles over "
                          "the runtime's ports, per element instance)")
                     .key("PORT", port,
                          "every frame leaves through this port (fewer than the number of "
                          "ports); not with METHOD")
                     .finish();
      !s)
    return s;
  loc_ = args.loc();
  if (!port.empty()) {
    if (!method.empty()) return args.error("METHOD and PORT exclude each other");
    if (!parse_value(port, next_port_) || next_port_ == kNoPort)
      return args.error("PORT: expected port number, got '" + port + "'");
    method_ = Method::kFixed;
  } else if (method.empty() || method == "echo") {
    method_ = Method::kEcho;
  } else if (method == "roundrobin") {
    method_ = Method::kRoundRobin;
  } else {
    return args.error("METHOD: expected echo or roundrobin, got '" + method + "'");
  }
  return {};
}

Status L2Forward::initialize(const InitContext& ctx) {
  // Errors here are formatted like the configuration errors they are.
  const Args args({}, loc_, name(), kTraits.class_name);
  nports_ = static_cast<uint16_t>(ctx.ports);
  // No ports: a pipeline checked on its own (InitContext::ports), nothing to check against.
  if (ctx.ports > 0 && method_ == Method::kFixed && next_port_ >= ctx.ports)
    return args.error("PORT " + std::to_string(next_port_) + " is not a port (" +
                      std::to_string(ctx.ports) + " ports)");
  if (method_ == Method::kRoundRobin) next_port_ = 0;
  return {};
}

}  // namespace fulcrum
