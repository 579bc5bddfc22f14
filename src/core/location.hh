// A place in a pipeline or table file, for error messages (file:line:column).
#pragma once

#include <string>

namespace fulcrum {

struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;

  std::string str() const {
    std::string s = file.empty() ? std::string("<config>") : file;
    if (line > 0) s += ":" + std::to_string(line);
    if (column > 0) s += ":" + std::to_string(column);
    return s;
  }
};

}  // namespace fulcrum
