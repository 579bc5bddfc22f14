// StreamIDS (src/l7/nf/stream_ids.hh): the sids it raises on a flow's bytes are the packet IDS's
// (src/lib/ids, the whole payload as one TCP segment) however the bytes are split into messages
// (one message, every two-message split, one byte a message); its device form (L7_OP_IDS_AC)
// finished from the output of a CPU model of the op raises the same alerts on the same messages
// as process(), also when a flow alternates between the CPU and the device; block mode, the
// direction filter, the skipped rules and the registry.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "ids_test_frames.hh"
#include "kernels/common/ids_ac_layout.h"
#include "kernels/common/l7_ops.h"
#include "l7/nf/stream_ids.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::l7 {
namespace {

using Sids = std::vector<uint32_t>;

// Contents (nocase, offset/depth, several per rule, case-sensitive), relative chains, a first
// content relative to the stream's start, and pcres.
const char* const kRules =
    "alert tcp any any -> any any (msg:\"attack\"; content:\"attack\"; sid:1;)\n"
    "alert tcp any any -> any any (msg:\"evil\"; content:\"EVIL\"; nocase; sid:2;)\n"
    "alert tcp any any -> any any (msg:\"two\"; content:\"abc\"; content:\"xyz\"; sid:3;)\n"
    "alert tcp any any -> any any (msg:\"GET first\"; content:\"GET\"; offset:0; depth:3; "
    "sid:4;)\n"
    "alert tcp any any -> any any (msg:\"pass\"; content:\"pass\"; offset:4; depth:10; sid:5;)\n"
    "alert tcp any any -> any any (msg:\"admin\"; content:\"user=\"; content:\"admin\"; "
    "distance:0; within:10; sid:6;)\n"
    "alert tcp any any -> any any (msg:\"sqli\"; pcre:\"/select\\s+\\*\\s+from/i\"; sid:7;)\n"
    "alert tcp any any -> any any (msg:\"Zz\"; content:\"Zz\"; sid:8;)\n"
    "alert tcp any any -> any any (msg:\"k1z\"; content:\"k=\"; content:\"1\"; within:3; "
    "content:\"z\"; distance:0; within:2; sid:9;)\n"
    "alert tcp any any -> any any (msg:\"root\"; content:\"root\"; pcre:\"/passwd[0-9]+/\"; "
    "sid:10;)\n"
    "alert tcp any any -> any any (msg:\"head\"; content:\"head\"; distance:2; within:6; "
    "sid:11;)\n"
    "alert tcp any any -> any any (msg:\"long\"; content:\"0123456789abcdef\"; sid:12;)\n";

// Literal contents only: the rules the device form decides by itself.
const char* const kLiteralRules =
    "alert tcp any any -> any any (msg:\"attack\"; content:\"attack\"; sid:1;)\n"
    "alert tcp any any -> any any (msg:\"evil\"; content:\"EVIL\"; nocase; sid:2;)\n"
    "alert tcp any any -> any any (msg:\"two\"; content:\"abc\"; content:\"xyz\"; sid:3;)\n"
    "alert tcp any any -> any any (msg:\"GET first\"; content:\"GET\"; offset:0; depth:3; "
    "sid:4;)\n"
    "alert tcp any any -> any any (msg:\"pass\"; content:\"pass\"; offset:4; depth:10; sid:5;)\n"
    "alert tcp any any -> any any (msg:\"Zz\"; content:\"Zz\"; sid:8;)\n"
    "alert tcp any any -> any any (msg:\"long\"; content:\"0123456789abcdef\"; sid:12;)\n"
    "alert tcp any any -> any any (msg:\"aab\"; content:\"aab\"; sid:13;)\n"
    "alert tcp any any -> any any (msg:\"ba\"; content:\"ba\"; nocase; sid:14;)\n";

const std::vector<std::string> kFlows = {
    "GET /attack HTTP/1.1",
    "xxGET /EvIl.html",
    "xyz then later abc",
    "abc only",
    "12345pass and pass",
    "0123456789pass",
    "user=xx admin user=12345678901admin",
    "user=12345678901admin",
    "q=SELECT   * \t FROM users",
    "zz zZ ZZ",
    "aZzb",
    "k=1xxxxk=x1zq",
    "k=1xxz k=x1xxz",
    "root:x passwd42",
    "passwd",
    "xxhead",
    "xxxxxxxhead",
    "--0123456789abcdef--0123456789ABCDEF",
    "aaab BAaab xAttackattack",
    "",
};

std::shared_ptr<const StreamRules> compile(const char* text) {
  Result<ids::RuleFile> file = ids::parse_rule_file(text, "t.rules", false);
  EXPECT_TRUE(file.ok());
  Result<std::shared_ptr<const StreamRules>> rules = StreamRules::compile(std::move(*file));
  EXPECT_TRUE(rules.ok()) << (rules.ok() ? "" : rules.error());
  return rules.value();
}

std::unique_ptr<StreamIds> make_nf(const char* text,
                                   uint8_t scan = StreamIds::kScanRequests |
                                                  StreamIds::kScanResponses,
                                   StreamIds::Mode mode = StreamIds::Mode::kDetect) {
  Result<std::unique_ptr<StreamIds>> nf = StreamIds::create(compile(text), mode, scan);
  EXPECT_TRUE(nf.ok()) << (nf.ok() ? "" : nf.error());
  return std::move(nf.value());
}

// The packet IDS's sids on `payload` as one TCP segment (Hyperscan prefilter).
Sids packet_sids(const char* text, const std::string& payload) {
  Result<std::vector<ids::Rule>> parsed = ids::parse_rules(text, "t.rules");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  Result<std::shared_ptr<ids::RuleSet>> set = ids::RuleSet::compile(std::move(*parsed));
  EXPECT_TRUE(set.ok());
  const std::vector<uint8_t> frame =
      testing::l4_frame(testing::kProtoTcp, 0x0A000001, 0x0A000002, 40000, 80, payload);
  ids::PacketView v;
  EXPECT_EQ(ids::parse_packet(frame.data(), static_cast<uint32_t>(frame.size()), v),
            ids::ParseResult::kOk);
  Result<std::unique_ptr<ids::Matcher>> m =
      ids::Matcher::create(set.value(), ids::Engine::kHyperscan);
  EXPECT_TRUE(m.ok());
  Sids out;
  m.value()->match_batch(
      &v, 1, [&](uint32_t, uint32_t rule) { out.push_back(set.value()->rules()[rule].sid); });
  std::sort(out.begin(), out.end());
  return out;
}

Message message(const std::string& bytes, uint64_t seq, Direction dir = Direction::kRequest) {
  Message m;
  m.flow = 7;
  m.dir = dir;
  m.seq = seq;
  m.body.assign(bytes.begin(), bytes.end());
  return m;
}

// The pieces of `s` split at the given offsets (increasing).
std::vector<std::string> split(const std::string& s, const std::vector<size_t>& at) {
  std::vector<std::string> out;
  size_t from = 0;
  for (size_t a : at) {
    out.push_back(s.substr(from, a - from));
    from = a;
  }
  out.push_back(s.substr(from));
  return out;
}

// Every way of cutting a flow this test tries: whole, each two-message split, one byte a message.
std::vector<std::vector<std::string>> cuttings(const std::string& s) {
  std::vector<std::vector<std::string>> out = {{s}};
  for (size_t k = 1; k < s.size(); ++k) out.push_back(split(s, {k}));
  if (s.size() > 1) {
    std::vector<size_t> every;
    for (size_t k = 1; k < s.size(); ++k) every.push_back(k);
    out.push_back(split(s, every));
  }
  return out;
}

// The sids raised on each message when `nf` processes `pieces` as one flow on the CPU.
std::vector<Sids> run_cpu(StreamIds& nf, const std::vector<std::string>& pieces) {
  std::vector<uint8_t> state(nf.state_bytes());
  nf.init_state(state);
  std::vector<Sids> out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Message m = message(pieces[i], i);
    nf.process(m, state);
    Sids s = nf.last_alerts();
    EXPECT_EQ(m.verdict.alerts, s.size());
    std::sort(s.begin(), s.end());
    out.push_back(s);
  }
  return out;
}

Sids all_of(const std::vector<Sids>& per_message) {
  Sids out;
  for (const Sids& s : per_message) out.insert(out.end(), s.begin(), s.end());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(StreamIds, SidsEqualThePacketIdsOnTheWholePayloadAtEverySplit) {
  for (const char* rules : {kRules, kLiteralRules}) {
    auto nf = make_nf(rules);
    std::set<uint32_t> raised;  // every rule is raised by some flow: the test has teeth
    for (const std::string& flow : kFlows) {
      const Sids expected = packet_sids(rules, flow);
      raised.insert(expected.begin(), expected.end());
      for (const auto& pieces : cuttings(flow))
        ASSERT_EQ(all_of(run_cpu(*nf, pieces)), expected)
            << "flow '" << flow << "' in " << pieces.size() << " messages";
    }
    EXPECT_EQ(raised.size(), nf->rules().rules().size());
  }
}

// Random rules over a 3-letter alphabet (contents of 1..4 bytes, nocase, offset/depth, chains
// with distance/within) and random flows, so that matches, near misses and boundary-spanning
// occurrences are frequent: the sids at random cuts and one byte a message equal the packet
// IDS's.
TEST(StreamIds, RandomRulesAndFlowsMatchThePacketIds) {
  constexpr int kRounds = 60;
  std::mt19937 rng(20261125);
  auto text = [&](size_t n, const char* alphabet) {
    std::string t(n, ' ');
    for (char& c : t) c = alphabet[rng() % 3];
    return t;
  };
  size_t alerts = 0;
  for (int round = 0; round < kRounds; ++round) {
    std::string rules;
    for (uint32_t sid = 1; sid <= 12; ++sid) {
      std::string r = "alert tcp any any -> any any (";
      const uint32_t contents = 1 + rng() % 3;
      for (uint32_t c = 0; c < contents; ++c) {
        const std::string bytes = text(1 + rng() % 4, "abA");
        r += "content:\"" + bytes + "\"; ";
        if (rng() % 3 == 0) r += "nocase; ";
        if (c > 0 && rng() % 2 == 0) {
          const uint32_t d = rng() % 4;
          r += "distance:" + std::to_string(d) + "; ";
          if (rng() % 2) r += "within:" + std::to_string(bytes.size() + rng() % 6) + "; ";
        } else if (rng() % 4 == 0) {
          const uint32_t off = rng() % 8;
          r += "offset:" + std::to_string(off) + "; ";
          if (rng() % 2) r += "depth:" + std::to_string(bytes.size() + rng() % 10) + "; ";
        }
      }
      rules += r + "sid:" + std::to_string(sid) + ";)\n";
    }
    auto nf = make_nf(rules.c_str());
    ASSERT_TRUE(nf->rules().skipped().empty()) << ids::skipped_summary(nf->rules().skipped());
    for (int f = 0; f < 15; ++f) {
      const std::string flow = text(10 + rng() % 30, "abB");
      const Sids expected = packet_sids(rules.c_str(), flow);
      alerts += expected.size();
      std::vector<std::vector<std::string>> cuts = {{flow}, cuttings(flow).back()};
      for (int k = 0; k < 4; ++k) {
        std::vector<size_t> at;
        for (size_t i = 1; i < flow.size(); ++i)
          if (rng() % 4 == 0) at.push_back(i);
        cuts.push_back(split(flow, at));
      }
      for (const auto& pieces : cuts)
        ASSERT_EQ(all_of(run_cpu(*nf, pieces)), expected)
            << "flow '" << flow << "' in " << pieces.size() << " messages, rules\n"
            << rules;
    }
  }
  EXPECT_GT(alerts, size_t{kRounds} * 15);  // more than one rule a flow on average
}

TEST(StreamIds, TheFlowsRaiseTheExpectedRules) {
  // Guards the equality test against a rule set that never matches: known answers.
  EXPECT_EQ(packet_sids(kRules, "GET /attack HTTP/1.1"), (Sids{1, 4}));
  EXPECT_EQ(packet_sids(kRules, "user=12345678901admin"), Sids{});
  EXPECT_EQ(packet_sids(kRules, "q=SELECT   * \t FROM users"), Sids{7});
  EXPECT_EQ(packet_sids(kRules, "k=1xxxxk=x1zq"), Sids{9});
  EXPECT_EQ(packet_sids(kRules, "root:x passwd42"), (Sids{5, 10}));  // pass at 7..11
  auto nf = make_nf(kRules);
  EXPECT_EQ(run_cpu(*nf, {"GET /att", "ack", " HTTP"}), (std::vector<Sids>{{4}, {1}, {}}));
  EXPECT_EQ(run_cpu(*nf, {"xyz", "-", "ab", "c"}), (std::vector<Sids>{{}, {}, {}, {3}}));
}

TEST(StreamIds, EachRuleAlertsOncePerFlowAndDirection) {
  auto nf = make_nf(kRules);
  std::vector<uint8_t> state(nf->state_bytes());
  nf->init_state(state);
  Sids raised;
  const std::pair<const char*, Direction> msgs[] = {{"attack", Direction::kRequest},
                                                    {"attack", Direction::kRequest},
                                                    {"attack", Direction::kResponse},
                                                    {"attack attack", Direction::kResponse}};
  for (const auto& [bytes, dir] : msgs) {
    Message m = message(bytes, 0, dir);
    nf->process(m, state);
    raised.push_back(m.verdict.alerts);
  }
  EXPECT_EQ(raised, (Sids{1, 0, 1, 0}));
  EXPECT_EQ(nf->alerts_by_rule()[0], 2u);
  EXPECT_EQ(nf->counters().alerts, 2u);
}

// The kernel's L7_OP_IDS_AC on one message, as kernels/common/l7_ops.h documents it: the DFA
// walk from the carried state, every step into a state with outputs counted, the first
// (L7_OUT_WORDS - 1) / 2 recorded as (state, end).
std::vector<uint32_t> model_ids_ac(const std::vector<uint8_t>& table, std::span<uint8_t> state,
                                   const std::string& msg) {
  std::vector<uint32_t> out(L7_OUT_WORDS, 0);
  const uint8_t* classes = table.data();
  auto entry = [&](uint32_t i) {
    uint32_t e;
    std::memcpy(&e, table.data() + IDS_AC_ALPHABET + 4 * size_t{i}, 4);
    return e;
  };
  uint32_t s;
  std::memcpy(&s, state.data(), 4);
  for (size_t i = 0; i < msg.size(); ++i) {
    const uint32_t e = entry(s + classes[static_cast<uint8_t>(msg[i])]);
    s = e & IDS_AC_STATE_MASK;
    if ((e & IDS_AC_MATCH_BIT) == 0) continue;
    const uint32_t k = out[0]++;
    if (k < (L7_OUT_WORDS - 1) / 2) {
      out[1 + 2 * k] = s;
      out[2 + 2 * k] = static_cast<uint32_t>(i + 1);
    }
  }
  std::memcpy(state.data(), &s, 4);
  return out;
}

// The sids on each message when message i runs on the device if device(i), else on the CPU.
template <class OnDevice>
std::vector<Sids> run_mixed(StreamIds& nf, const std::vector<std::string>& pieces,
                            OnDevice device) {
  const std::vector<uint8_t> table = nf.device_op()->table;
  std::vector<uint8_t> state(nf.state_bytes());
  nf.init_state(state);
  std::vector<Sids> out;
  for (size_t i = 0; i < pieces.size(); ++i) {
    Message m = message(pieces[i], i);
    if (device(i)) {
      const std::vector<uint32_t> words = model_ids_ac(table, state, pieces[i]);
      nf.finish_device(m, state, words);
    } else {
      nf.process(m, state);
    }
    Sids s = nf.last_alerts();
    EXPECT_EQ(m.verdict.alerts, s.size());
    std::sort(s.begin(), s.end());
    out.push_back(s);
  }
  return out;
}

TEST(StreamIds, DeviceFormRaisesProcessAlertsOnTheSameMessages) {
  auto cpu = make_nf(kLiteralRules);
  auto dev = make_nf(kLiteralRules);
  ASSERT_TRUE(dev->device_op().has_value());
  EXPECT_EQ(dev->device_op()->code, L7_OP_IDS_AC);
  for (const std::string& flow : kFlows) {
    for (const auto& pieces : cuttings(flow)) {
      const std::vector<Sids> expected = run_cpu(*cpu, pieces);
      EXPECT_EQ(run_mixed(*dev, pieces, [](size_t) { return true; }), expected)
          << "device, flow '" << flow << "' in " << pieces.size() << " messages";
      EXPECT_EQ(run_mixed(*dev, pieces, [](size_t i) { return i % 2 == 0; }), expected)
          << "alternating, flow '" << flow << "'";
      EXPECT_EQ(run_mixed(*dev, pieces, [](size_t i) { return i % 3 == 1; }), expected)
          << "mostly CPU, flow '" << flow << "'";
    }
  }
  EXPECT_GT(dev->counters().resumed, 0u);
  EXPECT_GT(dev->counters().device_messages, 0u);
}

// Random content-only rules (1..5 bytes, nocase, offset/depth, up to 3 a rule) and flows: the
// device form, alone or alternating with the CPU, raises process()'s alerts on each message.
TEST(StreamIds, RandomContentRulesDeviceEqualsCpu) {
  std::mt19937 rng(7);
  auto text = [&](size_t n, const char* alphabet) {
    std::string t(n, ' ');
    for (char& c : t) c = alphabet[rng() % 3];
    return t;
  };
  size_t alerts = 0;
  for (int round = 0; round < 30; ++round) {
    std::string rules;
    for (uint32_t sid = 1; sid <= 10; ++sid) {
      std::string r = "alert tcp any any -> any any (";
      for (uint32_t c = 0, n = 1 + rng() % 3; c < n; ++c) {
        const std::string bytes = text(1 + rng() % 5, "abA");
        r += "content:\"" + bytes + "\"; ";
        if (rng() % 3 == 0) r += "nocase; ";
        if (rng() % 3 == 0) {
          r += "offset:" + std::to_string(rng() % 8) + "; ";
          if (rng() % 2) r += "depth:" + std::to_string(bytes.size() + rng() % 10) + "; ";
        }
      }
      rules += r + "sid:" + std::to_string(sid) + ";)\n";
    }
    auto cpu = make_nf(rules.c_str());
    auto dev = make_nf(rules.c_str());
    ASSERT_TRUE(dev->device_op().has_value());
    for (int f = 0; f < 10; ++f) {
      const std::string flow = text(10 + rng() % 40, "abB");
      std::vector<size_t> at;
      for (size_t i = 1; i < flow.size(); ++i)
        if (rng() % 3 == 0) at.push_back(i);
      for (const auto& pieces : {split(flow, at), cuttings(flow).back()}) {
        const std::vector<Sids> expected = run_cpu(*cpu, pieces);
        alerts += all_of(expected).size();
        EXPECT_EQ(all_of(expected), packet_sids(rules.c_str(), flow));
        ASSERT_EQ(run_mixed(*dev, pieces, [](size_t) { return true; }), expected)
            << "flow '" << flow << "', rules\n"
            << rules;
        ASSERT_EQ(run_mixed(*dev, pieces, [&](size_t) { return rng() % 2 == 0; }), expected)
            << "flow '" << flow << "', rules\n"
            << rules;
      }
    }
  }
  EXPECT_GT(alerts, 300u);
}

TEST(StreamIds, OverflowedDeviceOutputIsRescannedOnTheCpu) {
  auto cpu = make_nf(kLiteralRules);
  auto dev = make_nf(kLiteralRules);
  std::string many;
  for (int i = 0; i < 40; ++i) many += "ba";  // 40 occurrences of "ba": more than fit
  const std::vector<std::string> pieces = {"x" + many + "aa", "b attack", "xyz", "abc"};
  const std::vector<Sids> expected = run_cpu(*cpu, pieces);
  EXPECT_EQ(expected, (std::vector<Sids>{{14}, {1, 13}, {}, {3}}));
  EXPECT_EQ(run_mixed(*dev, pieces, [](size_t) { return true; }), expected);
  EXPECT_EQ(dev->counters().device_overflows, 1u);
}

TEST(StreamIds, ACarriedStateAdvancedByTheOtherDirectionDoesNotChangeTheAlerts) {
  // Both directions in one batch: the kernel's state word runs over a response between two
  // requests; the request split "att" | "ack" is still found, and nothing spurious.
  auto nf = make_nf(kLiteralRules);
  const std::vector<uint8_t> table = nf->device_op()->table;
  std::vector<uint8_t> state(nf->state_bytes());
  nf->init_state(state);
  Message a = message("att", 0), r = message("xxEVI", 0, Direction::kResponse),
          b = message("ack", 1);
  const auto wa = model_ids_ac(table, state, "att");
  const auto wr = model_ids_ac(table, state, "xxEVI");
  const auto wb = model_ids_ac(table, state, "ack");
  nf->finish_device(a, state, wa);
  nf->finish_device(r, state, wr);
  nf->finish_device(b, state, wb);
  EXPECT_EQ(nf->last_alerts(), Sids{1});
  Message l = message("L", 1, Direction::kResponse);
  nf->process(l, state);
  EXPECT_EQ(nf->last_alerts(), Sids{2});
}

TEST(StreamIds, RulesWithPcreOrChainsHaveNoDeviceForm) {
  EXPECT_FALSE(make_nf(kRules)->device_op().has_value());
}

TEST(StreamIds, BlockModeAnswers403OrClosesRawStreams) {
  auto nf = make_nf(kRules, StreamIds::kScanRequests, StreamIds::Mode::kBlock);
  std::vector<uint8_t> state(nf->state_bytes());
  nf->init_state(state);
  Message ok = message("hello", 0);
  nf->process(ok, state);
  EXPECT_EQ(ok.verdict.action, Action::kForward);
  Message bad = message("an attack", 1);
  nf->process(bad, state);
  EXPECT_EQ(bad.verdict.action, Action::kRespond);
  EXPECT_EQ(bad.verdict.status, 403);
  EXPECT_EQ(bad.verdict.reason, "StreamIDS: sid 1");
  Message raw = message("EVIL", 2);
  raw.http = false;
  nf->process(raw, state);
  EXPECT_EQ(raw.verdict.action, Action::kClose);
  EXPECT_EQ(nf->counters().blocked, 2u);
}

TEST(StreamIds, DirectionsAreSeparateStreamsAndFilteredByArgumentAndFlowOption) {
  const char* rules =
      "alert tcp any any -> any any (content:\"secret\"; flow:to_client,established; sid:1;)\n"
      "alert tcp any any -> any any (content:\"cmd\"; flow:to_server; sid:2;)\n";
  auto both = make_nf(rules);
  std::vector<uint8_t> state(both->state_bytes());
  both->init_state(state);
  Message q1 = message("sec", 0), p1 = message("ret", 0, Direction::kResponse);
  both->process(q1, state);
  both->process(p1, state);
  EXPECT_EQ(p1.verdict.alerts, 0u);  // "sec" was a request, "ret" a response
  Message q2 = message("secret cmd", 1), p2 = message("secret cmd", 1, Direction::kResponse);
  both->process(q2, state);
  EXPECT_EQ(both->last_alerts(), Sids{2});
  both->process(p2, state);
  EXPECT_EQ(both->last_alerts(), Sids{1});
  auto responses = make_nf(rules, StreamIds::kScanResponses);
  std::vector<uint8_t> rs(responses->state_bytes());
  responses->init_state(rs);
  Message q3 = message("secret cmd", 0);
  responses->process(q3, rs);
  EXPECT_EQ(q3.verdict.alerts, 0u);
  EXPECT_EQ(responses->counters().messages, 0u);
}

TEST(StreamIds, InapplicableRulesAreSkippedWithTheirReason) {
  const char* rules =
      "alert tcp any any -> any any (content:\"ok\"; sid:1;)\n"
      "alert udp any any -> any any (content:\"x\"; sid:2;)\n"
      "alert tcp any any -> any 80 (content:\"x\"; sid:3;)\n"
      "alert tcp any any -> any any (content:!\"x\"; content:\"y\"; sid:4;)\n"
      "alert tcp any any -> any any (content:\"x\"; ttl:10; sid:5;)\n"
      "alert tcp any any -> any any (content:\"x\"; flowbits:set,a; sid:6;)\n"
      "alert tcp any any -> any any (content:\"xy\"; content:\"z\"; distance:-1; sid:7;)\n"
      "alert tcp any any -> any any (pcre:\"/(a)\\1/\"; sid:8;)\n";
  auto set = compile(rules);
  ASSERT_EQ(set->rules().size(), 1u);
  EXPECT_EQ(set->rules()[0].sid, 1u);
  std::vector<std::string> features;
  for (const auto& s : set->skipped()) features.push_back(s.feature);
  std::sort(features.begin(), features.end());
  EXPECT_EQ(features,
            (std::vector<std::string>{"addresses/ports", "flowbits", "negated content",
                                      "negative distance", "pcre: Hyperscan", "protocol", "ttl"}))
      << ids::skipped_summary(set->skipped());
}

TEST(StreamIds, IsRegisteredAndConfiguredByArguments) {
  const NfFactory* f = NfRegistry::instance().find("StreamIDS");
  ASSERT_NE(f, nullptr);
  const std::string path = ::testing::TempDir() + "stream_ids_test.rules";
  std::FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs(kLiteralRules, file);
  std::fclose(file);
  const std::string log = ::testing::TempDir() + "stream_ids_test.alerts";
  Args a({path, "MODE block", "DIRECTION requests", "LOG " + log}, SourceLoc{}, "ids", "StreamIDS");
  Result<std::unique_ptr<FlowNf>> nf = (*f)(a);
  ASSERT_TRUE(nf.ok()) << nf.error();
  EXPECT_EQ(nf.value()->name(), "StreamIDS");
  std::vector<uint8_t> state(nf.value()->state_bytes());
  nf.value()->init_state(state);
  Message m = message("xx", 0);
  nf.value()->process(m, state);
  m = message("attack", 1);
  nf.value()->process(m, state);
  EXPECT_EQ(m.verdict.status, 403);
  nf.value().reset();  // closes the log
  std::ifstream in(log);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, R"({"sid":1,"msg":"attack","flow":7,"dir":"request","seq":1})");
  Args bad({path, "MODE stop"}, SourceLoc{}, "ids", "StreamIDS");
  EXPECT_FALSE((*f)(bad).ok());
}

}  // namespace
}  // namespace fulcrum::l7
