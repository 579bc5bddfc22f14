// Bench group "placement": paper 003's batch and prefetch model (src/plan/batch_model.hh)
// against a measured sweep. For each lookup table (DIR-24-8, the IPv6 trie, the MAC table, the
// NDN name table) at two sizes (one that fits the caches, one far beyond the LLC), every batch
// size x prefetch group of the grid is measured (cycles per lookup, the least of three rounds),
// and the model's choice, made from the machine's calibration and the table's own probe (its
// compute with data in L1), is compared with the sweep's best point: the target is within 5 %.
// Also: the run-time group's cost on the default path (lookup_bulk with the table's default group
// through the run-time switch vs the compile-time entry, alternated; their ratio).
//
// Predicted vs measured throughput per placement (paper 002's model): the group
// placement_verify (bench/placement_verify_bench.cc).
#include <rte_cycles.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "lib/dir24_8.hh"
#include "lib/ip6_trie.hh"
#include "lib/mac_table.hh"
#include "lib/name_table.hh"
#include "lib/ndn_wire.hh"
#include "plan/batch_model.hh"
#include "plan/lookup_probe.hh"

namespace fulcrum::bench {
namespace {

constexpr int kRounds = 3;
constexpr double kPointSeconds = 0.02;  // per grid point and round
constexpr double kTarget = 1.05;        // the model's point within 5 % of the sweep's best
constexpr size_t kColdKeys = 1u << 20;  // keys cycled through (more than L2 holds)
constexpr int kDispatchRounds = 5;
constexpr int kRematchRounds = 5;  // the model's point against the sweep's best, alternated

// One table under test: lookups of keys [i, i + n) in groups of g, the hot probe, its profile.
struct Subject {
  std::string table;
  std::string size;
  size_t keys = 0;
  std::function<void(size_t i, size_t n, unsigned g)> run;
  std::function<void(size_t n, unsigned g)> run_hot;
  std::function<void(size_t i, size_t n)> run_default;  // the compile-time entry
  unsigned default_group = 0;
  MemoryProfile memory;  // working set, levels, lines, state; probe_lookup fills the rest
  std::string note;
};

// Cycles per lookup in calls of n, groups of g, cycling the keys: the median over chunks of
// kChunkCalls calls for kPointSeconds (the machine is shared: a chunk during which the thread
// was preempted is an outlier, not a cost).
double cycles_per_lookup(const Subject& s, size_t n, unsigned g, bool runtime = true) {
  constexpr int kChunkCalls = 16;
  const uint64_t budget =
      static_cast<uint64_t>(kPointSeconds * static_cast<double>(rte_get_tsc_hz()));
  size_t at = 0;
  std::vector<double> chunks;
  const uint64_t start = rte_rdtsc();
  for (uint64_t t = start; t - start < budget;) {
    for (int k = 0; k < kChunkCalls; ++k) {
      if (at + n > s.keys) at = 0;
      if (runtime)
        s.run(at, n, g);
      else
        s.run_default(at, n);
      at += n;
    }
    const uint64_t now = rte_rdtsc();
    chunks.push_back(static_cast<double>(now - t) / static_cast<double>(kChunkCalls * n));
    t = now;
  }
  return median(chunks);
}

std::string point_json(unsigned batch, unsigned group, double measured,
                       const plan::BatchPoint* predicted = nullptr) {
  Obj o;
  o.count("batch", batch)
      .count("group", group)
      .num("measured_cycles", measured)
      .num("predicted_cycles", predicted ? predicted->cycles_per_packet : 0);
  if (predicted != nullptr)
    o.num("hot_cycles", predicted->compute)
        .num("memory_cycles", predicted->memory)
        .num("stall_cycles", predicted->stall);
  return o.done();
}

std::string measure_subject(Subject& s, const plan::Calibration& cal) {
  plan::probe_lookup(s.run_hot, s.memory);
  const plan::LookupProfile e = plan::to_lookup_profile(s.memory);
  const plan::BatchPoint choice =
      plan::choose_batch(cal.machine, cal.memory, e, plan::batch_grid(), plan::group_grid());

  struct Point {
    unsigned batch, group;
    double best = 0;
  };
  std::vector<Point> grid;
  for (unsigned b : plan::batch_grid())
    for (unsigned g : plan::group_grid())
      if (g <= b) grid.push_back({b, g});
  for (int r = 0; r < kRounds; ++r)
    for (size_t k = 0; k < grid.size(); ++k) {
      // Alternate the direction of the sweep so drift does not favour one end of the grid.
      Point& p = grid[r % 2 == 0 ? k : grid.size() - 1 - k];
      const double c = cycles_per_lookup(s, p.batch, p.group);
      p.best = r == 0 ? c : std::min(p.best, c);
    }
  const Point* best = &grid.front();
  const Point* chosen = nullptr;
  const Point* by_default = nullptr;
  std::vector<std::string> sweep;
  for (const Point& p : grid) {
    if (p.best < best->best) best = &p;
    if (p.batch == choice.batch && p.group == choice.group) chosen = &p;
    if (p.batch == kDefaultBatch && p.group == s.default_group) by_default = &p;
    const plan::BatchPoint predicted =
        plan::predict_batch(cal.machine, cal.memory, e, p.batch, p.group);
    sweep.push_back(point_json(p.batch, p.group, p.best, &predicted));
  }
  // The run-time switch on the default path against the compile-time entry, alternated.
  std::vector<double> fixed, runtime;
  for (int r = 0; r < kDispatchRounds; ++r) {
    fixed.push_back(cycles_per_lookup(s, kDefaultBatch, s.default_group, false));
    runtime.push_back(cycles_per_lookup(s, kDefaultBatch, s.default_group, true));
  }
  const double ratio = chosen != nullptr && best->best > 0 ? chosen->best / best->best : 0;
  // The sweep's best is the least of many noisy points, so it is biased low (and the model's
  // point may be measured high by chance): the two points again, alternated, the least of
  // kRematchRounds each.
  double rematch_model = 0, rematch_best = 0;
  if (chosen != nullptr)
    for (int r = 0; r < kRematchRounds; ++r) {
      const double c = cycles_per_lookup(s, chosen->batch, chosen->group);
      const double b = cycles_per_lookup(s, best->batch, best->group);
      rematch_model = r == 0 ? c : std::min(rematch_model, c);
      rematch_best = r == 0 ? b : std::min(rematch_best, b);
    }
  const double rematch = rematch_best > 0 ? rematch_model / rematch_best : 0;
  std::fprintf(stderr,
               "placement: %-9s %-8s ws %9zu B: model batch %3u group %2u -> %6.1f cycles "
               "(predicted %.1f); sweep best batch %3u group %2u -> %6.1f; ratio %.3f, "
               "rematched %.3f\n",
               s.table.c_str(), s.size.c_str(), s.memory.working_set_bytes, choice.batch,
               choice.group, chosen ? chosen->best : 0, choice.cycles_per_packet, best->batch,
               best->group, best->best, ratio, rematch);
  return Obj()
      .str("table", s.table)
      .str("size", s.size)
      .str("note", s.note)
      .count("working_set_bytes", s.memory.working_set_bytes)
      .num("levels", s.memory.levels)
      .num("compute_cycles", s.memory.compute_cycles)
      .num("call_cycles", s.memory.call_cycles)
      .num("group_cycles", s.memory.group_cycles)
      .raw("model", point_json(choice.batch, choice.group, chosen ? chosen->best : 0, &choice))
      .raw("sweep_best", point_json(best->batch, best->group, best->best))
      .raw("default",
           by_default ? point_json(by_default->batch, by_default->group, by_default->best) : "null")
      .num("model_over_best", ratio)
      .raw("within_5pct", ratio > 0 && ratio <= kTarget ? "true" : "false")
      .num("rematch_model_cycles", rematch_model)
      .num("rematch_best_cycles", rematch_best)
      .num("model_over_best_rematched", rematch)
      .raw("within_5pct_rematched", rematch > 0 && rematch <= kTarget ? "true" : "false")
      .num("default_path_fixed_cycles", median(fixed))
      .num("default_path_runtime_cycles", median(runtime))
      .num("runtime_over_fixed", median(runtime) / median(fixed))
      .raw("sweep", array(sweep, "\n          "))
      .done();
}

template <size_t N>
std::string numbers(const std::array<double, N>& v) {
  std::vector<std::string> items;
  for (double x : v) items.push_back(fmt(x));
  return array(items, " ");
}

uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

// DIR-24-8: `small` 1024 /24s side by side (2 KiB of TBL24); large: a default route, 200k
// random /24s and 16k random /28s (all of TBL24 and 8 MiB of segments).
std::unique_ptr<Subject> dir24_8_subject(bool small, std::shared_ptr<Dir24_8>& table,
                                         std::shared_ptr<std::vector<uint32_t>>& keys) {
  constexpr uint32_t kSmallRoutes = 1024, kLargeRoutes = 200000, kLongRoutes = 16384;
  table = std::make_shared<Dir24_8>();
  std::mt19937 rng(24);
  if (small) {
    for (uint32_t i = 0; i < kSmallRoutes; ++i)
      (void)table->add(ip(10, i >> 8, i & 0xFF, 0), 24, static_cast<uint16_t>(i % 4));
  } else {
    (void)table->add(0, 0, 0);
    for (uint32_t i = 0; i < kLargeRoutes; ++i)
      (void)table->add(rng() & 0xFFFFFF00u, 24, static_cast<uint16_t>(i % 4));
    for (uint32_t i = 0; i < kLongRoutes; ++i)
      (void)table->add(rng() & 0xFFFFFFF0u, 28, static_cast<uint16_t>(i % 4));
  }
  if (Status st = table->build(); !st) return nullptr;
  keys = std::make_shared<std::vector<uint32_t>>(kColdKeys);
  for (uint32_t& k : *keys) {
    const uint32_t r = rng() % kSmallRoutes;
    k = small ? ip(10, r >> 8, r & 0xFF, rng() & 0xFF) : rng();
  }
  auto s = std::make_unique<Subject>();
  s->table = "dir24_8";
  s->size = small ? "in-cache" : "large";
  s->note =
      small ? "1024 /24 routes" : "default route, 200k /24, 16k /28 (TBL24 is 32 MiB at most)";
  s->keys = keys->size();
  s->default_group = Dir24_8::kDefaultPrefetch;
  const Dir24_8* t = table.get();
  const uint32_t* k = keys->data();
  auto out = std::make_shared<std::array<uint16_t, kMaxBatch>>();
  s->run = [t, k, out](size_t i, size_t n, unsigned g) {
    t->lookup_bulk(k + i, out->data(), n, g);
  };
  s->run_default = [t, k, out](size_t i, size_t n) { t->lookup_bulk(k + i, out->data(), n); };
  auto hot = std::make_shared<plan::ProbeDraws<uint32_t>>(*keys);
  s->run_hot = [t, hot, out](size_t n, unsigned g) {
    t->lookup_bulk(hot->next(n), out->data(), n, g);
  };
  s->memory.working_set_bytes = t->working_set_bytes();
  s->memory.levels = t->accesses_per_lookup();
  s->memory.lines_per_level = 1;
  s->memory.state_bytes_per_packet = sizeof(uint32_t) + sizeof(uint16_t);
  return s;
}

using Addr16 = std::array<uint8_t, 16>;

// The IPv6 trie: `small` 64 /48s under one /24 (a few KiB of groups); large: 100k random /48s
// (one group each after compression: ~100 MiB, and 100k lines of TBL24).
std::unique_ptr<Subject> ip6_subject(bool small, std::shared_ptr<Ip6Trie>& table,
                                     std::shared_ptr<std::vector<Addr16>>& keys) {
  constexpr uint32_t kSmallRoutes = 64, kLargeRoutes = 100000;
  table = std::make_shared<Ip6Trie>();
  std::mt19937_64 rng(6);
  std::vector<Addr16> prefixes;
  const uint32_t n = small ? kSmallRoutes : kLargeRoutes;
  for (uint32_t i = 0; i < n; ++i) {
    Addr16 p{};
    const uint64_t hi =
        small ? (uint64_t{0x20010db8} << 32) | (uint64_t{i} << 16) : rng() & ~uint64_t{0xFFFF};
    for (int b = 0; b < 8; ++b) p[b] = static_cast<uint8_t>(hi >> (56 - 8 * b));
    (void)table->add(p.data(), 48, static_cast<uint16_t>(i % 4));
    prefixes.push_back(p);
  }
  if (Status st = table->build(); !st) return nullptr;
  keys = std::make_shared<std::vector<Addr16>>(kColdKeys);
  for (Addr16& k : *keys) {
    k = prefixes[rng() % prefixes.size()];
    const uint64_t host = rng();
    for (int b = 8; b < 16; ++b) k[b] = static_cast<uint8_t>(host >> (8 * (b - 8)));
  }
  auto s = std::make_unique<Subject>();
  s->table = "ip6_trie";
  s->size = small ? "in-cache" : "large";
  s->note = small ? "64 /48 routes under one /24" : "100k random /48 routes";
  s->keys = keys->size();
  s->default_group = Ip6Trie::kDefaultPrefetch;
  const Ip6Trie* t = table.get();
  const auto* k = reinterpret_cast<const uint8_t(*)[16]>(keys->data());
  auto out = std::make_shared<std::array<uint16_t, kMaxBatch>>();
  s->run = [t, k, out](size_t i, size_t n, unsigned g) {
    t->lookup_bulk(k + i, out->data(), n, g);
  };
  s->run_default = [t, k, out](size_t i, size_t n) { t->lookup_bulk(k + i, out->data(), n); };
  auto hot = std::make_shared<plan::ProbeDraws<Addr16>>(*keys);
  s->run_hot = [t, hot, out](size_t n, unsigned g) {
    t->lookup_bulk(reinterpret_cast<const uint8_t(*)[16]>(hot->next(n)), out->data(), n, g);
  };
  s->memory.working_set_bytes = t->working_set_bytes();
  s->memory.levels = t->accesses_per_lookup();
  s->memory.within_group_levels = t->within_group_levels();
  s->memory.lines_per_level = 1;
  s->memory.state_bytes_per_packet = sizeof(Addr16) + sizeof(uint16_t);
  return s;
}

// The MAC table: `small` 2048 addresses in a table for 4096 (36 KiB); large: 7M in a table for
// 8M (71 MiB). Lookups of learned addresses.
std::unique_ptr<Subject> mac_subject(bool small, std::shared_ptr<MacTable>& table,
                                     std::shared_ptr<std::vector<uint64_t>>& keys) {
  const size_t capacity = small ? 4096 : 8u << 20;
  const size_t entries = small ? 2048 : 7u << 20;
  Result<std::unique_ptr<MacTable>> t = MacTable::create(capacity, false, "bench_placement_mac");
  if (!t) return nullptr;
  table = std::move(t.value());
  std::vector<uint64_t> learned(entries);
  std::vector<uint16_t> ports(entries);
  std::mt19937_64 rng(48);
  for (size_t i = 0; i < entries; ++i) {
    learned[i] = (rng() & MacTable::kKeyMask & ~(uint64_t{1} << 40));  // unicast
    ports[i] = static_cast<uint16_t>(i % 4);
  }
  (void)table->insert_bulk(learned.data(), ports.data(), entries);
  keys = std::make_shared<std::vector<uint64_t>>(kColdKeys);
  for (uint64_t& k : *keys) k = learned[rng() % entries];
  auto s = std::make_unique<Subject>();
  s->table = "mac_table";
  s->size = small ? "in-cache" : "large";
  s->note = small ? "2048 addresses, capacity 4096" : "7M addresses, capacity 8M";
  s->keys = keys->size();
  s->default_group = MacTable::kDefaultPrefetch;
  const MacTable* mt = table.get();
  const uint64_t* k = keys->data();
  auto out = std::make_shared<std::array<uint16_t, kMaxBatch>>();
  s->run = [mt, k, out](size_t i, size_t n, unsigned g) {
    mt->lookup_bulk(k + i, out->data(), n, nullptr, g);
  };
  s->run_default = [mt, k, out](size_t i, size_t n) { mt->lookup_bulk(k + i, out->data(), n); };
  auto hot = std::make_shared<plan::ProbeDraws<uint64_t>>(*keys);
  s->run_hot = [mt, hot, out](size_t n, unsigned g) {
    mt->lookup_bulk(hot->next(n), out->data(), n, nullptr, g);
  };
  s->memory.working_set_bytes = mt->memory_bytes();
  // The first bucket, then the second for the keys not in it (about half): 1.5 dependent.
  s->memory.levels = 1.5;
  s->memory.within_group_levels = 0.5;  // the second buckets, prefetched within their group
  s->memory.lines_per_level = 1;
  s->memory.state_bytes_per_packet = sizeof(uint64_t) + sizeof(uint16_t);
  return s;
}

// The NDN name table: `small` 256 two-component names; large: 1M three-component names.
std::unique_ptr<Subject> ndn_subject(bool small, std::shared_ptr<NameTable>& table,
                                     std::shared_ptr<std::vector<ParsedName>>& keys,
                                     std::shared_ptr<std::vector<std::string>>& wires) {
  constexpr size_t kParsedKeys = 1u << 17;  // ParsedName is large: fewer distinct keys
  const size_t names = small ? 256 : 1u << 20;
  table = std::make_shared<NameTable>();
  std::vector<std::vector<std::string>> comps;
  for (size_t i = 0; i < names; ++i) {
    std::vector<std::string> c = {"site" + std::to_string(i % 97), "obj" + std::to_string(i)};
    if (!small) c.push_back("v" + std::to_string(i % 7));
    std::string uri;
    for (const std::string& x : c) uri += "/" + x;
    (void)table->add(uri, static_cast<uint16_t>(i % 4));
    comps.push_back(std::move(c));
  }
  if (Status st = table->build(); !st) return nullptr;
  std::mt19937 rng(7);
  wires = std::make_shared<std::vector<std::string>>(kParsedKeys);
  keys = std::make_shared<std::vector<ParsedName>>(kParsedKeys);
  for (size_t i = 0; i < kParsedKeys; ++i) {
    (*wires)[i] = ndn::encode_components(comps[rng() % comps.size()]);
    NameTable::parse_name(reinterpret_cast<const uint8_t*>((*wires)[i].data()),
                          static_cast<uint32_t>((*wires)[i].size()), (*keys)[i]);
  }
  auto s = std::make_unique<Subject>();
  s->table = "name_table";
  s->size = small ? "in-cache" : "large";
  s->note = small ? "256 two-component names" : "1M three-component names";
  s->keys = keys->size();
  s->default_group = NameTable::kDefaultPrefetch;
  const NameTable* t = table.get();
  const ParsedName* k = keys->data();
  auto out = std::make_shared<std::array<uint16_t, kMaxBatch>>();
  s->run = [t, k, out](size_t i, size_t n, unsigned g) {
    t->lookup_bulk(k + i, out->data(), n, g);
  };
  s->run_default = [t, k, out](size_t i, size_t n) { t->lookup_bulk(k + i, out->data(), n); };
  auto hot = std::make_shared<plan::ProbeDraws<ParsedName>>(*keys);
  s->run_hot = [t, hot, out](size_t n, unsigned g) {
    t->lookup_bulk(hot->next(n), out->data(), n, g);
  };
  s->memory.working_set_bytes = t->memory_bytes();
  s->memory.levels = 1;
  s->memory.lines_per_level = std::min<double>(NameTable::kPrefetchDepths, small ? 2 : 3);
  s->memory.state_bytes_per_packet = sizeof(ParsedName) + sizeof(uint16_t);
  return s;
}

std::string bench_placement(const BenchContext& ctx) {
  Result<plan::Calibration> cal = plan::process_calibration();
  if (!cal) return Obj().str("error", cal.error()).done();
  std::vector<std::string> rows;
  for (bool small : {true, false}) {
    if (!small && !ctx.large_tables) continue;
    {
      std::shared_ptr<Dir24_8> t;
      std::shared_ptr<std::vector<uint32_t>> k;
      if (auto s = dir24_8_subject(small, t, k)) rows.push_back(measure_subject(*s, cal.value()));
    }
    {
      std::shared_ptr<Ip6Trie> t;
      std::shared_ptr<std::vector<Addr16>> k;
      if (auto s = ip6_subject(small, t, k)) rows.push_back(measure_subject(*s, cal.value()));
    }
    {
      std::shared_ptr<MacTable> t;
      std::shared_ptr<std::vector<uint64_t>> k;
      if (auto s = mac_subject(small, t, k)) rows.push_back(measure_subject(*s, cal.value()));
    }
    {
      std::shared_ptr<NameTable> t;
      std::shared_ptr<std::vector<ParsedName>> k;
      std::shared_ptr<std::vector<std::string>> w;
      if (auto s = ndn_subject(small, t, k, w)) rows.push_back(measure_subject(*s, cal.value()));
    }
  }
  const plan::Calibration& c = cal.value();
  return Obj()
      .str("calibration", c.created)
      .count("l2_bytes", c.machine.l2_bytes)
      .count("llc_bytes_measured", c.machine.llc_bytes)
      .count("llc_bytes_sysfs", c.machine.llc_sysfs_bytes)
      .num("l1_cycles", c.memory.l1_cycles)
      .num("l2_cycles", c.memory.l2_cycles)
      .num("llc_cycles", c.memory.llc_cycles)
      .num("dram_cycles", c.memory.dram_cycles)
      .num("parallel_misses", c.memory.parallel_misses)
      .raw("group_ahead_line_cycles", numbers(c.memory.group_ahead_line_cycles))
      .raw("group_within_line_cycles", numbers(c.memory.group_within_line_cycles))
      .raw("lookups", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(72, "placement", bench_placement);

}  // namespace fulcrum::bench
