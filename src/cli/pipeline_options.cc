#include "cli/pipeline_options.hh"

#include <algorithm>
#include <cctype>

#include "core/args.hh"
#include "core/suggest.hh"

namespace fulcrum::cli {

bool option_value(const std::vector<std::string>& args, size_t& i, std::string& out) {
  if (i + 1 >= args.size()) return false;
  out = args[++i];
  return true;
}

std::optional<std::string> shared_run_option(const std::vector<std::string>& args, size_t& i,
                                             RunOptions& options, DeviceOption& devices) {
  const std::string& a = args[i];
  if (a == "--strict-rules") {
    options.strict_rules = true;
    return "";
  }
  if (a == "--energy-model") {
    if (i + 1 >= args.size()) return "--energy-model needs a file name";
    Result<EnergyModel> m = read_energy_model(args[++i]);
    if (!m) return m.error();
    options.energy_model = m.value();
    return "";
  }
  if (a == "--placement") {
    if (i + 1 >= args.size())
      return "--placement needs clone, auto or cut=ELEMENT[,cut=ELEMENT...],cores=N0+N1[+...]";
    Result<Placement> p = parse_placement(args[++i]);
    if (!p) return p.error();
    options.placement = p.value();
    return "";
  }
  if (a != "--port" && a != "--workers" && a != "--batch" && a != "--device") return std::nullopt;
  if (i + 1 >= args.size()) {
    if (a == "--port" || a == "--device") return a + " needs a value";
    return a == "--workers" ? "--workers needs a positive integer"
                            : "--batch needs an integer 1.." + std::to_string(kMaxBatch);
  }
  const std::string& v = args[++i];
  if (a == "--port") {
    options.ports.push_back(v);
  } else if (a == "--workers") {
    if (!parse_value(v, options.workers) || options.workers < 1)
      return "--workers needs a positive integer";
  } else if (a == "--batch") {
    if (!parse_value(v, options.batch) || options.batch < 1 || options.batch > kMaxBatch)
      return "--batch needs an integer 1.." + std::to_string(kMaxBatch);
  } else if (Status s = devices.add(v); !s) {
    return s.error();
  }
  return "";
}

std::string positional_pipeline(const std::string& arg, RunOptions& run,
                                const std::vector<std::string>& options) {
  if (!arg.empty() && arg[0] == '-')
    return "unknown option '" + arg + "'" + did_you_mean(arg, options);
  // NAME=value, NAME as in $NAME: letters, digits and '_', not starting with a digit.
  const size_t eq = arg.find('=');
  if (eq != std::string::npos && eq > 0 && !std::isdigit(static_cast<unsigned char>(arg[0])) &&
      std::all_of(arg.begin(), arg.begin() + static_cast<std::ptrdiff_t>(eq),
                  [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; })) {
    if (!run.parameters.emplace(arg.substr(0, eq), arg.substr(eq + 1)).second)
      return "parameter " + arg.substr(0, eq) + " given twice";
    return "";
  }
  if (!run.pipeline_file.empty()) return "unexpected argument '" + arg + "'";
  run.pipeline_file = arg;
  return "";
}

}  // namespace fulcrum::cli
