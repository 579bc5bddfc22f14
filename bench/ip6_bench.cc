// The IPv6 router benchmark group (NBA's IPv6 sample application): our two bulk lookups
// (Ip6Table: binary search on prefix lengths; Ip6Trie: the compressed trie of paper 003 §3.6)
// against DPDK's rte_lpm6 on the same table and addresses, and the ipv6-router pipeline fed by
// the built-in generator (with each IP6Lookup ALGORITHM).
//
// Frame sizes: an Ethernet + IPv6 + UDP frame needs 62 bytes, so the small-packet point uses
// 78-byte frames, the size G-Opt and the papers' IPv6 experiments use in place of 64 B.
#include <rte_errno.h>
#include <rte_lpm6.h>
#include <rte_memory.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "lib/ip6_table.hh"
#include "lib/ip6_trie.hh"
#include "lib/route6_table.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kSmallTable = 16384;
constexpr size_t kLargeTable = 200000;
constexpr size_t kLookups = size_t{1} << 22;
constexpr size_t kBatch = 64;
constexpr int kRounds = 3;
constexpr uint64_t kRouteSeed = 7;
constexpr uint64_t kAddressSeed = 11;
constexpr uint16_t kLookupPorts = 4096;
constexpr uint16_t kRouterPorts = 2;
constexpr uint32_t kTbl24Bits = 24;  // rte_lpm6: the first 3 bytes index its TBL24
constexpr uint32_t kByteBits = 8;
constexpr uint32_t kTbl8Slack = 1024;
constexpr uint32_t kSmallFrame = 78;
constexpr uint32_t kLargeFrame = 1500;
constexpr uint32_t kFlows = 65536;
const char* const kNullTxOnly = "net_null1,no-rx=1";

using Clock = std::chrono::steady_clock;
using Addr = uint8_t[Ip6Table::kAddrBytes];

std::atomic<uint64_t> g_sink{0};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double mlookups(size_t n, double ms) {
  return ms > 0 ? static_cast<double>(n) / (ms * 1e3) : 0;
}

// The tbl8 groups rte_lpm6 needs for `routes`: one per distinct prefix of 24, 32, 40, ... bits
// that a longer route extends.
uint32_t tbl8_groups_needed(const std::vector<Route6>& routes) {
  std::set<std::pair<Addr6, uint32_t>> groups;
  for (const Route6& r : routes) {
    const Addr6 a = Addr6::from_bytes(r.prefix.data());
    for (uint32_t bits = kTbl24Bits; bits < r.len; bits += kByteBits)
      groups.insert({a.masked(bits), bits});
  }
  return static_cast<uint32_t>(groups.size());
}

struct Lpm6Deleter {
  void operator()(rte_lpm6* lpm) const { rte_lpm6_free(lpm); }
};

struct LookupPoint {
  double bsearch = 0;  // Mlookups/s, medians of kRounds
  double trie = 0;
  double rte = 0;
  double build_ms_bsearch = 0;
  double build_ms_trie = 0;
  double build_ms_rte = 0;
  uint64_t mismatches_bsearch = 0;
  uint64_t mismatches_trie = 0;
  size_t entries = 0;
  size_t memory_bytes = 0;
  size_t trie_groups = 0;
  size_t trie_merged_groups = 0;
  size_t trie_bytes = 0;
  uint32_t tbl8_groups = 0;
  std::string error;
};

// Mlookups/s of `bulk` over every address in batches of kBatch.
template <class Bulk>
double time_lookups(Addr* raw, Bulk&& bulk) {
  uint64_t sum = 0;
  const auto start = Clock::now();
  for (size_t i = 0; i < kLookups; i += kBatch) sum += bulk(raw + i);
  const double ms = ms_since(start);
  g_sink += sum;
  return mlookups(kLookups, ms);
}

template <class Table>
Status build_ours(Table& t, const std::vector<Route6>& routes, double& ms) {
  const auto start = Clock::now();
  for (const Route6& r : routes) (void)t.add(r.prefix.data(), r.len, r.port);
  Status s = t.build();
  ms = ms_since(start);
  return s;
}

LookupPoint lookup_point(size_t routes_n) {
  LookupPoint res;
  const std::vector<Route6> routes = generate_routes6(routes_n, kRouteSeed, kLookupPorts);
  // rte_lpm6 first: at 200k routes it needs most of the 1 GiB of hugepages the benchmark
  // setup has (docs/benchmarks.md); our tables fall back to transparent huge pages then.
  res.tbl8_groups = tbl8_groups_needed(routes);
  rte_lpm6_config cfg{};
  cfg.max_rules = static_cast<uint32_t>(routes.size());
  cfg.number_tbl8s = res.tbl8_groups + kTbl8Slack;
  auto start = Clock::now();
  std::unique_ptr<rte_lpm6, Lpm6Deleter> lpm(
      rte_lpm6_create(("bench_lpm6_" + std::to_string(routes_n)).c_str(), SOCKET_ID_ANY, &cfg));
  if (!lpm) {
    res.error = "rte_lpm6_create (" + std::to_string(cfg.number_tbl8s) +
                " tbl8 groups): " + rte_strerror(rte_errno);
    return res;
  }
  for (const Route6& r : routes) {
    Route6 copy = r;
    if (int rc = rte_lpm6_add(lpm.get(), copy.prefix.data(), r.len, r.port); rc != 0) {
      res.error = "rte_lpm6_add " + format_route6(r) + ": " + rte_strerror(-rc);
      return res;
    }
  }
  res.build_ms_rte = ms_since(start);
  Ip6Table bsearch;
  if (Status s = build_ours(bsearch, routes, res.build_ms_bsearch); !s) {
    res.error = s.error();
    return res;
  }
  res.entries = bsearch.entries();
  res.memory_bytes = bsearch.memory_bytes();
  Ip6Trie trie;
  if (Status s = build_ours(trie, routes, res.build_ms_trie); !s) {
    res.error = s.error();
    return res;
  }
  res.trie_groups = trie.groups();
  res.trie_merged_groups = trie.merged_groups();
  res.trie_bytes = trie.memory_bytes();

  // Destinations inside random routes (traffic to routed destinations), in one array all use.
  std::vector<std::array<uint8_t, Ip6Table::kAddrBytes>> addrs(kLookups);
  RouteRng rng(kAddressSeed);
  for (auto& a : addrs) {
    const Route6& r = routes[rng.next() % routes.size()];
    const Addr6 p = Addr6::from_bytes(r.prefix.data());
    const Addr6 host{rng.next(), rng.next()};
    Addr6{p.hi | (host.hi & ~Addr6::hi_mask(r.len)), p.lo | (host.lo & ~Addr6::lo_mask(r.len))}
        .to_bytes(a.data());
  }
  auto* raw = reinterpret_cast<Addr*>(addrs.data());

  alignas(64) uint16_t out16[kBatch];
  alignas(64) uint16_t trie16[kBatch];
  alignas(64) int32_t out32[kBatch];
  for (size_t i = 0; i < kLookups; i += kBatch) {
    bsearch.lookup_bulk(raw + i, out16, kBatch);
    trie.lookup_bulk(raw + i, trie16, kBatch);
    rte_lpm6_lookup_bulk_func(lpm.get(), raw + i, out32, kBatch);
    for (size_t j = 0; j < kBatch; ++j) {
      const uint16_t expect = out32[j] < 0 ? Ip6Table::kNoRoute : out32[j];
      res.mismatches_bsearch += out16[j] != expect;
      res.mismatches_trie += trie16[j] != expect;
    }
  }
  auto sum16 = [&](const uint16_t* v) {
    uint64_t s = 0;
    for (size_t j = 0; j < kBatch; ++j) s += v[j];
    return s;
  };
  std::array<double, kRounds> b{}, t{}, r{};
  for (int round = 0; round < kRounds; ++round) {
    b[round] = time_lookups(raw, [&](Addr* a) {
      bsearch.lookup_bulk(a, out16, kBatch);
      return sum16(out16);
    });
    t[round] = time_lookups(raw, [&](Addr* a) {
      trie.lookup_bulk(a, out16, kBatch);
      return sum16(out16);
    });
    r[round] = time_lookups(raw, [&](Addr* a) {
      rte_lpm6_lookup_bulk_func(lpm.get(), a, out32, kBatch);
      uint64_t s = 0;
      for (size_t j = 0; j < kBatch; ++j) s += static_cast<uint32_t>(out32[j]);
      return s;
    });
  }
  res.bsearch = median(b);
  res.trie = median(t);
  res.rte = median(r);
  return res;
}

std::string router_point(double s, size_t routes, const std::string& dir) {
  const std::string file = dir + "/routes6-" + std::to_string(routes) + ".txt";
  if (Status st = write_routes6(file, generate_routes6(routes, kRouteSeed, kRouterPorts)); !st)
    return "null";
  auto pipeline = [&](const char* algorithm) {
    return "FromInput -> CheckIP6Header -> IP6Lookup(\"" + file + "\", ALGORITHM " + algorithm +
           ") -> DecIP6HLim -> EtherRewrite(DEFAULT \"02:00:00:00:00:01 "
           "02:00:00:00:00:02\") -> ToOutput;";
  };
  auto gen = [&](uint32_t size) {
    return "gen:proto=ipv6,size=" + std::to_string(size) + ",flows=" + std::to_string(kFlows) +
           ",dst=routes,routes=" + file;
  };
  const Measured small = measure(pipeline("trie"), {gen(kSmallFrame), kNullTxOnly}, s);
  const Measured large = measure(pipeline("trie"), {gen(kLargeFrame), kNullTxOnly}, s);
  const Measured small_bsearch = measure(pipeline("bsearch"), {gen(kSmallFrame), kNullTxOnly}, s);
  const LookupPoint lp = lookup_point(routes);
  const double trie_ratio = lp.rte > 0 ? lp.trie / lp.rte : 0;
  const double bsearch_ratio = lp.rte > 0 ? lp.bsearch / lp.rte : 0;
  std::fprintf(stderr,
               "bench: ipv6 router %zu routes: trie %.2f Mpps at %u B, %.2f Mpps at %u B, bsearch "
               "%.2f Mpps at %u B; Mlookups/s trie %.1f (x%.2f), bsearch %.1f (x%.2f), rte_lpm6 "
               "%.1f%s%s\n",
               routes, small.mpps, kSmallFrame, large.mpps, kLargeFrame, small_bsearch.mpps,
               kSmallFrame, lp.trie, trie_ratio, lp.bsearch, bsearch_ratio, lp.rte,
               lp.error.empty() ? "" : "; error: ", lp.error.c_str());
  Obj o;
  o.count("routes", routes)
      .num("mpps_78B", small.mpps)
      .num("mpps_1500B", large.mpps)
      .num("gbps_1500B", large.mpps * kLargeFrame * kByteBits / 1e3)
      .num("mpps_78B_bsearch", small_bsearch.mpps)
      .num("ip6_trie_bulk_mlookups", lp.trie)
      .num("ip6_table_bulk_mlookups", lp.bsearch)
      .num("rte_lpm6_bulk_mlookups", lp.rte)
      .num("ip6_trie_to_rte_lpm6_ratio", trie_ratio)
      .num("ip6_table_to_rte_lpm6_ratio", bsearch_ratio)
      .count("lookup_mismatches_trie", lp.mismatches_trie)
      .count("lookup_mismatches_bsearch", lp.mismatches_bsearch)
      .count("ip6_trie_groups", lp.trie_groups)
      .count("ip6_trie_merged_groups", lp.trie_merged_groups)
      .count("ip6_trie_bytes", lp.trie_bytes)
      .count("ip6_table_entries", lp.entries)
      .count("ip6_table_bytes", lp.memory_bytes)
      .count("rte_lpm6_tbl8_groups", lp.tbl8_groups)
      .num("build_ms_ip6_trie", lp.build_ms_trie)
      .num("build_ms_ip6_table", lp.build_ms_bsearch)
      .num("build_ms_rte_lpm6", lp.build_ms_rte)
      .raw("balanced",
           small.balanced && large.balanced && small_bsearch.balanced ? "true" : "false");
  if (!lp.error.empty()) o.str("error", lp.error);
  return o.done();
}

std::string bench_ipv6_router(const BenchContext& ctx) {
  std::vector<std::string> rows{router_point(ctx.seconds, kSmallTable, ctx.dir)};
  if (ctx.large_tables) rows.push_back(router_point(ctx.seconds, kLargeTable, ctx.dir));
  return Obj()
      .str("what",
           "ipv6-router pipeline (CheckIP6Header -> IP6Lookup -> DecIP6HLim -> EtherRewrite) "
           "from gen:proto=ipv6,dst=routes to net_null at 78 B (the smallest IPv6/UDP test "
           "frame, in place of 64 B) and 1500 B with ALGORITHM trie, 78 B with bsearch; "
           "Ip6Trie::lookup_bulk and Ip6Table::lookup_bulk vs rte_lpm6_lookup_bulk_func on the "
           "same table and destinations, batches of 64, medians of 3 rounds")
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(60, "ipv6_router", bench_ipv6_router);

}  // namespace fulcrum::bench
