// IDS stream benchmark: IDSMatch with TCP stream reassembly (STREAM true) against per-packet
// inspection (STREAM false) on the same TCP capture, replayed from pcap: kFlows connections
// (handshake, kSegments data segments each, interleaved round-robin as on a link, FIN both ways,
// so that every replay pass starts the streams afresh) whose byte streams carry one rule content
// about every segment's length at a random position, so that some contents cross segment
// boundaries. Rules: the ids group's shape as tcp rules (random 6..12-byte contents, a quarter
// nocase, a tenth with a pcre; the pcres make the lookback the STREAM_LOOKBACK cap, 1024 B).
// Also counts, in process over one pass, the alerts of both modes: the contents that cross a
// boundary are found only on the stream.

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/ids_rules.hh"
#include "bench/measure.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kFrameSizes[] = {256, 1500};
constexpr uint32_t kFlows = 64;
constexpr uint32_t kSegments = 32;
constexpr uint32_t kEthIpTcp = 14 + 20 + 20;
constexpr uint32_t kIsn = 1000;
constexpr uint16_t kServerPort = 80;
constexpr uint16_t kFirstClientPort = 20000;
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kPsh = 0x08, kAck = 0x10;
constexpr uint64_t kSeed = 12;
constexpr double kMega = 1e6;
constexpr double kGiga = 1e9;
constexpr double kBitsPerByte = 8;
const char* const kNullTxOnly = "net_null0,no-rx=1";

using Frame = std::vector<uint8_t>;

Frame tcp_frame(bool reply, uint16_t client_port, uint32_t seq, uint8_t flags,
                const std::string& payload) {
  Frame f(kEthIpTcp + payload.size(), 0);
  f[12] = 0x08;
  uint8_t* ip = &f[14];
  ip[0] = 0x45;
  const uint32_t total = 20 + 20 + static_cast<uint32_t>(payload.size());
  ip[2] = static_cast<uint8_t>(total >> 8), ip[3] = static_cast<uint8_t>(total);
  ip[8] = 64;
  ip[9] = ids::kIpProtoTcp;
  const uint8_t client[4] = {10, 0, 0, 1}, server[4] = {10, 0, 0, 2};
  std::copy(reply ? server : client, (reply ? server : client) + 4, ip + 12);
  std::copy(reply ? client : server, (reply ? client : server) + 4, ip + 16);
  uint8_t* tcp = ip + 20;
  const uint16_t sport = reply ? kServerPort : client_port;
  const uint16_t dport = reply ? client_port : kServerPort;
  tcp[0] = static_cast<uint8_t>(sport >> 8), tcp[1] = static_cast<uint8_t>(sport);
  tcp[2] = static_cast<uint8_t>(dport >> 8), tcp[3] = static_cast<uint8_t>(dport);
  for (int k = 0; k < 4; ++k) tcp[4 + k] = static_cast<uint8_t>(seq >> (24 - 8 * k));
  tcp[12] = 0x50;
  tcp[13] = flags;
  std::copy(payload.begin(), payload.end(), f.begin() + kEthIpTcp);
  return f;
}

// The connections' frames: handshakes, data segments round-robin over the flows, FINs.
std::vector<Frame> make_trace(uint32_t frame_size, const RuleFile& rules, std::mt19937& rng) {
  const uint32_t seg = frame_size - kEthIpTcp;
  std::vector<std::string> streams(kFlows);
  for (std::string& s : streams) {
    s = random_text(rng, seg * kSegments);
    for (uint32_t k = 0; k < kSegments; ++k) {
      const std::string& c = rules.contents[rng() % rules.contents.size()];
      s.replace(rng() % (s.size() - c.size() + 1), c.size(), c);
    }
  }
  std::vector<Frame> frames;
  for (uint32_t f = 0; f < kFlows; ++f) {
    const auto port = static_cast<uint16_t>(kFirstClientPort + f);
    frames.push_back(tcp_frame(false, port, kIsn, kSyn, ""));
    frames.push_back(tcp_frame(true, port, kIsn, kSyn | kAck, ""));
    frames.push_back(tcp_frame(false, port, kIsn + 1, kAck, ""));
  }
  for (uint32_t k = 0; k < kSegments; ++k)
    for (uint32_t f = 0; f < kFlows; ++f)
      frames.push_back(tcp_frame(false, static_cast<uint16_t>(kFirstClientPort + f),
                                 kIsn + 1 + k * seg, kPsh | kAck, streams[f].substr(k * seg, seg)));
  for (uint32_t f = 0; f < kFlows; ++f) {
    const auto port = static_cast<uint16_t>(kFirstClientPort + f);
    frames.push_back(tcp_frame(false, port, kIsn + 1 + kSegments * seg, kFin | kAck, ""));
    frames.push_back(tcp_frame(true, port, kIsn + 1, kFin | kAck, ""));
  }
  return frames;
}

// Alerts of one pass over the trace, in process.
uint64_t count_alerts(const std::shared_ptr<ids::RuleSet>& set, const std::vector<Frame>& frames,
                      bool stream) {
  ids::StateLimits limits;
  limits.stream = stream;
  Result<std::unique_ptr<ids::Matcher>> m =
      ids::Matcher::create(set, ids::Engine::kHyperscan, limits);
  if (!m) return 0;
  uint64_t alerts = 0;
  for (const Frame& f : frames) {
    ids::PacketView v;
    if (ids::parse_packet(f.data(), static_cast<uint32_t>(f.size()), v) != ids::ParseResult::kOk)
      continue;
    m.value()->match_batch(&v, 1, [&alerts](uint32_t, uint32_t) { ++alerts; });
  }
  return alerts;
}

std::string point(uint32_t size, const RuleFile& rules, const std::shared_ptr<ids::RuleSet>& set,
                  const std::string& rules_path, const BenchContext& ctx, std::mt19937& rng) {
  const std::vector<Frame> frames = make_trace(size, rules, rng);
  const std::string pcap = ctx.dir + "/ids-stream-" + std::to_string(size) + ".pcap";
  if (!write_pcap(pcap, frames)) return "null";
  const std::vector<std::string> ports = {"net_pcap0,rx_pcap=" + pcap + ",infinite_rx=1",
                                          kNullTxOnly};
  const std::string q = "\"" + rules_path + "\"";
  const std::string stream = "FromInput -> IDSMatch(" + q + ", STREAM true) -> ToOutput;";
  const std::string per_packet = "FromInput -> IDSMatch(" + q + ", STREAM false) -> ToOutput;";
  const auto [s, p] = measure_pair(stream, per_packet, ports, ctx.seconds, BranchMode::kReuse);
  const uint64_t alerts_stream = count_alerts(set, frames, true);
  const uint64_t alerts_packet = count_alerts(set, frames, false);
  auto gbps = [&frames](double mpps) {
    double bytes = 0;
    for (const Frame& f : frames) bytes += static_cast<double>(f.size());
    return mpps * kMega * bytes / static_cast<double>(frames.size()) * kBitsPerByte / kGiga;
  };
  std::fprintf(stderr,
               "bench: ids_stream %u B frames: STREAM true %.2f Mpps %.2f Gbps, STREAM false %.2f "
               "Mpps (ratio %.2f); alerts per pass: stream %llu, per packet %llu\n",
               size, s.mpps, gbps(s.mpps), p.mpps, p.mpps > 0 ? s.mpps / p.mpps : 0,
               static_cast<unsigned long long>(alerts_stream),
               static_cast<unsigned long long>(alerts_packet));
  return Obj()
      .count("frame_bytes", size)
      .count("frames_per_pass", frames.size())
      .num("stream_mpps", s.mpps)
      .num("stream_gbps", gbps(s.mpps))
      .num("per_packet_mpps", p.mpps)
      .num("per_packet_gbps", gbps(p.mpps))
      .num("stream_to_per_packet_ratio", p.mpps > 0 ? s.mpps / p.mpps : 0)
      .count("alerts_stream", alerts_stream)
      .count("alerts_per_packet", alerts_packet)
      .raw("balanced", s.balanced && p.balanced ? "true" : "false")
      .done();
}

std::string bench_ids_stream(const BenchContext& ctx) {
  std::mt19937 rng(kSeed);
  const RuleFile rules = make_rules(rng, "tcp", "stream bench");
  const std::string rules_path = ctx.dir + "/ids-stream-bench.rules";
  std::ofstream(rules_path) << rules.text;
  Result<std::vector<ids::Rule>> parsed = ids::parse_rules(rules.text, rules_path);
  if (!parsed) return "null";
  Result<std::shared_ptr<ids::RuleSet>> set = ids::RuleSet::compile(std::move(parsed.value()));
  if (!set) return "null";
  std::vector<std::string> rows;
  for (uint32_t size : kFrameSizes) rows.push_back(point(size, rules, *set, rules_path, ctx, rng));
  return Obj()
      .str("what",
           "IDSMatch (hyperscan) with TCP stream reassembly vs per packet on the same TCP "
           "capture (" +
               std::to_string(kFlows) + " connections x " + std::to_string(kSegments) +
               " segments, one rule content per segment length, some crossing segments)")
      .count("rules", kLiteralRules + kRegexRules)
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(86, "ids_stream", bench_ids_stream);

}  // namespace fulcrum::bench
