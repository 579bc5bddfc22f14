// Fuzz target: `fulcrum run`'s command line (src/cli/run_command.cc, cmd_run), in a sandbox.
//
// cmd_run parses its options and, in the same function, loads the pipeline file the command line
// names and starts DPDK. So that no fuzzed command line ever reaches a file or the EAL, the target
// runs in an empty directory of its own and skips inputs with a '/' in any argument: the pipeline
// file never exists, and cmd_run must return (usage error 2, --help 0, or 1 for the missing file)
// before the EAL starts. Run with -close_fd_mask=3 (fuzz/run.py does): every call prints a usage
// message. A parse_run_args() split out of cmd_run would let a target check the parsed options
// themselves (docs/reliability.md).
//
// Input: the arguments after `fulcrum run`, separated by NUL bytes.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "cli/commands.hh"
#include "fuzz_support.hh"
#include "io/eal.hh"

namespace {

constexpr int kExitOk = 0, kExitError = 1, kExitUsage = 2;

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  constexpr mode_t kPrivate = 0700;
  const std::string& dir = fulcrum::fuzz::scratch_path("run-args");  // removed at exit (empty)
  FUZZ_CHECK(mkdir(dir.c_str(), kPrivate) == 0, "cannot make the sandbox directory " + dir);
  FUZZ_CHECK(chdir(dir.c_str()) == 0, "cannot enter " + dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fulcrum;
  std::vector<std::string> args = fuzz::split(fuzz::as_text(data, size), '\0');
  for (const std::string& a : args)
    if (a.find('/') != std::string::npos) return 0;
  const int rc = cli::cmd_run(args);
  FUZZ_CHECK(rc == kExitOk || rc == kExitError || rc == kExitUsage,
             "exit status " + std::to_string(rc));
  FUZZ_CHECK(!eal_ready(), "the EAL was started for a command line without a pipeline file");
  return 0;
}
