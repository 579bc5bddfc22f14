#include <cstdio>
#include <cstdlib>

#include "bench/groups.hh"
#include "bench/harness.hh"
#include "cli/commands.hh"
#include "cli/device_option.hh"
#include "core/args.hh"

namespace fulcrum::cli {

int cmd_bench(const std::vector<std::string>& args) {
  bench::BenchOptions opt;
  DeviceOption devices;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--out" && has_value) {
      opt.out = args[++i];
    } else if (a == "--seconds" && has_value) {
      if (!parse_value(args[++i], opt.seconds) || opt.seconds <= 0) {
        std::fprintf(stderr, "fulcrum bench: --seconds needs a positive number, got '%s'\n",
                     args[i].c_str());
        return 2;
      }
    } else if (a == "--only" && has_value) {
      opt.only = args[++i];
    } else if (a == "--device" && has_value) {
      if (Status st = devices.add(args[++i]); !st) {
        std::fprintf(stderr, "fulcrum bench: %s\n", st.error().c_str());
        return 2;
      }
    } else if (a == "--small") {
      opt.large_tables = false;
    } else {
      std::fprintf(stderr,
                   "usage: fulcrum bench [--out FILE] [--seconds S per point (1)] [--only GROUP] "
                   "[--small] [--device emu:K=V,...]\n%s  groups:",
                   kDeviceOptionHelp);
      for (const bench::BenchGroup& g : bench::bench_groups()) std::fprintf(stderr, " %s", g.name);
      std::fprintf(stderr, "\n");
      return a == "--help" ? 0 : 2;
    }
  }
  devices.apply();
  return bench::run_benchmarks(opt);
}

}  // namespace fulcrum::cli
