#include <cstdio>

#include "cli/commands.hh"

namespace fulcrum::cli {

int cmd_bench(const std::vector<std::string>&) {
  std::fprintf(stderr, "fulcrum bench: not built yet\n");
  return 1;
}

}  // namespace fulcrum::cli
