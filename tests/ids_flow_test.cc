// The flow keyword (flow:to_server, to_client, established, not_established, stateless,
// no_stream) as Suricata applies it without stream reassembly: TCP's 3-way handshake (the ACK
// that completes it is itself established), a flow seen without its SYN (never established; its
// first packet's sender is the client), RST and FIN, UDP established once both ends sent, the
// per-worker flow table's eviction and the flow timeout with the time injected, and rule sets
// without flow conditions keeping no state.
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
constexpr uint16_t kClientPort2 = 40001;
constexpr uint16_t kServerPort = 80;
constexpr uint64_t kSecond = 1'000'000'000;
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;
constexpr uint32_t kEtherIpLen = 14 + 20;
constexpr uint32_t kTcpFlagsOffset = 13;

struct Pkt {
  uint8_t flags = 0;   // TCP flags; UDP packets ignore them
  bool reply = false;  // server to client
  std::string payload{};
  uint16_t client_port = kClientPort;
  uint64_t ns = 0;
  uint8_t proto = testing::kProtoTcp;
  bool fragment = false;  // a non-first IPv4 fragment
};

std::vector<uint8_t> frame(const Pkt& p) {
  std::vector<uint8_t> f =
      p.reply ? testing::l4_frame(p.proto, kServer, kClient, kServerPort, p.client_port, p.payload)
              : testing::l4_frame(p.proto, kClient, kServer, p.client_port, kServerPort, p.payload);
  if (p.proto == testing::kProtoTcp) f[kEtherIpLen + kTcpFlagsOffset] = p.flags;
  if (p.fragment) f[14 + 7] = 1;  // fragment offset 8 bytes
  return f;
}

using Alerts = std::vector<std::pair<uint32_t, uint32_t>>;  // (packet, sid)

struct Outcome {
  Alerts alerts;
  uint64_t evictions = 0;
};

Outcome run(const std::string& rules, const std::vector<Pkt>& pkts, StateLimits limits = {}) {
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  if (!parsed.ok()) return {};
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  EXPECT_TRUE(set.ok());
  Outcome out[2];
  const Engine engines[2] = {Engine::kHyperscan, Engine::kAhoCorasick};
  for (int e = 0; e < 2; ++e) {
    Result<std::unique_ptr<Matcher>> m = Matcher::create(set.value(), engines[e], limits);
    for (uint32_t i = 0; i < pkts.size(); ++i) {
      const std::vector<uint8_t> f = frame(pkts[i]);
      PacketView v;
      EXPECT_EQ(parse_packet(f.data(), static_cast<uint32_t>(f.size()), v), ParseResult::kOk);
      m.value()->set_time(pkts[i].ns);
      m.value()->match_batch(&v, 1, [&](uint32_t, uint32_t rule) {
        out[e].alerts.emplace_back(i, set.value()->rules()[rule].sid);
      });
    }
    out[e].evictions = m.value()->stats().flow_evictions;
  }
  EXPECT_EQ(out[0].alerts, out[1].alerts) << "hyperscan and ac differ";
  return out[0];
}

// Each rule alerts on what its flow conditions say, nothing else.
const char* const kConditions =
    "alert tcp any any -> any any (msg:\"est\"; flow:established; sid:1;)\n"
    "alert tcp any any -> any any (msg:\"to server\"; flow:to_server; sid:2;)\n"
    "alert tcp any any -> any any (msg:\"to client\"; flow:to_client; sid:3;)\n"
    "alert tcp any any -> any any (msg:\"not est\"; flow:not_established; sid:4;)\n"
    "alert tcp any any -> any any (msg:\"est to server\"; flow:established,from_client; sid:5;)\n"
    "alert tcp any any -> any any (msg:\"est to client\"; flow:from_server,established; sid:6;)\n";

TEST(IdsFlow, TheHandshakeEstablishesTheFlowOnTheClientsAck) {
  EXPECT_EQ(run(kConditions, {{kSyn},
                              {kSyn | kAck, true},
                              {kAck},  // completes the handshake: itself established
                              {kPsh | kAck, false, "GET /"},
                              {kPsh | kAck, true, "200 OK"}})
                .alerts,
            (Alerts{{0, 2},
                    {0, 4},
                    {1, 3},
                    {1, 4},
                    {2, 1},
                    {2, 2},
                    {2, 5},
                    {3, 1},
                    {3, 2},
                    {3, 5},
                    {4, 1},
                    {4, 3},
                    {4, 6}}));
}

TEST(IdsFlow, AHandshakeOutOfOrderOrHalfDoesNotEstablish) {
  // The client's ACK before the SYN-ACK, a SYN-ACK from the client, a second SYN: none
  // completes the handshake; the server's ACK does not either.
  EXPECT_EQ(
      run(kConditions, {{kSyn}, {kAck}, {kSyn | kAck}, {kSyn}, {kAck, true}}).alerts,
      (Alerts{{0, 2}, {0, 4}, {1, 2}, {1, 4}, {2, 2}, {2, 4}, {3, 2}, {3, 4}, {4, 3}, {4, 4}}));
  EXPECT_EQ(run(kConditions, {{kSyn}, {kSyn | kAck, true}, {kAck, true}, {kAck}}).alerts,
            (Alerts{{0, 2}, {0, 4}, {1, 3}, {1, 4}, {2, 3}, {2, 4}, {3, 1}, {3, 2}, {3, 5}}));
}

TEST(IdsFlow, TheSynsSenderIsTheClientWhoeverSpeaksFirst) {
  // The server sends first after the handshake (a banner): still to_client.
  EXPECT_EQ(
      run(kConditions, {{kSyn, true}, {kSyn | kAck}, {kAck, true}, {kPsh | kAck, false}}).alerts,
      (Alerts{{0, 2}, {0, 4}, {1, 3}, {1, 4}, {2, 1}, {2, 2}, {2, 5}, {3, 1}, {3, 3}, {3, 6}}))
      << "the port-80 end sent the SYN: it is the client";
}

TEST(IdsFlow, AFlowSeenWithoutItsSynIsNeverEstablished) {
  // Midstream (Suricata's default: no pick-up): data both ways, no SYN. The first packet's
  // sender is the client (Suricata's flow direction), the flow never established.
  EXPECT_EQ(run(kConditions, {{kPsh | kAck, true, "x"}, {kAck}, {kPsh | kAck, true, "y"}}).alerts,
            (Alerts{{0, 2}, {0, 4}, {1, 3}, {1, 4}, {2, 2}, {2, 4}}));
  // A SYN-ACK first (the SYN missed): not a handshake either.
  EXPECT_EQ(run(kConditions, {{kSyn | kAck, true}, {kAck}, {kPsh | kAck}}).alerts,
            (Alerts{{0, 2}, {0, 4}, {1, 3}, {1, 4}, {2, 3}, {2, 4}}));
  // A SYN later starts a session: its sender becomes the client and the handshake counts.
  EXPECT_EQ(run(kConditions, {{kAck, true}, {kSyn}, {kSyn | kAck, true}, {kAck}}).alerts,
            (Alerts{{0, 2}, {0, 4}, {1, 2}, {1, 4}, {2, 3}, {2, 4}, {3, 1}, {3, 2}, {3, 5}}));
}

TEST(IdsFlow, RstAndFinCloseTheSessionWhichStaysEstablishedUntilANewSyn) {
  const std::vector<Pkt> handshake = {{kSyn}, {kSyn | kAck, true}, {kAck}};
  const char* const est = "alert tcp any any -> any any (flow:established; sid:1;)\n";
  std::vector<Pkt> rst = handshake;
  rst.insert(rst.end(), {{kRst, true}, {kAck}, {kSyn}, {kSyn | kAck, true}, {kAck}});
  EXPECT_EQ(run(est, rst).alerts, (Alerts{{2, 1}, {3, 1}, {4, 1}, {7, 1}}))
      << "after the RST still established; the new SYN starts a session that is not, yet";
  std::vector<Pkt> fin = handshake;
  fin.insert(fin.end(), {{kFin | kAck},
                         {kSyn},
                         {kAck, true},
                         {kFin | kAck, true},
                         {kAck},
                         {kSyn},
                         {kSyn | kAck, true}});
  EXPECT_EQ(run(est, fin).alerts, (Alerts{{2, 1}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1}}))
      << "a SYN after one FIN is no new session; after both FINs it is";
  // A RST during the handshake ends it unestablished (sequence numbers are not checked).
  EXPECT_EQ(run(est, {{kSyn}, {kRst | kAck, true}, {kAck}, {kSyn | kAck, true}, {kAck}}).alerts,
            Alerts{});
}

TEST(IdsFlow, UdpIsEstablishedOnceBothEndsSent) {
  const char* const rules =
      "alert udp any any -> any any (flow:established; sid:1;)\n"
      "alert udp any any -> any any (flow:to_server,not_established; sid:2;)\n"
      "alert udp any any -> any any (flow:to_client; sid:3;)\n";
  constexpr uint8_t kUdp = testing::kProtoUdp;
  EXPECT_EQ(run(rules, {{0, false, "q1", kClientPort, 0, kUdp},
                        {0, false, "q2", kClientPort, 0, kUdp},
                        {0, true, "r1", kClientPort, 0, kUdp},  // both ends: established
                        {0, false, "q3", kClientPort, 0, kUdp},
                        {0, true, "x", kClientPort2, 0, kUdp}})  // another flow, from port 80
                .alerts,
            (Alerts{{0, 2}, {1, 2}, {2, 1}, {2, 3}, {3, 1}, {4, 2}}));
}

TEST(IdsFlow, AFullBucketEvictsAFlowsState) {
  // FLOWS 4: one bucket of 4. An established flow, then SYNs of four others: the first is
  // evicted, and its next packet starts a new flow (never established, its sender the client).
  const char* const rules =
      "alert tcp any any -> any any (flow:established; sid:1;)\n"
      "alert tcp any any -> any any (flow:to_client; sid:2;)\n";
  std::vector<Pkt> pkts = {{kSyn}, {kSyn | kAck, true}, {kAck}};
  for (uint16_t k = 1; k <= 4; ++k)
    pkts.push_back({kSyn, false, "", static_cast<uint16_t>(kClientPort + k)});
  pkts.push_back({kAck, true});
  StateLimits limits;
  limits.flows = 4;
  const Outcome r = run(rules, pkts, limits);
  EXPECT_EQ(r.alerts, (Alerts{{1, 2}, {2, 1}}));
  EXPECT_EQ(r.evictions, 2u) << "the 4th new flow evicts the first, its return evicts the next";
  pkts.resize(pkts.size() - 2);  // three other flows fit beside it
  pkts.push_back({kAck, true});
  EXPECT_EQ(run(rules, pkts, limits).alerts, (Alerts{{1, 2}, {2, 1}, {6, 1}, {6, 2}}));
}

TEST(IdsFlow, AFlowIdleLongerThanTheTimeoutStartsAfresh) {
  const char* const rules =
      "alert tcp any any -> any any (flow:established; sid:1;)\n"
      "alert tcp any any -> any any (flow:to_server; sid:2;)\n";
  StateLimits limits;
  limits.flow_timeout_s = 10;
  const uint64_t t = 5 * kSecond;
  const std::vector<Pkt> base = {{kSyn, false, "", kClientPort, t},
                                 {kSyn | kAck, true, "", kClientPort, t},
                                 {kAck, false, "", kClientPort, t}};
  std::vector<Pkt> at_timeout = base;
  at_timeout.push_back({kAck, true, "", kClientPort, t + 10 * kSecond});  // the last ns
  EXPECT_EQ(run(rules, at_timeout, limits).alerts, (Alerts{{0, 2}, {2, 1}, {2, 2}, {3, 1}}));
  std::vector<Pkt> past = base;
  past.push_back({kAck, true, "", kClientPort, t + 10 * kSecond + 1});
  EXPECT_EQ(run(rules, past, limits).alerts, (Alerts{{0, 2}, {2, 1}, {2, 2}, {3, 2}}))
      << "a new flow: its first packet's sender (the old server) is the client";
}

TEST(IdsFlow, StatelessAndNoStreamMatchEveryPacketOfAFlowButNotFragments) {
  const char* const rules =
      "alert ip any any -> any any (flow:stateless; content:\"x\"; sid:1;)\n"
      "alert tcp any any -> any any (flow:no_stream; content:\"x\"; sid:2;)\n"
      "alert ip any any -> any any (content:\"x\"; sid:3;)\n";
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  ASSERT_TRUE(parsed.ok());
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  ASSERT_TRUE(set.ok());
  EXPECT_TRUE(set.value()->flow_rules());
  EXPECT_FALSE(set.value()->flow_state()) << "no direction or established: no flow table";
  EXPECT_FALSE(set.value()->stateful());
  Pkt fragment{0, false, "x"};
  fragment.fragment = true;
  EXPECT_EQ(run(rules, {{kAck, false, "x"}, {kAck, true, "x"}, fragment}).alerts,
            (Alerts{{0, 1}, {0, 2}, {0, 3}, {1, 1}, {1, 2}, {1, 3}, {2, 3}}));
}

TEST(IdsFlow, RulesWithoutFlowKeepNoFlowState) {
  const char* const rules =
      "alert tcp any any -> any any (content:\"x\"; sid:1;)\n"
      "alert tcp any any -> any 80 (sid:2;)\n";
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  ASSERT_TRUE(parsed.ok());
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  ASSERT_TRUE(set.ok());
  EXPECT_FALSE(set.value()->flow_rules());
  EXPECT_FALSE(set.value()->flow_state());
  EXPECT_FALSE(set.value()->stateful()) << "no clock read";
  // Many flows through a table of 4 (were there one): no eviction, every packet matches.
  StateLimits limits;
  limits.flows = 4;
  std::vector<Pkt> pkts;
  Alerts want;
  for (uint16_t k = 0; k < 8; ++k) {
    pkts.push_back({kAck, false, "x", static_cast<uint16_t>(kClientPort + k)});
    want.insert(want.end(), {{k, 1}, {k, 2}});
  }
  const Outcome r = run(rules, pkts, limits);
  EXPECT_EQ(r.alerts, want);
  EXPECT_EQ(r.evictions, 0u);
}

TEST(IdsFlow, FlowbitsAndFlowShareTheFlow) {
  const char* const rules =
      "alert tcp any any -> any any (flow:established,to_client; content:\"RESP\"; "
      "flowbits:isset,cmd; sid:2;)\n"
      "alert tcp any any -> any any (flow:established,to_server; content:\"CMD\"; "
      "flowbits:set,cmd; flowbits:noalert; sid:1;)\n";
  StateLimits limits;
  limits.flows = 4;
  const Outcome r = run(rules,
                        {{kPsh | kAck, false, "CMD"},  // not established: no bit
                         {kPsh | kAck, true, "RESP"},
                         {kSyn, false, "", kClientPort2},
                         {kSyn | kAck, true, "", kClientPort2},
                         {kAck, false, "", kClientPort2},
                         {kPsh | kAck, true, "RESP", kClientPort2},
                         {kPsh | kAck, false, "CMD", kClientPort2},
                         {kPsh | kAck, true, "RESP", kClientPort2}},
                        limits);
  EXPECT_EQ(r.alerts, (Alerts{{7, 2}}));
  EXPECT_EQ(r.evictions, 0u) << "one entry a flow for both";
}

TEST(IdsFlow, ParserFieldsAndErrors) {
  Result<Rule> r =
      parse_rule("alert tcp any any -> any any (flow: established , to_client ,no_stream; sid:1;)");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->flow.given);
  EXPECT_EQ(r->flow.dir, FlowDir::kToClient);
  EXPECT_EQ(r->flow.established, FlowEstablished::kEstablished);
  r = parse_rule("alert tcp any any -> any any (flow:from_client,not_established; sid:1;)");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->flow.dir, FlowDir::kToServer);
  EXPECT_EQ(r->flow.established, FlowEstablished::kNotEstablished);
  r = parse_rule("alert tcp any any -> any any (flow:stateless; sid:1;)");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_TRUE(r->flow.given);
  EXPECT_FALSE(r->flow.stateful());
  r = parse_rule("alert tcp any any -> any any (sid:1;)");
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->flow.given);

  auto error = [](const std::string& opts, std::string* feature = nullptr) {
    Result<Rule> bad = parse_rule("alert tcp any any -> any any (" + opts + " sid:1;)", feature);
    return bad.ok() ? std::string("accepted") : bad.error();
  };
  std::string feature;
  r = parse_rule("alert tcp any any -> any any (flow:established,only_stream; sid:1;)");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->flow.stream, FlowStream::kOnlyStream);
  EXPECT_EQ(error("flow:only_stream,no_stream;"),
            "flow: more than one of only_stream and no_stream");
  Result<Rule> udp =
      parse_rule("alert udp any any -> any any (flow:only_stream; sid:1;)", &feature);
  ASSERT_FALSE(udp.ok());
  EXPECT_EQ(udp.error(), "flow: only_stream needs a tcp rule (only TCP streams are reassembled)");
  EXPECT_EQ(feature, "flow: only_stream");
  EXPECT_EQ(error("flow:only_frag;", &feature),
            "flow: only_frag needs reassembled fragments, which the IDS does not track");
  EXPECT_EQ(feature, "flow: only_frag");
  EXPECT_EQ(error("flow:to_server,to_client;", &feature), "flow: more than one direction");
  EXPECT_EQ(feature, "malformed");
  EXPECT_EQ(error("flow:from_server,to_client;"), "flow: more than one direction");
  EXPECT_EQ(error("flow:established,stateless;"),
            "flow: more than one of established, not_established and stateless");
  EXPECT_EQ(error("flow:not_established,established;"),
            "flow: more than one of established, not_established and stateless");
  EXPECT_EQ(error("flow:established,;"),
            "flow: expected to_server, from_client, to_client, from_server, established, "
            "not_established, stateless, only_stream or no_stream, got ''");
  EXPECT_EQ(error("flow:establised;"),
            "flow: expected to_server, from_client, to_client, from_server, established, "
            "not_established, stateless, only_stream or no_stream, got 'establised'");
  EXPECT_EQ(error("flow:to_server; flow:established;"), "flow: given twice");
}

}  // namespace
}  // namespace fulcrum::ids
