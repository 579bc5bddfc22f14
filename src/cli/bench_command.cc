#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "bench/groups.hh"
#include "bench/harness.hh"
#include "cli/commands.hh"
#include "cli/device_option.hh"
#include "core/args.hh"
#include "core/suggest.hh"

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
      // Exact group names, comma-separated; an unknown one is an error (with the closest).
      std::vector<std::string> names;
      for (const bench::BenchGroup& g : bench::bench_groups()) names.emplace_back(g.name);
      const std::string list = args[++i];
      size_t pos = 0;
      while (pos <= list.size()) {
        const size_t comma = std::min(list.find(',', pos), list.size());
        const std::string name = list.substr(pos, comma - pos);
        pos = comma + 1;
        if (std::find(names.begin(), names.end(), name) == names.end()) {
          std::fprintf(
              stderr, "fulcrum bench: --only: no group '%s'%s; `fulcrum bench --list` lists them\n",
              name.c_str(), did_you_mean(name, names).c_str());
          return 2;
        }
        opt.only.push_back(name);
      }
    } else if (a == "--list") {
      for (const bench::BenchGroup& g : bench::bench_groups()) std::printf("%s\n", g.name);
      return 0;
    } else if (a == "--device" && has_value) {
      if (Status st = devices.add(args[++i]); !st) {
        std::fprintf(stderr, "fulcrum bench: %s\n", st.error().c_str());
        return 2;
      }
    } else if (a == "--small") {
      opt.large_tables = false;
    } else if (a == "--no-huge") {
      opt.no_huge = true;
    } else if (a == "--no-other-pages") {
      opt.other_pages = false;
    } else if (a == "--keep" && has_value) {
      opt.keep_dir = args[++i];
    } else {
      std::fprintf(stderr,
                   "usage: fulcrum bench [--out FILE] [--seconds S per point (1)] "
                   "[--only GROUP,GROUP...] [--list] [--small] [--no-huge] [--no-other-pages] "
                   "[--keep DIR] [--device emu:K=V,...]\n"
                   "  --keep DIR         write the groups' routes and captures into DIR and keep "
                   "them\n%s  groups:",
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
