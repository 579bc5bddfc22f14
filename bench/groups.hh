// Benchmark groups: each registers a function that measures one experiment and returns its
// JSON. `fulcrum bench` runs them in order (--only picks by name).
#pragma once

#include <string>
#include <vector>

namespace fulcrum::bench {

struct BenchContext {
  double seconds = 1.0;      // per measured configuration
  std::string dir;           // a scratch directory for tables and captures
  bool large_tables = true;  // include the large-table variants
  // Groups that measure on both page sizes run the other one in a child process (router_cost).
  bool other_pages = true;
};

using BenchGroupFn = std::string (*)(const BenchContext&);

struct BenchGroup {
  int order;
  const char* name;
  BenchGroupFn run;
};

const std::vector<BenchGroup>& bench_groups();

struct BenchGroupRegistration {
  BenchGroupRegistration(int order, const char* name, BenchGroupFn run);
};

#define FULCRUM_BENCH_GROUP(order, name, fn)                                       \
  static const ::fulcrum::bench::BenchGroupRegistration fulcrum_bench_group_##fn { \
    order, name, fn                                                                \
  }

}  // namespace fulcrum::bench
