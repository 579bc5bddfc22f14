// The IPv6 router benchmark group (NBA's IPv6 sample application): our Ip6Table bulk lookup
// against DPDK's rte_lpm6 on the same table and addresses, and the ipv6-router pipeline fed by
// the built-in generator.
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
#include "lib/ip6_table.hh"
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

// splitmix64, for the destination addresses.
uint64_t next_random(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
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
  double ours = 0;
  double rte = 0;
  double build_ms_ours = 0;
  double build_ms_rte = 0;
  uint64_t mismatches = 0;
  size_t entries = 0;
  size_t memory_bytes = 0;
  uint32_t tbl8_groups = 0;
  std::string error;
};

LookupPoint lookup_point(size_t routes_n) {
  LookupPoint res;
  const std::vector<Route6> routes = generate_routes6(routes_n, kRouteSeed, kLookupPorts);
  Ip6Table ours;
  auto start = Clock::now();
  for (const Route6& r : routes) (void)ours.add(r.prefix.data(), r.len, r.port);
  if (Status s = ours.build(); !s) {
    res.error = s.error();
    return res;
  }
  res.build_ms_ours = ms_since(start);
  res.entries = ours.entries();
  res.memory_bytes = ours.memory_bytes();

  res.tbl8_groups = tbl8_groups_needed(routes);
  rte_lpm6_config cfg{};
  cfg.max_rules = static_cast<uint32_t>(routes.size());
  cfg.number_tbl8s = res.tbl8_groups + kTbl8Slack;
  start = Clock::now();
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

  // Destinations inside random routes (traffic to routed destinations), in one array both use.
  std::vector<std::array<uint8_t, Ip6Table::kAddrBytes>> addrs(kLookups);
  uint64_t state = kAddressSeed;
  for (auto& a : addrs) {
    const Route6& r = routes[next_random(state) % routes.size()];
    const Addr6 p = Addr6::from_bytes(r.prefix.data());
    const Addr6 host{next_random(state), next_random(state)};
    Addr6{p.hi | (host.hi & ~Addr6::hi_mask(r.len)), p.lo | (host.lo & ~Addr6::lo_mask(r.len))}
        .to_bytes(a.data());
  }
  auto* raw = reinterpret_cast<Addr*>(addrs.data());

  alignas(64) uint16_t out16[kBatch];
  alignas(64) int32_t out32[kBatch];
  for (size_t i = 0; i < kLookups; i += kBatch) {
    ours.lookup_bulk(raw + i, out16, kBatch);
    rte_lpm6_lookup_bulk_func(lpm.get(), raw + i, out32, kBatch);
    for (size_t j = 0; j < kBatch; ++j)
      res.mismatches += out16[j] != (out32[j] < 0 ? Ip6Table::kNoRoute : out32[j]);
  }
  for (int round = 0; round < kRounds; ++round) {
    uint64_t sum = 0;
    start = Clock::now();
    for (size_t i = 0; i < kLookups; i += kBatch) {
      ours.lookup_bulk(raw + i, out16, kBatch);
      for (size_t j = 0; j < kBatch; ++j) sum += out16[j];
    }
    res.ours = std::max(res.ours, mlookups(kLookups, ms_since(start)));
    start = Clock::now();
    for (size_t i = 0; i < kLookups; i += kBatch) {
      rte_lpm6_lookup_bulk_func(lpm.get(), raw + i, out32, kBatch);
      for (size_t j = 0; j < kBatch; ++j) sum += static_cast<uint32_t>(out32[j]);
    }
    res.rte = std::max(res.rte, mlookups(kLookups, ms_since(start)));
    g_sink += sum;
  }
  return res;
}

std::string router_point(double s, size_t routes, const std::string& dir) {
  const std::string file = dir + "/routes6-" + std::to_string(routes) + ".txt";
  if (Status st = write_routes6(file, generate_routes6(routes, kRouteSeed, kRouterPorts)); !st)
    return "null";
  const std::string pipeline = "FromInput -> CheckIP6Header -> IP6Lookup(\"" + file +
                               "\") -> DecIP6HLim -> EtherRewrite(DEFAULT \"02:00:00:00:00:01 "
                               "02:00:00:00:00:02\") -> ToOutput;";
  auto gen = [&](uint32_t size) {
    return "gen:proto=ipv6,size=" + std::to_string(size) + ",flows=" + std::to_string(kFlows) +
           ",dst=routes,routes=" + file;
  };
  const Measured small = measure(pipeline, {gen(kSmallFrame), kNullTxOnly}, s);
  const Measured large = measure(pipeline, {gen(kLargeFrame), kNullTxOnly}, s);
  const LookupPoint lp = lookup_point(routes);
  const double ratio = lp.rte > 0 ? lp.ours / lp.rte : 0;
  std::fprintf(stderr,
               "bench: ipv6 router %zu routes: %.2f Mpps at %u B, %.2f Mpps at %u B; lookups/s "
               "ours %.1f M, rte_lpm6 %.1f M (x%.2f)%s%s\n",
               routes, small.mpps, kSmallFrame, large.mpps, kLargeFrame, lp.ours, lp.rte, ratio,
               lp.error.empty() ? "" : "; error: ", lp.error.c_str());
  Obj o;
  o.count("routes", routes)
      .num("mpps_78B", small.mpps)
      .num("mpps_1500B", large.mpps)
      .num("gbps_1500B", large.mpps * kLargeFrame * kByteBits / 1e3)
      .num("ip6_table_bulk_mlookups", lp.ours)
      .num("rte_lpm6_bulk_mlookups", lp.rte)
      .num("ip6_table_to_rte_lpm6_ratio", ratio)
      .count("lookup_mismatches", lp.mismatches)
      .count("ip6_table_entries", lp.entries)
      .count("ip6_table_bytes", lp.memory_bytes)
      .count("rte_lpm6_tbl8_groups", lp.tbl8_groups)
      .num("build_ms_ip6_table", lp.build_ms_ours)
      .num("build_ms_rte_lpm6", lp.build_ms_rte)
      .raw("balanced", small.balanced && large.balanced ? "true" : "false");
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
           "frame, in place of 64 B) and 1500 B; Ip6Table::lookup_bulk vs "
           "rte_lpm6_lookup_bulk_func on the same table and destinations, batches of 64")
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(60, "ipv6_router", bench_ipv6_router);

}  // namespace fulcrum::bench
