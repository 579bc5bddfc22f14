// IDS benchmark (issue 3, NBA §4.1, thesis Fig. 4.3c): IDSMatch over a replayed capture of UDP
// frames at 64 and 1500 B whose payloads match no rule (0 %) or hold one rule content each
// (~100 %), with both prefilter engines, next to ceilings measured in the same run on the same
// payloads and the same patterns:
//   * raw Hyperscan: hs_scan of the rule set's literal database over each IP payload (the
//     ceiling of issue 16's goal), and, beside it, over the payloads joined 64 at a time as
//     IDSMatch scans payloads of at most 256 bytes (Matcher::prefilter_hyperscan),
//   * our Aho-Corasick DFA: one scan per payload, and four payloads interleaved (scan_lanes).
// Input: the capture preloaded in memory (`replay:file=`, io/replay_port.hh), as FastClick
// benchmarks from its Replay element. Until 2026-11-26 the input was DPDK's net_pcap with
// infinite_rx=1, which copies each packet out of a scattered stored mbuf through a ring (~30 ns
// a packet at 64 B): IDSMatch with Hyperscan is measured on that input too and reported beside
// (`*_net_pcap_*`), so figures from before stay comparable.
// Rule set: kLiteralRules random 6..12-byte contents (a quarter nocase) and kRegexRules rules
// pairing a content with a pcre (the regex runs only on packets whose content matched).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/ids_rules.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kSizes[] = {64, 1500};
constexpr uint32_t kFrames = 4096;
constexpr uint32_t kJoinGroup = ids::Matcher::kScanGroup;
constexpr uint32_t kJoinMaxBytes = ids::Matcher::kJoinBytes;
constexpr uint32_t kHeaders = 14 + 20 + 8;  // Ethernet, IPv4, UDP
constexpr uint32_t kIpHdr = 20;
constexpr uint32_t kUdpHdr = 8;
constexpr uint64_t kSeed = 11;
constexpr double kBitsPerByte = 8;
constexpr double kMega = 1e6;
constexpr double kGiga = 1e9;
const char* const kNullTxOnly = "net_null0,no-rx=1";

using Clock = std::chrono::steady_clock;

std::atomic<uint64_t> g_sink{0};

// UDP frames of `size` bytes; with `match`, each payload carries one rule content.
std::vector<std::vector<uint8_t>> make_frames(uint32_t size, bool match, const RuleFile& rules,
                                              std::mt19937& rng) {
  std::vector<std::vector<uint8_t>> frames(kFrames, std::vector<uint8_t>(size, 0));
  const uint32_t payload = size - kHeaders;
  for (auto& f : frames) {
    f[12] = 0x08;
    f[14] = 0x45;
    const uint32_t total = size - 14;
    f[16] = static_cast<uint8_t>(total >> 8), f[17] = static_cast<uint8_t>(total);
    f[22] = 64;
    f[23] = ids::kIpProtoUdp;
    f[26] = 10, f[29] = static_cast<uint8_t>(rng());
    f[30] = 10, f[31] = 1, f[33] = static_cast<uint8_t>(rng());
    const uint32_t udp_len = kUdpHdr + payload;
    f[14 + kIpHdr + 1] = 53;
    f[14 + kIpHdr + 3] = 80;
    f[14 + kIpHdr + 4] = static_cast<uint8_t>(udp_len >> 8);
    f[14 + kIpHdr + 5] = static_cast<uint8_t>(udp_len);
    std::string text = random_text(rng, payload);
    if (match) {
      const std::string& c = rules.contents[rng() % rules.contents.size()];
      text.replace(rng() % (payload - c.size() + 1), c.size(), c);
    }
    std::copy(text.begin(), text.end(), f.begin() + kHeaders);
  }
  return frames;
}

// Runs `pass` (one pass over every payload) until `seconds` pass; payloads per second (M), per
// wall-clock and per CPU second of this thread.
template <class F>
Rates pass_rates(double seconds, size_t per_pass, F&& pass) {
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  uint64_t n = 0;
  double elapsed = 0;
  do {
    pass();
    n += per_pass;
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  const double cpu = thread_cpu_seconds() - cpu_start;
  const auto payloads = static_cast<double>(n);
  return Rates{payloads / elapsed / kMega, cpu > 0 ? payloads / cpu / kMega : 0};
}
template <class F>
double rate_mpps(double seconds, size_t per_pass, F&& pass) {
  return pass_rates(seconds, per_pass, pass).mpps;
}

std::string point(uint32_t size, bool match, const RuleFile& rules, const ids::RuleSet& set,
                  const std::string& rules_path, const BenchContext& ctx, std::mt19937& rng) {
  const auto frames = make_frames(size, match, rules, rng);
  const std::string pcap =
      ctx.dir + "/ids-" + std::to_string(size) + (match ? "-match" : "-clean") + ".pcap";
  if (!write_pcap(pcap, frames)) return "null";
  std::vector<ids::PacketView> views(frames.size());
  for (size_t i = 0; i < frames.size(); ++i)
    ids::parse_packet(frames[i].data(), static_cast<uint32_t>(frames[i].size()), views[i]);
  const double payload_bytes = views[0].ip_payload_len;

  ids::HsScratch scratch;
  if (!ids::alloc_scratch(set.literal_db(), scratch)) return "null";
  auto hs_pass = [&] {
    uint64_t hits = 0;
    for (const ids::PacketView& v : views)
      ids::hs_scan_block(set.literal_db(), scratch.get(), v.ip_payload, v.ip_payload_len,
                         [&hits](uint32_t, uint32_t) { ++hits; });
    g_sink += hits;
  };
  // As IDSMatch scans a batch: payloads of at most kJoinMaxBytes copied end to end, kJoinGroup
  // at a time, one call (occurrences across two payloads counted too: an upper bound).
  std::vector<uint8_t> joined(size_t{kJoinGroup} * kJoinMaxBytes);
  auto hs_joined_pass = [&] {
    uint64_t hits = 0;
    for (size_t i = 0; i < views.size(); i += kJoinGroup) {
      const size_t end = std::min(views.size(), i + kJoinGroup);
      uint32_t at = 0;
      for (size_t k = i; k < end; ++k) {
        const ids::PacketView& v = views[k];
        if (v.ip_payload_len > kJoinMaxBytes) {
          ids::hs_scan_block(set.literal_db(), scratch.get(), v.ip_payload, v.ip_payload_len,
                             [&hits](uint32_t, uint32_t) { ++hits; });
          continue;
        }
        std::memcpy(joined.data() + at, v.ip_payload, v.ip_payload_len);
        at += v.ip_payload_len;
      }
      if (at > 0)
        ids::hs_scan_block(set.literal_db(), scratch.get(), joined.data(), at,
                           [&hits](uint32_t, uint32_t) { ++hits; });
    }
    g_sink += hits;
  };
  auto ac_pass = [&] {
    uint64_t hits = 0;
    for (const ids::PacketView& v : views)
      set.ac().scan(v.ip_payload, v.ip_payload_len, [&hits](uint32_t, uint32_t) { ++hits; });
    g_sink += hits;
  };
  auto ac_lanes_pass = [&] {
    uint64_t hits = 0;
    const uint32_t lanes = ids::AhoCorasick::kLanes;
    for (size_t i = 0; i + lanes <= views.size(); i += lanes) {
      const uint8_t* data[lanes];
      uint32_t len[lanes];
      for (uint32_t l = 0; l < lanes; ++l) {
        data[l] = views[i + l].ip_payload;
        len[l] = views[i + l].ip_payload_len;
      }
      set.ac().scan_lanes(data, len, lanes, [&hits](uint32_t, uint32_t, uint32_t) { ++hits; });
    }
    g_sink += hits;
  };

  const std::vector<std::string> ports = {"replay:file=" + pcap, kNullTxOnly};
  const std::vector<std::string> pcap_ports = {"net_pcap0,rx_pcap=" + pcap + ",infinite_rx=1",
                                               kNullTxOnly};
  const std::string q = "\"" + rules_path + "\"";
  const std::string pipe_hs = "FromInput -> IDSMatch(" + q + ", ENGINE hyperscan) -> ToOutput;";
  const std::string pipe_ac = "FromInput -> IDSMatch(" + q + ", ENGINE ac) -> ToOutput;";
  const double s = ctx.seconds / kRepeats;
  std::vector<double> ids_hs, ids_ac, raw_hs, raw_ac, raw_ac_lanes, ids_hs_cpu, raw_hs_cpu;
  std::vector<double> pcap_hs, pcap_hs_cpu, raw_joined, raw_joined_cpu;
  bool balanced = true;
  for (int r = 0; r < kRepeats; ++r) {
    const Measured a = measure_once(pipe_hs, ports, s, BranchMode::kReuse);
    const Measured b = measure_once(pipe_ac, ports, s, BranchMode::kReuse);
    const Measured c = measure_once(pipe_hs, pcap_ports, s, BranchMode::kReuse);
    balanced &= a.balanced && b.balanced && c.balanced;
    pcap_hs.push_back(c.mpps);
    pcap_hs_cpu.push_back(c.cpu_mpps);
    ids_hs.push_back(a.mpps);
    ids_ac.push_back(b.mpps);
    ids_hs_cpu.push_back(a.cpu_mpps);
    const Rates hs_rates = pass_rates(s / 2, views.size(), hs_pass);
    raw_hs.push_back(hs_rates.mpps);
    raw_hs_cpu.push_back(hs_rates.cpu_mpps);
    const Rates joined_rates = pass_rates(s / 4, views.size(), hs_joined_pass);
    raw_joined.push_back(joined_rates.mpps);
    raw_joined_cpu.push_back(joined_rates.cpu_mpps);
    raw_ac.push_back(rate_mpps(s / 4, views.size(), ac_pass));
    raw_ac_lanes.push_back(rate_mpps(s / 4, views.size(), ac_lanes_pass));
  }
  const double hs = median(ids_hs), ac = median(ids_ac), rhs = median(raw_hs);
  const double rac = median(raw_ac), racl = median(raw_ac_lanes);
  const double hs_cpu = median(ids_hs_cpu), rhs_cpu = median(raw_hs_cpu);
  const double cpu_ratio = rhs_cpu > 0 ? hs_cpu / rhs_cpu : 0;
  const double phs = median(pcap_hs), phs_cpu = median(pcap_hs_cpu);
  const double pcap_cpu_ratio = rhs_cpu > 0 ? phs_cpu / rhs_cpu : 0;
  const double rj = median(raw_joined), rj_cpu = median(raw_joined_cpu);
  auto gbps = [size](double mpps) { return mpps * kMega * size * kBitsPerByte / kGiga; };
  auto scan_gbps = [payload_bytes](double mpps) {
    return mpps * kMega * payload_bytes * kBitsPerByte / kGiga;
  };
  std::fprintf(stderr,
               "bench: ids %u B %s (input replay:): IDSMatch hyperscan %.2f Mpps %.2f Gbps, ac "
               "%.2f Mpps; raw hs_scan %.2f Mpps (%.2f Gbps of payload), AC %.2f / lanes %.2f "
               "Mpps; ratio %.2f; per CPU second IDSMatch hyperscan %.2f vs hs_scan %.2f Mpps "
               "(ratio %.2f); on net_pcap infinite_rx input %.2f Mpps, per CPU second %.2f (ratio "
               "%.2f); hs_scan of payloads joined %u at a time %.2f Mpps, per CPU second %.2f\n",
               size, match ? "~100% match" : "0% match", hs, gbps(hs), ac, rhs, scan_gbps(rhs), rac,
               racl, rhs > 0 ? hs / rhs : 0, hs_cpu, rhs_cpu, cpu_ratio, phs, phs_cpu,
               pcap_cpu_ratio, kJoinGroup, rj, rj_cpu);
  return Obj()
      .count("frame_bytes", size)
      .count("payload_bytes", static_cast<uint64_t>(payload_bytes))
      .str("traffic", match ? "match" : "clean")
      .str("input", "replay")
      .num("ids_hyperscan_mpps", hs)
      .num("ids_hyperscan_gbps", gbps(hs))
      .num("ids_ac_mpps", ac)
      .num("ids_ac_gbps", gbps(ac))
      .num("raw_hs_scan_mpps", rhs)
      .num("raw_hs_scan_payload_gbps", scan_gbps(rhs))
      .num("raw_ac_scan_mpps", rac)
      .num("raw_ac_lanes_scan_mpps", racl)
      .num("raw_ac_lanes_payload_gbps", scan_gbps(racl))
      .num("ids_hyperscan_to_raw_hs_ratio", rhs > 0 ? hs / rhs : 0)
      .num("ids_ac_to_raw_ac_lanes_ratio", racl > 0 ? ac / racl : 0)
      .num("ids_hyperscan_cpu_mpps", hs_cpu)
      .num("raw_hs_scan_cpu_mpps", rhs_cpu)
      .num("ids_hyperscan_to_raw_hs_cpu_ratio", cpu_ratio)
      .num("ids_hyperscan_net_pcap_mpps", phs)
      .num("ids_hyperscan_net_pcap_cpu_mpps", phs_cpu)
      .num("ids_hyperscan_net_pcap_to_raw_hs_cpu_ratio", pcap_cpu_ratio)
      .num("raw_hs_scan_joined_mpps", rj)
      .num("raw_hs_scan_joined_cpu_mpps", rj_cpu)
      .num("ids_hyperscan_to_raw_hs_joined_cpu_ratio", rj_cpu > 0 ? hs_cpu / rj_cpu : 0)
      .raw("balanced", balanced ? "true" : "false")
      .done();
}

std::string bench_ids(const BenchContext& ctx) {
  std::mt19937 rng(kSeed);
  const RuleFile rules = make_rules(rng, "udp", "bench");
  const std::string rules_path = ctx.dir + "/ids-bench.rules";
  std::ofstream(rules_path) << rules.text;
  Result<std::vector<ids::Rule>> parsed = ids::parse_rules(rules.text, rules_path);
  if (!parsed) return "null";
  Result<std::shared_ptr<ids::RuleSet>> set = ids::RuleSet::compile(std::move(parsed.value()));
  if (!set) return "null";
  std::vector<std::string> rows;
  for (uint32_t size : kSizes)
    for (bool match : {false, true})
      rows.push_back(point(size, match, rules, **set, rules_path, ctx, rng));
  return Obj()
      .str("what",
           "IDSMatch (" + std::to_string(kLiteralRules + kRegexRules) +
               " rules, content prefilter on Hyperscan or our Aho-Corasick DFA) over an in-memory "
               "capture replay (replay:file=; IDSMatch hyperscan also over net_pcap infinite_rx, "
               "the input before 2026-11-26), 0% and ~100% match traffic, vs raw hs_scan (per "
               "payload, and payloads joined as IDSMatch scans them) and AC scans of the same "
               "payloads")
      .count("rules", kLiteralRules + kRegexRules)
      .count("dfa_states", (*set)->ac().states())
      .count("dfa_classes", (*set)->ac().stride())
      .count("dfa_bytes", (*set)->ac().memory_bytes())
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(85, "ids", bench_ids);

}  // namespace fulcrum::bench
