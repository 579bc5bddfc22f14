// L7 network functions on one core (`fulcrum bench --only l7_nfs`): StreamIDS and WebGateway
// (src/l7/nf) called directly, message by message, at 64 B, 1 KiB and 64 KiB messages.
//   StreamIDS: the IDS benches' synthetic rules (bench/ids_rules.hh) as tcp rules, all of them
//     (300 contents + 30 with a pcre) and the 300 content-only rules (the set with a device
//     form); kFlows flows take turns, each message continues its flow's request stream (state
//     expanded and compressed every message); random text, so alerts are rare. For the
//     content-only set also finish_device, the host's share of the device form, on outputs
//     precomputed from the op's table.
//   WebGateway: request decryption (IV || ciphertext, PKCS#7) and response encryption (fresh
//     IV, padding); each call first copies the message's body from a template (the in-place
//     transform consumes it), which the figures include.
// MB/s counts message bytes (plaintext size for the gateway), 10^6 bytes.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "bench/groups.hh"
#include "bench/ids_rules.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "kernels/common/ids_ac_layout.h"
#include "kernels/common/l7_ops.h"
#include "l7/nf/stream_ids.hh"
#include "l7/nf/web_gateway.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::bench {
namespace {

constexpr uint32_t kSizes[] = {64, 1024, 64 * 1024};
constexpr uint32_t kFlows = 64;
constexpr uint32_t kTemplates = 16;
constexpr uint64_t kSeed = 4;
constexpr double kMega = 1e6;

struct Rate {
  double msgs_per_s = 0;
  double mb_per_s = 0;
};

// Calls one(i) for i = 0, 1, ... until `seconds` pass, kRepeats times; the median rate.
template <class F>
Rate rate(double seconds, uint32_t bytes, F&& one) {
  using Clock = std::chrono::steady_clock;
  std::vector<double> runs;
  for (int r = 0; r < kRepeats; ++r) {
    const auto start = Clock::now();
    uint64_t n = 0;
    double elapsed = 0;
    do {
      for (uint32_t k = 0; k < kTemplates; ++k) one(n++);
      elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    } while (elapsed < seconds / kRepeats);
    runs.push_back(static_cast<double>(n) / elapsed);
  }
  const double m = median(runs);
  return {m, m * bytes / kMega};
}

std::string row(const char* nf, const char* what, uint32_t size, const Rate& r,
                size_t state_bytes = 0) {
  std::fprintf(stderr, "bench: l7_nfs %s %s %u B: %.0f msgs/s, %.1f MB/s\n", nf, what, size,
               r.msgs_per_s, r.mb_per_s);
  return Obj()
      .str("nf", nf)
      .str("what", what)
      .count("message_bytes", size)
      .num("messages_per_s", r.msgs_per_s)
      .num("mb_per_s", r.mb_per_s)
      .count("state_bytes_per_flow", state_bytes)
      .done();
}

std::vector<std::vector<uint8_t>> texts(std::mt19937& rng, uint32_t size) {
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t t = 0; t < kTemplates; ++t) {
    const std::string s = random_text(rng, size);
    out.emplace_back(s.begin(), s.end());
  }
  return out;
}

// L7_OP_IDS_AC's output words for `msg` from DFA state 0 (kernels/common/l7_ops.h).
std::vector<uint32_t> ids_ac_output(const l7::DeviceOp& op, const std::vector<uint8_t>& msg) {
  std::vector<uint32_t> out(L7_OUT_WORDS, 0);
  const uint8_t* classes = op.table.data();
  std::vector<uint32_t> table((op.table.size() - IDS_AC_ALPHABET) / 4);
  std::memcpy(table.data(), op.table.data() + IDS_AC_ALPHABET, table.size() * 4);
  uint32_t s = 0;
  for (size_t i = 0; i < msg.size(); ++i) {
    const uint32_t e = table[s + classes[msg[i]]];
    s = e & IDS_AC_STATE_MASK;
    if ((e & IDS_AC_MATCH_BIT) == 0) continue;
    const uint32_t k = out[0]++;
    if (k < (L7_OUT_WORDS - 1) / 2) {
      out[1 + 2 * k] = s;
      out[2 + 2 * k] = static_cast<uint32_t>(i + 1);
    }
  }
  return out;
}

void stream_ids_rows(const BenchContext& ctx, const std::string& rules_text, const char* what,
                     std::mt19937& rng, std::vector<std::string>& rows) {
  Result<ids::RuleFile> file = ids::parse_rule_file(rules_text, "bench.rules", false);
  if (!file) return;
  Result<std::shared_ptr<const l7::StreamRules>> rules = l7::StreamRules::compile(std::move(*file));
  if (!rules) return;
  auto nf = l7::StreamIds::create(rules.value(), l7::StreamIds::Mode::kDetect,
                                  l7::StreamIds::kScanRequests);
  if (!nf) return;
  l7::StreamIds& ids = *nf.value();
  std::vector<std::vector<uint8_t>> states(kFlows, std::vector<uint8_t>(ids.state_bytes()));
  for (auto& s : states) ids.init_state(s);
  for (uint32_t size : kSizes) {
    const auto bodies = texts(rng, size);
    l7::Message m;
    m.body.reserve(size);
    const Rate r = rate(ctx.seconds, size, [&](uint64_t i) {
      m.body = bodies[i % kTemplates];
      m.verdict = {};
      ids.process(m, states[i % kFlows]);
    });
    rows.push_back(row("StreamIDS", what, size, r, ids.state_bytes()));
    const std::optional<l7::DeviceOp> op = ids.device_op();
    if (!op) continue;
    // The host's share of the device form: finish_device on outputs precomputed by walking the
    // op's table as l7_ops.h describes (from the root; the NF does not depend on the carry).
    std::vector<std::vector<uint32_t>> outs;
    for (const auto& b : bodies) outs.push_back(ids_ac_output(*op, b));
    const Rate f = rate(ctx.seconds, size, [&](uint64_t i) {
      m.body = bodies[i % kTemplates];
      m.verdict = {};
      ids.finish_device(m, states[i % kFlows], outs[i % kTemplates]);
    });
    rows.push_back(row("StreamIDS", "finish_device (host side of L7_OP_IDS_AC), 300 content rules",
                       size, f, ids.state_bytes()));
  }
}

std::string bench_l7_nfs(const BenchContext& ctx) {
  std::mt19937 rng(kSeed);
  const RuleFile rules = make_rules(rng, "tcp", "bench");
  std::string literal_only;
  for (size_t at = 0, line = 0; at < rules.text.size() && line < kLiteralRules; ++line) {
    const size_t end = rules.text.find('\n', at);
    literal_only += rules.text.substr(at, end + 1 - at);
    at = end + 1;
  }
  std::vector<std::string> rows;
  stream_ids_rows(ctx, rules.text, "330 rules (30 with pcre)", rng, rows);
  stream_ids_rows(ctx, literal_only, "300 content rules", rng, rows);

  uint8_t key[l7::kGatewayBlock];
  for (uint8_t& b : key) b = static_cast<uint8_t>(rng());
  auto gw = l7::WebGateway::create(key, true, true);
  if (!gw) return "null";
  for (uint32_t size : kSizes) {
    const auto plain = texts(rng, size);
    std::vector<std::vector<uint8_t>> sealed;
    for (const auto& p : plain) {  // the gateway's own encryption makes the request bodies
      l7::Message m;
      m.dir = l7::Direction::kResponse;
      m.body = p;
      gw.value()->process(m, {});
      sealed.push_back(m.body);
    }
    l7::Message m;
    m.body.reserve(size + 2 * l7::kGatewayBlock);
    const Rate dec = rate(ctx.seconds, size, [&](uint64_t i) {
      m.dir = l7::Direction::kRequest;
      m.body = sealed[i % kTemplates];
      gw.value()->process(m, {});
    });
    rows.push_back(row("WebGateway", "decrypt requests", size, dec));
    const Rate enc = rate(ctx.seconds, size, [&](uint64_t i) {
      m.dir = l7::Direction::kResponse;
      m.body = plain[i % kTemplates];
      gw.value()->process(m, {});
    });
    rows.push_back(row("WebGateway", "encrypt responses", size, enc));
  }
  return Obj()
      .str("what",
           "L7 NFs on one core, called directly: StreamIDS (Hyperscan streaming, state "
           "expanded/compressed per message) and WebGateway (AES-128-CBC, OpenSSL EVP)")
      .count("flows", kFlows)
      .raw("points", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(99, "l7_nfs", bench_l7_nfs);

}  // namespace fulcrum::bench
