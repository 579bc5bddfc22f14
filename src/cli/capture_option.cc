// --capture for `fulcrum run` (declared in pipeline_options.hh): parsing the tap and putting a
// ToDump on the edge it names.
#include <algorithm>
#include <set>

#include "cli/pipeline_options.hh"
#include "core/args.hh"
#include "core/suggest.hh"

namespace fulcrum::cli {
namespace {

constexpr const char* kForm = "ELEMENT[PORT]=FILE[,snaplen=N][,limit=N]";

struct Tap {
  std::string spec;  // as given, for messages
  std::string element;
  int port = 0;
  std::string file;
  uint32_t snaplen = 0;
  int64_t limit = 0;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  size_t start = 0;
  for (size_t at = s.find(sep); at != std::string::npos; at = s.find(sep, start)) {
    parts.push_back(s.substr(start, at - start));
    start = at + 1;
  }
  parts.push_back(s.substr(start));
  return parts;
}

Result<Tap> parse_tap(const std::string& spec) {
  Tap t;
  t.spec = spec;
  const std::string what = "--capture " + spec + ": ";
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0) return make_error(what + "expected " + kForm);
  t.element = spec.substr(0, eq);
  if (t.element.back() == ']') {
    const size_t open = t.element.find('[');
    const std::string port =
        open == std::string::npos ? "" : t.element.substr(open + 1, t.element.size() - open - 2);
    if (open == 0 || !parse_value(port, t.port) || t.port < 0)
      return make_error(what + "expected ELEMENT[PORT] with PORT an output number, got '" +
                        t.element + "'");
    t.element.resize(open);
  }
  const std::vector<std::string> parts = split(spec.substr(eq + 1), ',');
  t.file = parts.front();
  if (t.file.empty()) return make_error(what + "no FILE after '='; expected " + kForm);
  std::set<std::string> seen;
  for (size_t k = 1; k < parts.size(); ++k) {
    const size_t at = parts[k].find('=');
    const std::string key = parts[k].substr(0, at);
    const std::string value = at == std::string::npos ? "" : parts[k].substr(at + 1);
    if (!seen.insert(key).second) return make_error(what + key + " given twice");
    if (key == "snaplen") {
      if (!parse_value(value, t.snaplen))
        return make_error(what + "snaplen needs a number of bytes, got '" + value + "'");
    } else if (key == "limit") {
      if (!parse_value(value, t.limit) || t.limit < 0)
        return make_error(what + "limit needs a number of packets, got '" + value + "'");
    } else {
      return make_error(what + "unknown key '" + key + "'" +
                        did_you_mean(key, {"snaplen", "limit"}) + "; expected " + kForm);
    }
  }
  return t;
}

// Puts a ToDump on the edge that leaves t.element's output t.port.
Status insert_tap(PipelineConfig& config, const Tap& t) {
  const std::string what = "--capture " + t.spec + ": ";
  auto named = [&](const std::string& name) {
    return std::find_if(config.elements.begin(), config.elements.end(),
                        [&](const ConfigElement& e) { return e.name == name; });
  };
  const auto element = named(t.element);
  if (element == config.elements.end()) {
    std::vector<std::string> names;
    for (const ConfigElement& e : config.elements) names.push_back(e.name);
    return make_error(what + "no element '" + t.element + "' in " + config.file +
                      did_you_mean(t.element, names));
  }
  const auto from = static_cast<size_t>(element - config.elements.begin());
  const std::string output = "output " + std::to_string(t.port) + " of '" + t.element + "'";
  const std::string tap_name = "capture@" + t.element + "[" + std::to_string(t.port) + "]";
  if (named(tap_name) != config.elements.end())
    return make_error(what + output + " is captured twice");
  ConfigConnection* edge = nullptr;
  std::vector<int> connected;
  for (ConfigConnection& c : config.connections) {
    if (c.from != from) continue;
    connected.push_back(c.from_port);
    if (c.from_port == t.port) edge = &c;
  }
  if (edge == nullptr) {
    std::sort(connected.begin(), connected.end());
    std::string list;
    for (int p : connected) list += (list.empty() ? "" : ", ") + std::to_string(p);
    return make_error(
        what + output + " (" + element->class_name + ") leads nowhere; " +
        (list.empty() ? "it has no connected output" : "its connected outputs: " + list));
  }
  ConfigElement dump;
  dump.name = tap_name;
  dump.class_name = "ToDump";
  dump.args = {t.file, "SNAPLEN " + std::to_string(t.snaplen), "LIMIT " + std::to_string(t.limit)};
  dump.loc = edge->loc;
  const ConfigConnection after{config.elements.size(), 0, edge->to, edge->to_port, edge->loc};
  edge->to = config.elements.size();
  edge->to_port = 0;
  config.elements.push_back(std::move(dump));
  config.connections.push_back(after);
  return {};
}

}  // namespace

std::string capture_option(const std::vector<std::string>& args, size_t& i, RunOptions& options) {
  std::string spec;
  if (!option_value(args, i, spec)) return std::string("--capture needs ") + kForm;
  Result<Tap> tap = parse_tap(spec);
  if (!tap) return tap.error();
  options.rewrite = [before = std::move(options.rewrite),
                     t = tap.value()](PipelineConfig& config) -> Status {
    if (before)
      if (Status s = before(config); !s) return s;
    return insert_tap(config, t);
  };
  return "";
}

}  // namespace fulcrum::cli
