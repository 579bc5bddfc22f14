// The L2 switch benchmark group: MacTable::lookup_bulk against DPDK's rte_hash_lookup_bulk_data
// on the same keys and table sizes (1M and, with large tables, 16M entries), batches of 64 as the
// switch does; then the L2Switch pipeline on two replayed captures with many distinct addresses
// (hosts of side A on port 0 talk to hosts of side B on port 1 and back).
#include <pcap/pcap.h>
#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_hash_crc.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/measure.hh"
#include "lib/mac_table.hh"

namespace fulcrum::bench {
namespace {

constexpr size_t kSmallEntries = size_t{1} << 20;
constexpr size_t kLargeEntries = size_t{1} << 24;
constexpr size_t kLookups = size_t{1} << 24;
constexpr size_t kBatch = 64;  // also RTE_HASH_LOOKUP_BULK_MAX
constexpr int kRounds = 3;
constexpr uint16_t kTablePorts = 48;
constexpr uint64_t kSeed = 11;
constexpr uint32_t kFramesPerSide = 32768;
constexpr uint32_t kFrameLen = 60;
constexpr uint32_t kMacLen = 6;
constexpr uint32_t kEtherTypeOffset = 12;
constexpr uint8_t kEtherTypeIpv4Hi = 0x08;
constexpr uint8_t kLocalAdminMac = 0x02;
constexpr uint32_t kBitsPerByte = 8;
constexpr int kSides = 2;

using Clock = std::chrono::steady_clock;

std::atomic<uint64_t> g_sink{0};

struct RteHashDeleter {
  void operator()(rte_hash* h) const { rte_hash_free(h); }
};

struct HashPoint {
  size_t entries = 0;
  double ours_mlookups = 0;
  double rte_mlookups = 0;
  double ours_build_ms = 0;
  double rte_build_ms = 0;
  size_t ours_bytes = 0;
  uint64_t mismatches = 0;
  std::string error;
};

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double time_ours(const MacTable& t, const std::vector<uint64_t>& q) {
  uint16_t out[kBatch];
  uint64_t sum = 0;
  const auto start = Clock::now();
  for (size_t i = 0; i + kBatch <= q.size(); i += kBatch) {
    t.lookup_bulk(q.data() + i, out, kBatch);
    sum += out[0] + out[kBatch - 1];
  }
  const double ms = ms_since(start);
  g_sink += sum;
  return q.size() / ms / 1e3;
}

double time_rte(const rte_hash* h, std::vector<const void*>& ptrs) {
  void* data[kBatch];
  uint64_t hits = 0, sum = 0;
  const auto start = Clock::now();
  for (size_t i = 0; i + kBatch <= ptrs.size(); i += kBatch) {
    rte_hash_lookup_bulk_data(h, ptrs.data() + i, kBatch, &hits, data);
    sum += hits + reinterpret_cast<uintptr_t>(data[0]);
  }
  const double ms = ms_since(start);
  g_sink += sum;
  return ptrs.size() / ms / 1e3;
}

HashPoint hash_point(size_t entries) {
  HashPoint r;
  r.entries = entries;
  std::mt19937_64 rng(kSeed + entries);
  std::vector<uint64_t> keys(entries);
  for (uint64_t& k : keys) k = rng() & MacTable::kKeyMask;
  std::vector<uint16_t> ports(entries);
  for (uint16_t& p : ports) p = static_cast<uint16_t>(rng() % kTablePorts);
  std::vector<uint64_t> queries(kLookups);
  for (uint64_t& q : queries) q = keys[rng() % entries];
  std::vector<const void*> ptrs(kLookups);
  for (size_t i = 0; i < kLookups; ++i) ptrs[i] = &queries[i];

  auto start = Clock::now();
  Result<std::unique_ptr<MacTable>> ours = MacTable::create(entries, false, "bench_mac");
  if (!ours) {
    r.error = ours.error();
    return r;
  }
  if (ours.value()->insert_bulk(keys.data(), ports.data(), entries) != 0) {
    r.error = "MacTable full before " + std::to_string(entries) + " entries";
    return r;
  }
  r.ours_build_ms = ms_since(start);
  r.ours_bytes = ours.value()->memory_bytes();

  rte_hash_parameters params{};
  const std::string name = "bench_l2_" + std::to_string(entries);
  params.name = name.c_str();
  params.entries = static_cast<uint32_t>(entries);
  params.key_len = sizeof(uint64_t);
  params.hash_func = rte_hash_crc;
  params.socket_id = SOCKET_ID_ANY;
  params.extra_flag = RTE_HASH_EXTRA_FLAGS_EXT_TABLE;
  start = Clock::now();
  std::unique_ptr<rte_hash, RteHashDeleter> theirs(rte_hash_create(&params));
  if (theirs) {
    for (size_t i = 0; i < entries; ++i) {
      if (rte_hash_add_key_data(theirs.get(), &keys[i],
                                reinterpret_cast<void*>(uintptr_t{ports[i]})) != 0) {
        r.error = "rte_hash_add_key_data failed at entry " + std::to_string(i);
        theirs.reset();
        break;
      }
    }
  } else {
    r.error = std::string("rte_hash_create: ") + rte_strerror(rte_errno);
  }
  r.rte_build_ms = ms_since(start);

  for (int round = 0; round < kRounds; ++round) {
    r.ours_mlookups = std::max(r.ours_mlookups, time_ours(*ours.value(), queries));
    if (theirs) r.rte_mlookups = std::max(r.rte_mlookups, time_rte(theirs.get(), ptrs));
  }
  if (theirs) {
    uint16_t out[kBatch];
    void* data[kBatch];
    for (size_t i = 0; i + kBatch <= kSmallEntries && i + kBatch <= kLookups; i += kBatch) {
      uint64_t hits = 0;
      ours.value()->lookup_bulk(queries.data() + i, out, kBatch);
      rte_hash_lookup_bulk_data(theirs.get(), ptrs.data() + i, kBatch, &hits, data);
      for (size_t j = 0; j < kBatch; ++j) {
        const bool hit = (hits >> j) & 1;
        r.mismatches += hit != (out[j] != MacTable::kNotFound) ||
                        (hit && out[j] != reinterpret_cast<uintptr_t>(data[j]));
      }
    }
  }
  return r;
}

std::string to_json(const HashPoint& r) {
  Obj o;
  o.count("entries", r.entries)
      .num("mac_table_bulk_mlookups", r.ours_mlookups)
      .num("rte_hash_bulk_mlookups", r.rte_mlookups)
      .num("ratio", r.rte_mlookups > 0 ? r.ours_mlookups / r.rte_mlookups : 0)
      .num("build_ms_mac_table", r.ours_build_ms)
      .num("build_ms_rte_hash", r.rte_build_ms)
      .count("mac_table_bytes", r.ours_bytes)
      .count("mismatches", r.mismatches);
  if (!r.error.empty()) o.str("error", r.error);
  return o.done();
}

void put_mac(uint8_t* at, uint32_t side, uint32_t host) {
  at[0] = kLocalAdminMac;
  at[1] = static_cast<uint8_t>(side);
  for (uint32_t i = 0; i < kMacLen - 2; ++i)
    at[kMacLen - 1 - i] = static_cast<uint8_t>(host >> (kBitsPerByte * i));
}

// Side `side`'s capture: frame i comes from host i of that side and goes to a random host of
// the other side.
Status write_side_pcap(const std::string& path, uint32_t side) {
  pcap_t* dead = pcap_open_dead(DLT_EN10MB, 65535);
  pcap_dumper_t* dump = pcap_dump_open(dead, path.c_str());
  if (dump == nullptr) {
    pcap_close(dead);
    return make_error("cannot write " + path);
  }
  std::mt19937 rng(kSeed + side);
  uint8_t frame[kFrameLen] = {};
  frame[kEtherTypeOffset] = kEtherTypeIpv4Hi;
  for (uint32_t i = 0; i < kFramesPerSide; ++i) {
    put_mac(frame, 1 - side, static_cast<uint32_t>(rng() % kFramesPerSide));
    put_mac(frame + kMacLen, side, i);
    pcap_pkthdr h{};
    h.caplen = h.len = kFrameLen;
    pcap_dump(reinterpret_cast<u_char*>(dump), &h, frame);
  }
  pcap_dump_close(dump);
  pcap_close(dead);
  return {};
}

std::string pipeline_point(const BenchContext& ctx) {
  std::vector<std::string> ports;
  for (int side = 0; side < kSides; ++side) {
    const std::string pcap = ctx.dir + "/l2-side" + std::to_string(side) + ".pcap";
    if (Status s = write_side_pcap(pcap, static_cast<uint32_t>(side)); !s) return "null";
    ports.push_back("net_pcap" + std::to_string(side) + ",rx_pcap=" + pcap + ",infinite_rx=1");
  }
  const Measured sw = measure("FromInput -> L2Switch -> ToOutput;", ports, ctx.seconds);
  const Measured fwd =
      measure("FromInput -> L2Forward(METHOD roundrobin) -> ToOutput;", ports, ctx.seconds);
  std::fprintf(stderr,
               "bench: l2 switch pipeline %.2f Mpps (%u hosts per port; L2Forward on the same "
               "ports %.2f Mpps)\n",
               sw.mpps, kFramesPerSide, fwd.mpps);
  return Obj()
      .str("what",
           "FromInput -> L2Switch -> ToOutput, two net_pcap ports replaying 64 B frames between "
           "2 x 32768 hosts")
      .num("mpps", sw.mpps)
      .num("l2forward_roundrobin_mpps", fwd.mpps)
      .str("balanced", sw.balanced ? "yes" : "no")
      .done();
}

std::string bench_l2_switch(const BenchContext& ctx) {
  std::vector<std::string> rows;
  std::vector<size_t> sizes{kSmallEntries};
  if (ctx.large_tables) sizes.push_back(kLargeEntries);
  for (size_t entries : sizes) {
    const HashPoint p = hash_point(entries);
    std::fprintf(stderr,
                 "bench: l2 table %zu entries: lookups/s MacTable %.1f M, rte_hash %.1f M "
                 "(ratio %.2f, %llu mismatches)%s%s\n",
                 entries, p.ours_mlookups, p.rte_mlookups,
                 p.rte_mlookups > 0 ? p.ours_mlookups / p.rte_mlookups : 0.0,
                 static_cast<unsigned long long>(p.mismatches), p.error.empty() ? "" : ": ",
                 p.error.c_str());
    rows.push_back(to_json(p));
  }
  return Obj()
      .str("what",
           "MacTable::lookup_bulk vs rte_hash_lookup_bulk_data, 8-byte keys, batches of "
           "64, all hits; and the L2Switch pipeline")
      .raw("tables", array(rows))
      .raw("pipeline", pipeline_point(ctx))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(70, "l2_switch", bench_l2_switch);

}  // namespace fulcrum::bench
