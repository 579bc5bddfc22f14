// The KEY=VALUE list of a built-in port's --port value ("gen:size=64,flows=8",
// "replay:file=t.pcap,loops=2"): what follows the first ':', split at ',', empty pieces skipped.
// A piece without '=' or a key given twice is an error naming the spec; what the keys mean is the
// port's own parser's business (io/gen_port.cc, io/replay_port.cc).
#pragma once

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/result.hh"

namespace fulcrum {

using SpecKeys = std::vector<std::pair<std::string, std::string>>;

// `kind` names the port in the duplicate-key error ("generator", "replay").
inline Result<SpecKeys> spec_keys(const std::string& spec, const std::string& kind) {
  const size_t colon = spec.find(':');
  const std::string body = colon == std::string::npos ? std::string() : spec.substr(colon + 1);
  SpecKeys out;
  std::set<std::string> seen;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t end = body.find(',', pos);
    if (end == std::string::npos) end = body.size();
    const std::string kv = body.substr(pos, end - pos);
    pos = end + 1;
    if (kv.empty()) continue;
    const size_t eq = kv.find('=');
    if (eq == std::string::npos)
      return make_error("--port " + spec + ": expected KEY=VALUE, got '" + kv + "'");
    std::string key = kv.substr(0, eq);
    if (!seen.insert(key).second)
      return make_error("--port " + spec + ": " + kind + " key '" + key + "' given twice");
    out.emplace_back(std::move(key), kv.substr(eq + 1));
  }
  return out;
}

}  // namespace fulcrum
