// The NDN benchmark group: NameTable lookups on a generated name tree (100k and, with large
// tables, 1M names), bulk with group prefetch against one name at a time, and the NDNLookup
// pipeline replaying a capture of Interests for names under the table's prefixes.
#include <pcap/pcap.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "lib/name_table.hh"
#include "lib/ndn_wire.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kSmallNames = 100000;
constexpr size_t kLargeNames = 1000000;
constexpr size_t kQueries = size_t{1} << 20;
constexpr size_t kBatch = 64;
constexpr int kRounds = 3;
constexpr uint32_t kVocabulary = 1000;
constexpr uint32_t kExtendPercent = 80;
constexpr uint32_t kPercent = 100;
constexpr uint32_t kMaxExtra = 3;
constexpr uint32_t kMaxDepth = 8;
constexpr uint32_t kPcapFrames = 32768;
constexpr uint16_t kTablePorts = 2;
constexpr uint64_t kSeed = 5;
constexpr uint8_t kMac[6] = {0x02, 0, 0, 0, 0, 0x01};
const char* const kNullTxOnly = "net_null0,no-rx=1";

using Clock = std::chrono::steady_clock;
using Components = std::vector<std::string>;

std::atomic<uint64_t> g_sink{0};

std::string to_uri(const Components& c) {
  std::string uri;
  for (const std::string& s : c) uri += "/" + s;
  return uri;
}

// A name tree: most names extend an earlier one by a component.
std::vector<Components> make_names(size_t n, std::mt19937& rng) {
  std::vector<Components> names;
  while (names.size() < n) {
    Components c;
    if (!names.empty() && rng() % kPercent < kExtendPercent) c = names[rng() % names.size()];
    if (c.size() >= kMaxDepth) c.resize(rng() % kMaxDepth);
    c.push_back("c" + std::to_string(rng() % kVocabulary));
    names.push_back(std::move(c));
  }
  return names;
}

// Queries: table names extended by 0..kMaxExtra components (so most match a long prefix).
std::vector<Components> make_queries(const std::vector<Components>& names, size_t n,
                                     std::mt19937& rng) {
  std::vector<Components> q(n);
  for (Components& c : q) {
    c = names[rng() % names.size()];
    for (uint32_t k = rng() % (kMaxExtra + 1); k > 0; --k)
      c.push_back("q" + std::to_string(rng() % kVocabulary));
  }
  return q;
}

double rate(Clock::time_point start, size_t n) {
  return n / std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

std::string table_point(size_t count, const BenchContext& ctx) {
  std::mt19937 rng(kSeed + count);
  const std::vector<Components> names = make_names(count, rng);
  const std::string file = ctx.dir + "/ndn-names-" + std::to_string(count) + ".txt";
  {
    std::ofstream out(file);
    for (size_t i = 0; i < names.size(); ++i)
      out << to_uri(names[i]) << ' ' << i % kTablePorts << '\n';
  }
  NameTable table;
  for (size_t i = 0; i < names.size(); ++i)
    if (!table.add(to_uri(names[i]), static_cast<uint16_t>(i % kTablePorts))) return "null";
  if (!table.build()) return "null";

  const std::vector<Components> queries = make_queries(names, kQueries, rng);
  std::vector<std::vector<uint8_t>> frames(kQueries);
  std::vector<ParsedName> parsed(kQueries);
  for (size_t i = 0; i < kQueries; ++i) {
    frames[i] = ndn::interest_frame(queries[i], kMac, kMac);
    NameTable::parse_frame(frames[i].data(), static_cast<uint32_t>(frames[i].size()), parsed[i]);
  }
  double bulk = 0, single = 0;
  uint16_t out[kBatch];
  uint64_t sum = 0;
  for (int r = 0; r < kRounds; ++r) {
    auto start = Clock::now();
    for (size_t i = 0; i + kBatch <= kQueries; i += kBatch) {
      table.lookup_bulk(parsed.data() + i, out, kBatch);
      sum += out[0];
    }
    bulk = std::max(bulk, rate(start, kQueries));
    start = Clock::now();
    for (size_t i = 0; i < kQueries; ++i) sum += table.lookup(parsed[i]);
    single = std::max(single, rate(start, kQueries));
  }
  g_sink += sum;

  const std::string pcap = ctx.dir + "/ndn-" + std::to_string(count) + ".pcap";
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* dump = pcap_dump_open(dead, pcap.c_str());
  double mpps = 0;
  if (dump != nullptr) {
    for (uint32_t i = 0; i < kPcapFrames; ++i) {
      pcap_pkthdr h{};
      h.caplen = h.len = static_cast<uint32_t>(frames[i].size());
      pcap_dump(reinterpret_cast<u_char*>(dump), &h, frames[i].data());
    }
    pcap_dump_close(dump);
    mpps = measure("FromInput -> NDNLookup(\"" + file + "\") -> ToOutput;",
                   {"net_pcap0,rx_pcap=" + pcap + ",infinite_rx=1", kNullTxOnly}, ctx.seconds)
               .mpps;
  }
  pcap_close(dead);
  std::fprintf(stderr,
               "bench: ndn %zu names (%zu bytes): lookups/s bulk %.1f M, one at a time %.1f M; "
               "pipeline %.2f Mpps\n",
               count, table.memory_bytes(), bulk, single, mpps);
  return Obj()
      .count("names", count)
      .count("table_bytes", table.memory_bytes())
      .num("bulk_mlookups", bulk)
      .num("single_mlookups", single)
      .num("bulk_to_single_ratio", single > 0 ? bulk / single : 0)
      .num("pipeline_mpps_from_pcap", mpps)
      .done();
}

std::string bench_ndn(const BenchContext& ctx) {
  std::vector<std::string> rows{table_point(kSmallNames, ctx)};
  if (ctx.large_tables) rows.push_back(table_point(kLargeNames, ctx));
  return Obj()
      .str("what",
           "NameTable longest-name-prefix lookups (Interests for table names plus 0-3 "
           "components), bulk with group prefetch vs one at a time; NDNLookup over pcap replay")
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(71, "ndn", bench_ndn);

}  // namespace fulcrum::bench
