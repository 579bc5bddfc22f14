#include "bench/harness.hh"

#include <rte_eal.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "io/eal.hh"

namespace fulcrum::bench {
namespace {

constexpr int kBenchMemoryMb = 2048;
// Worker lcores: one runs every group; the scaling group runs the router on two.
constexpr int kBenchWorkers = 2;

std::vector<BenchGroup>& groups() {
  static std::vector<BenchGroup> all;
  return all;
}

}  // namespace

BenchGroupRegistration::BenchGroupRegistration(int order, const char* name, BenchGroupFn run) {
  groups().push_back(BenchGroup{order, name, run});
  std::sort(groups().begin(), groups().end(),
            [](const BenchGroup& a, const BenchGroup& b) { return a.order < b.order; });
}

const std::vector<BenchGroup>& bench_groups() {
  return groups();
}

int run_benchmarks(const BenchOptions& options) {
  EalOptions eal;
  eal.workers = kBenchWorkers;
  eal.memory_mb = kBenchMemoryMb;
  eal.force_no_huge = options.no_huge;
  if (Status st = init_eal(eal); !st) {
    std::fprintf(stderr, "fulcrum bench: %s\n", st.error().c_str());
    return 1;
  }
  BenchContext ctx;
  ctx.seconds = options.seconds;
  ctx.large_tables = options.large_tables;
  ctx.other_pages = options.other_pages;
  ctx.dir =
      !options.keep_dir.empty()
          ? options.keep_dir
          : (std::filesystem::temp_directory_path() / ("fulcrum-bench-" + std::to_string(getpid())))
                .string();
  std::error_code ec;
  std::filesystem::create_directories(ctx.dir, ec);
  if (ec) {
    std::fprintf(stderr, "fulcrum bench: cannot create %s: %s\n", ctx.dir.c_str(),
                 ec.message().c_str());
    return 1;
  }

  std::string json = "{\n  \"machine_cores\": " + std::to_string(sysconf(_SC_NPROCESSORS_ONLN)) +
                     ",\n  \"seconds_per_point\": " + fmt(options.seconds) +
                     ",\n  \"workers\": 1,\n  \"batch\": 64,\n  \"hugepages\": " +
                     (rte_eal_has_hugepages() != 0 ? "true" : "false");
  // With --out the file is rewritten after every group (through a rename, so it is always whole
  // JSON), "complete" false until the last: a run stopped by a time limit keeps the groups it
  // finished.
  const auto finish = [&](bool complete) {
    return json + ",\n  \"complete\": " + (complete ? "true" : "false") + "\n}\n";
  };
  const auto write_out = [&](bool complete) {
    const std::string part = options.out + ".part";
    std::ofstream(part) << finish(complete);
    std::error_code rename_ec;
    std::filesystem::rename(part, options.out, rename_ec);
    if (rename_ec)
      std::fprintf(stderr, "fulcrum bench: cannot write %s: %s\n", options.out.c_str(),
                   rename_ec.message().c_str());
  };
  for (const BenchGroup& g : bench_groups()) {
    if (!options.only.empty() &&
        std::find(options.only.begin(), options.only.end(), g.name) == options.only.end())
      continue;
    json += ",\n  \"" + std::string(g.name) + "\": " + g.run(ctx);
    if (!options.out.empty()) write_out(false);
  }
  if (options.keep_dir.empty()) std::filesystem::remove_all(ctx.dir, ec);
  if (options.out.empty()) {
    std::fputs(finish(true).c_str(), stdout);
  } else {
    write_out(true);
    std::fprintf(stderr, "bench: wrote %s\n", options.out.c_str());
  }
  return 0;
}

}  // namespace fulcrum::bench
