// flowbits as Suricata applies them: per flow (both directions share their bits), isset and
// isnotset as conditions, set, unset and toggle when the rule matches, noalert, and Suricata's
// rule order (rules that set bits before rules that read them, by sid) within one packet; the
// bounded flow table's eviction and the flow timeout, with the time injected.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ids_test_frames.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::ids {
namespace {

constexpr uint32_t kClient = 0x0A000001;
constexpr uint32_t kServer = 0xC0A80002;
constexpr uint16_t kClientPort = 40000;
constexpr uint64_t kSecond = 1'000'000'000;

struct Pkt {
  std::string payload;
  bool reply = false;  // server to client
  uint16_t client_port = kClientPort;
  uint64_t ns = 0;
};

using Alerts = std::vector<std::pair<uint32_t, uint32_t>>;  // (packet, sid)

Alerts run(const std::string& rules, const std::vector<Pkt>& pkts, StateLimits limits = {},
           uint64_t* evictions = nullptr) {
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  if (!parsed.ok()) return {};
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  EXPECT_TRUE(set.ok() && set.value()->stateful());
  Alerts out[2];
  const Engine engines[2] = {Engine::kHyperscan, Engine::kAhoCorasick};
  for (int e = 0; e < 2; ++e) {
    Result<std::unique_ptr<Matcher>> m = Matcher::create(set.value(), engines[e], limits);
    for (uint32_t i = 0; i < pkts.size(); ++i) {
      const Pkt& p = pkts[i];
      const std::vector<uint8_t> f = p.reply
                                         ? testing::l4_frame(testing::kProtoTcp, kServer, kClient,
                                                             80, p.client_port, p.payload)
                                         : testing::l4_frame(testing::kProtoTcp, kClient, kServer,
                                                             p.client_port, 80, p.payload);
      PacketView v;
      EXPECT_EQ(parse_packet(f.data(), static_cast<uint32_t>(f.size()), v), ParseResult::kOk);
      m.value()->set_time(p.ns);
      m.value()->match_batch(&v, 1, [&](uint32_t, uint32_t rule) {
        out[e].emplace_back(i, set.value()->rules()[rule].sid);
      });
    }
    if (evictions != nullptr) *evictions = m.value()->stats().flow_evictions;
  }
  EXPECT_EQ(out[0], out[1]) << "hyperscan and ac differ";
  return out[0];
}

const char* const kLogin =
    "alert tcp any any -> any any (content:\"PASS\"; flowbits:isset,login; sid:2;)\n"
    "alert tcp any any -> any any (content:\"USER\"; flowbits:set,login; flowbits:noalert; "
    "sid:1;)\n";

TEST(IdsFlowbits, ABitSetInOneDirectionIsSeenInTheOther) {
  EXPECT_EQ(run(kLogin, {{"PASS x"},                          // not set yet
                         {"USER a"},                          // sets, no alert (noalert)
                         {"PASS b", true},                    // the reply direction: set
                         {"PASS c", false, kClientPort + 1},  // another flow
                         {"PASS d"}}),
            (Alerts{{2, 2}, {4, 2}}));
}

TEST(IdsFlowbits, SettersRunBeforeReadersOnOnePacket) {
  // The reader comes first in the file; Suricata orders the setter before it.
  EXPECT_EQ(run(kLogin, {{"USER a PASS b"}}), (Alerts{{0, 2}}));
  // Among setters, by sid: sid 10 sets, then sid 20 unsets; the reader sees the bit unset.
  const std::string set_then_unset =
      "alert tcp any any -> any any (content:\"k\"; flowbits:isset,x; sid:30;)\n"
      "alert tcp any any -> any any (content:\"k\"; flowbits:unset,x; flowbits:noalert; sid:20;)\n"
      "alert tcp any any -> any any (content:\"k\"; flowbits:set,x; flowbits:noalert; sid:10;)\n";
  EXPECT_EQ(run(set_then_unset, {{"k"}, {"k"}}), Alerts{});
  const std::string unset_then_set =
      "alert tcp any any -> any any (content:\"k\"; flowbits:isset,x; sid:30;)\n"
      "alert tcp any any -> any any (content:\"k\"; flowbits:unset,x; flowbits:noalert; sid:10;)\n"
      "alert tcp any any -> any any (content:\"k\"; flowbits:set,x; flowbits:noalert; sid:20;)\n";
  EXPECT_EQ(run(unset_then_set, {{"k"}, {"k"}}), (Alerts{{0, 30}, {1, 30}}));
}

TEST(IdsFlowbits, IsnotsetThenSetAlertsOnceAFlow) {
  const std::string rule =
      "alert tcp any any -> any any (content:\"GET\"; flowbits:isnotset,seen; flowbits:set,seen; "
      "sid:3;)\n";
  EXPECT_EQ(run(rule, {{"GET /"}, {"GET /a"}, {"GET /b", true}, {"GET /", false, 1}}),
            (Alerts{{0, 3}, {3, 3}}));
}

TEST(IdsFlowbits, ToggleAndUnset) {
  const std::string rules =
      "alert tcp any any -> any any (content:\"T\"; flowbits:toggle,t; flowbits:noalert; sid:4;)\n"
      "alert tcp any any -> any any (content:\"U\"; flowbits:unset,t; sid:6;)\n"
      "alert tcp any any -> any any (content:\"Q\"; flowbits:isset,t; sid:5;)\n";
  EXPECT_EQ(run(rules, {{"Q"}, {"T"}, {"Q"}, {"T"}, {"Q"}, {"TQ"}, {"UQ"}, {"Q"}}),
            (Alerts{{2, 5}, {5, 5}, {6, 6}}));
}

TEST(IdsFlowbits, AFullBucketEvictsAFlowAndItsBits) {
  // 4 flows: one bucket. Five flows set the bit; the fifth evicts the first.
  const std::string rules =
      "alert tcp any any -> any any (content:\"S\"; flowbits:set,b; flowbits:noalert; sid:1;)\n"
      "alert tcp any any -> any any (content:\"R\"; flowbits:isset,b; sid:2;)\n";
  std::vector<Pkt> pkts;
  for (uint16_t port = 1; port <= 5; ++port) pkts.push_back({"S", false, port});
  pkts.push_back({"R", true, 2});  // kept
  pkts.push_back({"R", true, 1});  // evicted: its bit is gone
  uint64_t evictions = 0;
  EXPECT_EQ(run(rules, pkts, StateLimits{.flows = 4}, &evictions), (Alerts{{5, 2}}));
  EXPECT_EQ(evictions, 2u);  // flow 1 by flow 5, then flow 3 by flow 1 again
  EXPECT_EQ(run(rules, pkts), (Alerts{{5, 2}, {6, 2}}));
}

TEST(IdsFlowbits, AFlowIdleLongerThanTheTimeoutStartsAfresh) {
  const std::vector<Pkt> pkts = {{"USER a", false, kClientPort, 0},
                                 {"PASS b", false, kClientPort, 10 * kSecond},  // at the limit
                                 {"PASS c", false, kClientPort, 20 * kSecond},  // 10 s after it
                                 {"PASS d", false, kClientPort, 30 * kSecond + 1}};  // timed out
  StateLimits limits;
  limits.flow_timeout_s = 10;
  EXPECT_EQ(run(kLogin, pkts, limits), (Alerts{{1, 2}, {2, 2}}));
  EXPECT_EQ(run(kLogin, pkts), (Alerts{{1, 2}, {2, 2}, {3, 2}}));  // the default: 600 s
}

TEST(IdsFlowbits, ParserFieldsAndErrors) {
  Result<Rule> r = parse_rule(
      "alert tcp any any -> any any (flowbits:isset, a.b; flowbits: set,c_d ; flowbits:noalert; "
      "sid:1;)");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->flowbits.size(), 2u);
  EXPECT_EQ(r->flowbits[0].cmd, FlowbitCmd::kIsset);
  EXPECT_EQ(r->flowbits[0].name, "a.b");
  EXPECT_EQ(r->flowbits[1].cmd, FlowbitCmd::kSet);
  EXPECT_EQ(r->flowbits[1].name, "c_d");
  EXPECT_TRUE(r->noalert);
  auto error = [](const std::string& opt, std::string* feature = nullptr) {
    Result<Rule> e = parse_rule("alert tcp any any -> any any (" + opt + " sid:1;)", feature);
    return e.ok() ? std::string("(no error)") : e.error();
  };
  EXPECT_EQ(error("flowbits:flip,a;"),
            "flowbits: expected set, unset, toggle, isset, isnotset or noalert, got 'flip'");
  EXPECT_EQ(error("flowbits:set;"), "flowbits: expected a name after set");
  EXPECT_EQ(error("flowbits:noalert,a;"), "flowbits: expected no name after noalert");
  std::string feature;
  EXPECT_EQ(error("flowbits:isset,a|b;", &feature),
            "flowbits: groups of names ('a|b') are not supported");
  EXPECT_EQ(feature, "flowbits group");
}

}  // namespace
}  // namespace fulcrum::ids
