#include "cli/pipeline_options.hh"

#include "core/args.hh"
#include "core/suggest.hh"

namespace fulcrum::cli {

std::optional<std::string> shared_run_option(const std::vector<std::string>& args, size_t& i,
                                             RunOptions& options, DeviceOption& devices) {
  const std::string& a = args[i];
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

std::string positional_pipeline(const std::string& arg, std::string& pipeline_file,
                                const std::vector<std::string>& options) {
  if (!arg.empty() && arg[0] == '-')
    return "unknown option '" + arg + "'" + did_you_mean(arg, options);
  if (!pipeline_file.empty()) return "unexpected argument '" + arg + "'";
  pipeline_file = arg;
  return "";
}

}  // namespace fulcrum::cli
