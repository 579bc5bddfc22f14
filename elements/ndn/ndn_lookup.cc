#include "elements/ndn/ndn_lookup.hh"

#include <algorithm>
#include <sstream>

#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "core/text_file.hh"

namespace fulcrum {
namespace {

Result<std::shared_ptr<NameTable>> load_names(const std::string& file) {
  Result<std::string> text = read_input_file(file, "name file");
  if (!text) return make_error(text.error());
  auto table = std::make_shared<NameTable>();
  std::istringstream in(text.value());
  std::string line;
  for (int lineno = 1; std::getline(in, line); ++lineno) {
    const std::string where = file + ":" + std::to_string(lineno) + ": ";
    line = line.substr(0, line.find('#'));
    std::istringstream fields(line);
    std::string uri, port_text, extra;
    if (!(fields >> uri)) continue;
    uint16_t port = 0;
    if (!(fields >> port_text) || !parse_value(port_text, port) || (fields >> extra))
      return make_error(where + "expected \"/name PORT\"");
    if (Status s = table->add(uri, port); !s) return make_error(where + s.error());
  }
  if (Status s = table->build(); !s) return make_error(file + ": " + s.error());
  return table;
}

}  // namespace

Status NDNLookup::configure(Args& args) {
  loc_ = args.loc();
  return args.positional("FILE", file_).finish();
}

Status NDNLookup::initialize(const InitContext& ctx) {
  ports_ = static_cast<uint16_t>(std::clamp(ctx.ports, 0, int{NameTable::kMaxPort} + 1));
  Result<std::shared_ptr<const NameTable>> table = shared_or_own<NameTable>(
      ctx.shared, "ndn-names:" + file_, [this] { return load_names(file_); });
  if (!table) {
    const Args args({}, loc_, name(), kTraits.class_name);
    return args.error(table.error());
  }
  table_ = table.value();
  return {};
}

FULCRUM_REGISTER_ELEMENT(NDNLookup);

}  // namespace fulcrum
