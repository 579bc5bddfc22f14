#include "bench/lpm_bench.hh"

#include <rte_errno.h>
#include <rte_lpm.h>
#include <rte_memory.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "lib/dir24_8.hh"
#include "lib/route_table.hh"

namespace fulcrum {
namespace {

constexpr size_t kBatch = 64;
constexpr uint32_t kLpmTbl8Groups = 1u << 16;
constexpr uint32_t kLpmNextHopMask = 0x00FFFFFF;
constexpr uint64_t kAddressSeedSalt = 0x5DEECE66Dull;

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

uint32_t inside(const Route4& r, uint32_t random) {
  uint32_t host_mask = r.len == 0 ? ~uint32_t{0} : r.len == 32 ? 0 : ~uint32_t{0} >> r.len;
  return r.prefix | (random & host_mask);
}

struct LpmDeleter {
  void operator()(rte_lpm* lpm) const { rte_lpm_free(lpm); }
};

// Keeps the lookups' results alive so the compiler cannot drop them.
std::atomic<uint64_t> g_sink{0};

LpmBenchResult fail(LpmBenchResult res, std::string error) {
  res.error = std::move(error);
  return res;
}

// JSON string contents: quotes, backslashes and control characters escaped.
std::string json_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char esc[8];
      std::snprintf(esc, sizeof(esc), "\\u%04x", static_cast<unsigned>(c));
      out += esc;
    } else {
      out += c;
    }
  }
  return out;
}

double rate(size_t lookups, double ms) {
  return ms > 0 ? lookups / (ms * 1e3) : 0;
}

double time_ours(const Dir24_8& table, const std::vector<uint32_t>& addrs) {
  alignas(64) uint16_t out[kBatch];
  uint64_t sum = 0;
  const size_t full = addrs.size() / kBatch * kBatch;
  auto start = Clock::now();
  for (size_t i = 0; i < full; i += kBatch) {
    table.lookup_bulk(addrs.data() + i, out, kBatch);
    for (size_t j = 0; j < kBatch; ++j) sum += out[j];
  }
  double ms = ms_since(start);
  g_sink += sum;
  return rate(full, ms);
}

double time_rte(const rte_lpm* lpm, const std::vector<uint32_t>& addrs) {
  alignas(64) uint32_t out[kBatch];
  uint64_t sum = 0;
  const size_t full = addrs.size() / kBatch * kBatch;
  auto start = Clock::now();
  for (size_t i = 0; i < full; i += kBatch) {
    rte_lpm_lookup_bulk(lpm, addrs.data() + i, out, kBatch);
    for (size_t j = 0; j < kBatch; ++j) sum += out[j] & kLpmNextHopMask;
  }
  double ms = ms_since(start);
  g_sink += sum;
  return rate(full, ms);
}

uint64_t count_mismatches(const Dir24_8& table, const rte_lpm* lpm,
                          const std::vector<uint32_t>& addrs) {
  alignas(64) uint16_t ours[kBatch];
  alignas(64) uint32_t theirs[kBatch];
  uint64_t mismatches = 0;
  for (size_t i = 0; i < addrs.size(); i += kBatch) {
    size_t n = std::min(kBatch, addrs.size() - i);
    table.lookup_bulk(addrs.data() + i, ours, n);
    rte_lpm_lookup_bulk(lpm, addrs.data() + i, theirs, static_cast<unsigned>(n));
    for (size_t j = 0; j < n; ++j) {
      uint16_t expect = (theirs[j] & RTE_LPM_LOOKUP_SUCCESS)
                            ? static_cast<uint16_t>(theirs[j] & kLpmNextHopMask)
                            : Dir24_8::kNoRoute;
      mismatches += ours[j] != expect;
    }
  }
  return mismatches;
}

}  // namespace

LpmBenchResult bench_lpm(size_t routes, size_t lookups, uint64_t seed) {
  LpmBenchResult res;
  const std::vector<Route4> table_routes = generate_routes4(routes, seed, kMaxRoutePort + 1);
  res.routes = table_routes.size();
  res.lookups = lookups / kBatch * kBatch;

  Dir24_8 ours;
  auto start = Clock::now();
  for (const Route4& r : table_routes) {
    Status s = ours.add(r.prefix, r.len, r.port);
    if (!s) return fail(res, "dir24_8: " + s.error());
  }
  if (Status s = ours.build(); !s) return fail(res, "dir24_8: " + s.error());
  res.build_ms_ours = ms_since(start);
  res.segments = ours.segments();
  res.memory_bytes = ours.memory_bytes();

  static std::atomic<int> instance{0};
  std::string name = "lpm_bench_" + std::to_string(instance++);
  rte_lpm_config cfg{};
  cfg.max_rules = static_cast<uint32_t>(table_routes.size() + 1);
  cfg.number_tbl8s = kLpmTbl8Groups;
  start = Clock::now();
  std::unique_ptr<rte_lpm, LpmDeleter> lpm(rte_lpm_create(name.c_str(), SOCKET_ID_ANY, &cfg));
  if (!lpm) return fail(res, "rte_lpm_create failed: " + std::string(rte_strerror(rte_errno)));
  for (const Route4& r : table_routes) {
    int rc = rte_lpm_add(lpm.get(), r.prefix, r.len, r.port);
    if (rc != 0) return fail(res, "rte_lpm_add " + format_route4(r) + ": " + rte_strerror(-rc));
  }
  res.build_ms_rte = ms_since(start);

  std::vector<uint32_t> addrs(res.lookups);
  RouteRng rng(seed ^ kAddressSeedSalt);
  for (uint32_t& a : addrs) {
    uint64_t x = rng.next();
    a = table_routes.empty()
            ? static_cast<uint32_t>(x)
            : inside(table_routes[(x >> 32) % table_routes.size()], static_cast<uint32_t>(x));
  }

  for (int round = 0; round < kLpmBenchRounds; ++round) {
    res.ours_mlookups_per_s = std::max(res.ours_mlookups_per_s, time_ours(ours, addrs));
    res.rte_lpm_mlookups_per_s = std::max(res.rte_lpm_mlookups_per_s, time_rte(lpm.get(), addrs));
  }
  res.mismatches = count_mismatches(ours, lpm.get(), addrs);
  return res;
}

std::string to_json(const LpmBenchResult& r) {
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "{\"routes\":%zu,\"lookups\":%zu,\"ours_mlookups_per_s\":%.2f,"
                "\"rte_lpm_mlookups_per_s\":%.2f,\"build_ms_ours\":%.2f,\"build_ms_rte\":%.2f,"
                "\"segments\":%zu,\"memory_bytes\":%zu,\"mismatches\":%llu}",
                r.routes, r.lookups, r.ours_mlookups_per_s, r.rte_lpm_mlookups_per_s,
                r.build_ms_ours, r.build_ms_rte, r.segments, r.memory_bytes,
                static_cast<unsigned long long>(r.mismatches));
  std::string json = buf;
  if (!r.error.empty()) json.insert(json.size() - 1, ",\"error\":\"" + json_escape(r.error) + "\"");
  return json;
}

}  // namespace fulcrum
