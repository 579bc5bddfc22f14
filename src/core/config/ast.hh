// The parsed form of a pipeline file in the Click configuration language.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "core/location.hh"
#include "core/result.hh"

namespace fulcrum {

struct ConfigElement {
  std::string name;               // declared name, or a generated "Class@N" for anonymous elements
  std::string class_name;         // element class
  std::vector<std::string> args;  // one string per comma-separated argument, quotes removed
  SourceLoc loc;                  // where the element was declared
  bool anonymous = false;
};

struct ConfigConnection {
  size_t from;  // index into PipelineConfig::elements
  int from_port;
  size_t to;
  int to_port;
  SourceLoc loc;  // location of the "->"
};

struct PipelineConfig {
  std::string file;
  std::vector<ConfigElement> elements;
  std::vector<ConfigConnection> connections;
};

// Tells the parser whether a bare word names an element class (for anonymous elements).
using ClassLookup = std::function<bool(std::string_view)>;

// Parses `text` (the contents of `file`). Errors read "file:line:column: expected ..., got ...".
// `parameters` (NAME -> value, from the command line) replace $NAME in element arguments and
// take precedence over the file's define($NAME value); each must be used or defined by the file.
Result<PipelineConfig> parse_pipeline(std::string_view text, const std::string& file,
                                      const ClassLookup& is_class,
                                      const std::map<std::string, std::string>& parameters = {});

Result<PipelineConfig> parse_pipeline_file(
    const std::string& path, const ClassLookup& is_class,
    const std::map<std::string, std::string>& parameters = {});

}  // namespace fulcrum
