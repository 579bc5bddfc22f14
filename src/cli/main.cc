#include <cstdio>
#include <string>
#include <vector>

#include "cli/commands.hh"
#include "core/suggest.hh"
#include "core/version.hh"

namespace {

constexpr const char* kUsage = R"(fulcrum: a batch-oriented packet-processing framework on DPDK

usage:
  fulcrum run PIPELINE.click [NAME=VALUE ...] --port SPEC [--port SPEC ...] [options]
  fulcrum check PIPELINE.click [NAME=VALUE ...] [--ports N | --port SPEC ...]
                                   load and check a pipeline without moving packets
  fulcrum graph PIPELINE.click [--dot | --svg] [--out FILE]
                                   draw the pipeline (Graphviz)
  fulcrum elements [NAME]          list element classes, or print one element's manual
  fulcrum pcap OUT.pcap [gen:...] [--packets N]
                                   write the built-in generator's frames as a capture
  fulcrum bench [--out FILE]       run the benchmark harness (JSON)
  fulcrum devices [--json]         list the offload backends and devices (GPUs, OpenCL)
  fulcrum profile PIPELINE.click --port SPEC ... --out PROFILE.json
                                   measure every device mix for PolicyBalancer
  fulcrum plan PIPELINE.click --cores N --port SPEC ... [--calibration FILE] [--json]
                                   predict cloning, pipelining and hybrid placements
                                   (paper 002) and batch/prefetch (paper 003); --calibrate
                                   measures this machine (docs/placement-model.md)
  fulcrum proxy CONFIG --listen 127.0.0.1:PORT --backend A.B.C.D:PORT [...]
                                   the L7 reverse proxy with an NF chain (docs/l7.md)
  fulcrum help | --help
  fulcrum --version               the version and the git commit it was built from

`fulcrum run --help` lists the run options.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    std::printf("fulcrum %s (git %s)\n", fulcrum::version(), fulcrum::git_hash());
    return 0;
  }
  const std::string cmd = args[0];
  args.erase(args.begin());
  if (cmd == "run") return fulcrum::cli::cmd_run(args);
  if (cmd == "elements") return fulcrum::cli::cmd_elements(args);
  if (cmd == "bench") return fulcrum::cli::cmd_bench(args);
  if (cmd == "devices") return fulcrum::cli::cmd_devices(args);
  if (cmd == "check") return fulcrum::cli::cmd_check(args);
  if (cmd == "graph") return fulcrum::cli::cmd_graph(args);
  if (cmd == "profile") return fulcrum::cli::cmd_profile(args);
  if (cmd == "pcap") return fulcrum::cli::cmd_pcap(args);
  if (cmd == "proxy") return fulcrum::cli::cmd_proxy(args);
  if (cmd == "plan") return fulcrum::cli::cmd_plan(args);
  std::fprintf(stderr, "fulcrum: unknown command '%s'%s\n\n%s", cmd.c_str(),
               fulcrum::did_you_mean(cmd, {"run", "check", "graph", "elements", "bench", "devices",
                                           "profile", "pcap", "proxy", "plan", "help", "--version"})
                   .c_str(),
               kUsage);
  return 2;
}
