// What the commands that read a pipeline share on their command line: the options --port,
// --workers, --placement, --batch, --device and --strict-rules (run, check, profile), and the one
// positional argument, PIPELINE, next to which anything else starting with '-' is an unknown
// option; and
// --capture, which edits the pipeline as it is loaded (run).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/device_option.hh"
#include "runtime/runtime.hh"

namespace fulcrum::cli {

// The value after option args[i] into `out` (i moves onto it); false when there is none.
bool option_value(const std::vector<std::string>& args, size_t& i, std::string& out);

// Reads args[i] when it is --port, --workers, --placement, --batch or --device, with its value (i
// moves past it), or --strict-rules. nullopt: args[i] is none of them; "": read; otherwise the
// usage error.
std::optional<std::string> shared_run_option(const std::vector<std::string>& args, size_t& i,
                                             RunOptions& options, DeviceOption& devices);

// args[i] is no option the command knows: a parameter NAME=value for $NAME in the pipeline,
// or the pipeline file when it is the first other positional argument (""), otherwise the usage
// error ("unknown option '-x'" with the closest of `options`, "unexpected argument 'x'",
// "parameter NAME given twice").
std::string positional_pipeline(const std::string& arg, RunOptions& run,
                                const std::vector<std::string>& options);

// --capture ELEMENT[PORT]=FILE[,snaplen=N][,limit=N] (run; capture_option.cc): records the
// packets leaving ELEMENT's output PORT (0 when left out) in FILE without editing the
// configuration, through a pass-through ToDump that options.rewrite puts on that edge (after the
// rewrites already there). Reads the value at args[i + 1] (i moves onto it); "" when read,
// otherwise the usage error. An element or output the pipeline lacks is an error when the
// pipeline is loaded.
std::string capture_option(const std::vector<std::string>& args, size_t& i, RunOptions& options);

}  // namespace fulcrum::cli
