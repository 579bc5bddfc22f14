// What the commands that read a pipeline share on their command line: the options --port,
// --workers, --batch and --device (run, check, profile), and the one positional argument,
// PIPELINE, next to which anything else starting with '-' is an unknown option.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/device_option.hh"
#include "runtime/runtime.hh"

namespace fulcrum::cli {

// Reads args[i] when it is --port, --workers, --batch or --device, with its value (i moves past
// it). nullopt: args[i] is none of them; "": read; otherwise the usage error.
std::optional<std::string> shared_run_option(const std::vector<std::string>& args, size_t& i,
                                             RunOptions& options, DeviceOption& devices);

// args[i] is no option the command knows: the pipeline file when it is the first positional
// argument (""), otherwise the usage error ("unknown option '-x'" with the closest of
// `options`, or "unexpected argument 'x'").
std::string positional_pipeline(const std::string& arg, std::string& pipeline_file,
                                const std::vector<std::string>& options);

}  // namespace fulcrum::cli
