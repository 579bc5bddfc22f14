// TCP stream reassembly (src/lib/ids/stream.hh) and stream matching (Matcher with
// StateLimits::stream): the table's windows (in order, out of order, retransmissions and
// overlaps with the first bytes winning, sequence wrap-around, gaps, FIN and RST freeing the
// state, eviction, the lookback bound), then exact alerts of rules whose contents are split over
// segments at every byte position, in and out of order, with both engines.
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "ids_test_frames.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"
#include "lib/ids/stream.hh"

namespace fulcrum::ids {
namespace {

constexpr uint32_t kClient = 0x0A000001;
constexpr uint32_t kServer = 0xC0A80002;
constexpr uint16_t kClientPort = 40000;
constexpr uint16_t kServerPort = 80;
constexpr uint8_t kFin = 0x01, kSyn = 0x02, kRst = 0x04, kPsh = 0x08, kAck = 0x10;
constexpr uint32_t kTcpAt = 14 + 20;

struct Seg {
  uint32_t seq = 0;
  std::string payload{};
  uint8_t flags = kPsh | kAck;
  bool reply = false;  // server to client
  uint16_t client_port = kClientPort;
};

std::vector<uint8_t> frame(const Seg& s) {
  std::vector<uint8_t> f = s.reply ? testing::l4_frame(testing::kProtoTcp, kServer, kClient,
                                                       kServerPort, s.client_port, s.payload)
                                   : testing::l4_frame(testing::kProtoTcp, kClient, kServer,
                                                       s.client_port, kServerPort, s.payload);
  for (int k = 0; k < 4; ++k) f[kTcpAt + 4 + k] = static_cast<uint8_t>(s.seq >> (24 - 8 * k));
  f[kTcpAt + 13] = s.flags;
  return f;
}

// What StreamTable::add made of one segment: the outcome and, for new data, the window split
// into its lookback and its new bytes, and its origin.
struct Added {
  StreamTable::Outcome outcome = StreamTable::Outcome::kNotTaken;
  std::string lookback, fresh;
  uint64_t origin = 0;
};

Added add(StreamTable& t, const Seg& s) {
  const std::vector<uint8_t> f = frame(s);
  PacketView v;
  EXPECT_EQ(parse_packet(f.data(), static_cast<uint32_t>(f.size()), v), ParseResult::kOk);
  Added a;
  a.outcome = t.add(v);
  if (a.outcome == StreamTable::Outcome::kNewData) {
    const StreamTable::Window& w = t.window();
    const std::string all(reinterpret_cast<const char*>(w.data), w.len);
    a.lookback = all.substr(0, w.lookback);
    a.fresh = all.substr(w.lookback);
    a.origin = w.origin;
  }
  return a;
}

using Outcome = StreamTable::Outcome;
constexpr uint32_t kIsn = 1000;

TEST(IdsStream, InOrderSegmentsKeepTheLookback) {
  StreamTable t(64, 4, 64);
  EXPECT_EQ(add(t, {kIsn, "", kSyn}).outcome, Outcome::kNothingNew);
  const Added a = add(t, {kIsn + 1, "abcdef"});
  EXPECT_EQ(a.outcome, Outcome::kNewData);
  EXPECT_EQ(a.lookback, "");
  EXPECT_EQ(a.fresh, "abcdef");
  EXPECT_EQ(a.origin, 0u);
  const Added b = add(t, {kIsn + 7, "gh"});
  EXPECT_EQ(b.lookback, "cdef") << "the last 4 bytes";
  EXPECT_EQ(b.fresh, "gh");
  EXPECT_EQ(b.origin, 2u) << "the window starts 2 bytes into the stream";
  const Added c = add(t, {kIsn + 9, "i"});
  EXPECT_EQ(c.lookback, "efgh");
  EXPECT_EQ(c.origin, 4u);
  EXPECT_EQ(add(t, {kIsn + 1, "", kAck}).outcome, Outcome::kNothingNew)
      << "a pure ACK of a known stream: taken, nothing new";
  EXPECT_EQ(t.stats().bytes, 9u);
}

TEST(IdsStream, TheDirectionsAreSeparateStreams) {
  StreamTable t(64, 8, 64);
  add(t, {kIsn, "", kSyn});
  add(t, {5000, "", kSyn | kAck, true});
  EXPECT_EQ(add(t, {kIsn + 1, "GET /"}).fresh, "GET /");
  const Added r = add(t, {5001, "200 OK", kPsh | kAck, true});
  EXPECT_EQ(r.lookback, "") << "the reply's stream has its own lookback";
  EXPECT_EQ(r.fresh, "200 OK");
  EXPECT_EQ(add(t, {kIsn + 6, "x"}).lookback, "GET /");
}

TEST(IdsStream, SequenceNumbersWrapAround) {
  StreamTable t(64, 8, 64);
  const uint32_t isn = 0xFFFFFFF9u;  // data starts at 0xFFFFFFFA: 6 bytes before the wrap
  add(t, {isn, "", kSyn});
  EXPECT_EQ(add(t, {isn + 1, "abcd"}).fresh, "abcd");
  // Out of order across the wrap: "ijkl" at 0x00000002, then "efgh" at 0xFFFFFFFE.
  EXPECT_EQ(add(t, {isn + 9, "ijkl"}).outcome, Outcome::kNothingNew);
  const Added a = add(t, {isn + 5, "efgh"});
  EXPECT_EQ(a.fresh, "efghijkl");
  EXPECT_EQ(a.origin, 0u);
  EXPECT_EQ(add(t, {isn + 13, "m"}).fresh, "m");
  EXPECT_EQ(add(t, {isn + 5, "efgh"}).outcome, Outcome::kNothingNew) << "old data after the wrap";
  EXPECT_EQ(t.stats().bytes, 13u);
}

TEST(IdsStream, OutOfOrderSegmentsAreHeldUntilTheHoleFills) {
  StreamTable t(64, 16, 64);
  add(t, {kIsn, "", kSyn});
  EXPECT_EQ(add(t, {kIsn + 7, "ghi"}).outcome, Outcome::kNothingNew);
  EXPECT_EQ(add(t, {kIsn + 4, "def"}).outcome, Outcome::kNothingNew);
  EXPECT_EQ(add(t, {kIsn + 12, "lm"}).outcome, Outcome::kNothingNew) << "after a second hole";
  EXPECT_EQ(t.stats().segments_held, 3u);
  const Added a = add(t, {kIsn + 1, "abc"});
  EXPECT_EQ(a.fresh, "abcdefghi") << "the held bytes the segment reaches";
  const Added b = add(t, {kIsn + 10, "jk"});
  EXPECT_EQ(b.fresh, "jklm");
  EXPECT_EQ(b.lookback, "abcdefghi");
  EXPECT_EQ(t.stats().bytes, 13u);
}

TEST(IdsStream, TheFirstBytesSeenWinOverRetransmissionsAndOverlaps) {
  StreamTable t(64, 16, 64);
  add(t, {kIsn, "", kSyn});
  EXPECT_EQ(add(t, {kIsn + 1, "abcd"}).fresh, "abcd");
  EXPECT_EQ(add(t, {kIsn + 1, "abcd"}).outcome, Outcome::kNothingNew) << "a retransmission";
  EXPECT_EQ(add(t, {kIsn + 1, "ABCD"}).outcome, Outcome::kNothingNew) << "other bytes, old";
  EXPECT_EQ(add(t, {kIsn + 3, "XXef"}).fresh, "ef") << "the overlap's old part is not taken";
  // Held bytes win over a later in-order segment covering them, and over a later held one.
  EXPECT_EQ(add(t, {kIsn + 9, "ij"}).outcome, Outcome::kNothingNew);
  EXPECT_EQ(add(t, {kIsn + 9, "IJK"}).outcome, Outcome::kNothingNew);
  EXPECT_EQ(add(t, {kIsn + 7, "GHIJ"}).fresh, "GHijK");
  EXPECT_EQ(t.stats().retransmissions, 2u);
  EXPECT_EQ(t.stats().segments_held, 2u) << "\"IJK\" brought the new K";
}

TEST(IdsStream, ASegmentPastTheOutOfOrderWindowIsAGap) {
  StreamTable t(64, 16, 16);
  add(t, {kIsn, "", kSyn});
  add(t, {kIsn + 1, "ab"});
  EXPECT_EQ(add(t, {kIsn + 5, "held"}).outcome, Outcome::kNothingNew);
  EXPECT_EQ(add(t, {kIsn + 3 + 14, "xyz"}).outcome, Outcome::kNotTaken)
      << "ends 17 bytes past the next expected byte, with 16 held at most";
  EXPECT_EQ(t.stats().gaps, 1u);
  EXPECT_EQ(t.stats().held_bytes_dropped, 4u);
  EXPECT_EQ(add(t, {kIsn + 3, "cd"}).outcome, Outcome::kNotTaken)
      << "after a gap the direction's segments are inspected as packets";
  EXPECT_EQ(t.stats().segments_dropped, 2u);
  EXPECT_EQ(add(t, {5000, "reply", kPsh | kAck, true}).outcome, Outcome::kNewData)
      << "the other direction goes on";
  // A new session (SYN) restarts the stream.
  add(t, {9000, "", kSyn});
  EXPECT_EQ(add(t, {9001, "new"}).fresh, "new");
}

TEST(IdsStream, AStreamStartsMidConnectionAtItsFirstSegment) {
  StreamTable t(64, 8, 64);
  EXPECT_EQ(add(t, {77, "", kAck}).outcome, Outcome::kNotTaken) << "no data, no SYN: no stream";
  const Added a = add(t, {77, "first"});
  EXPECT_EQ(a.outcome, Outcome::kNewData);
  EXPECT_EQ(a.fresh, "first");
  EXPECT_EQ(add(t, {82, "next"}).lookback, "first");
}

TEST(IdsStream, FinOfBothDirectionsAndRstFreeTheStream) {
  StreamTable t(64, 8, 64);
  add(t, {kIsn, "", kSyn});
  add(t, {5000, "", kSyn | kAck, true});
  add(t, {kIsn + 1, "data"});
  EXPECT_EQ(add(t, {kIsn + 5, "", kFin | kAck}).outcome, Outcome::kNothingNew);
  EXPECT_EQ(add(t, {kIsn + 1, "late"}).outcome, Outcome::kNothingNew) << "closed direction";
  add(t, {5001, "", kFin | kAck, true});
  // Both closed: the entry is gone; a segment now starts a new stream mid-connection.
  const Added a = add(t, {kIsn + 6, "again"});
  EXPECT_EQ(a.outcome, Outcome::kNewData);
  EXPECT_EQ(a.lookback, "");
  EXPECT_EQ(a.origin, 0u);
  EXPECT_EQ(add(t, {kIsn + 11, "", kRst}).outcome, Outcome::kNotTaken);
  EXPECT_EQ(add(t, {kIsn + 11, "more"}).lookback, "") << "the RST freed the stream";
  // A FIN before a hole closes the direction only once the bytes before it are in.
  add(t, {7000, "", kSyn, false, 40001});
  add(t, {7005, "tail", kFin | kPsh | kAck, false, 40001});
  EXPECT_EQ(add(t, {7001, "head", kPsh | kAck, false, 40001}).fresh, "headtail");
  EXPECT_EQ(add(t, {7001, "head", kPsh | kAck, false, 40001}).outcome, Outcome::kNothingNew);
  EXPECT_EQ(t.stats().evictions, 0u);
}

TEST(IdsStream, AFullBucketEvictsItsLeastRecentlyUsedStream) {
  StreamTable t(4, 8, 64);  // one bucket of 4 ways
  for (uint16_t p = 0; p < 4; ++p) add(t, {100, "a", kPsh | kAck, false, uint16_t(1000 + p)});
  EXPECT_EQ(add(t, {101, "b", kPsh | kAck, false, 1000}).lookback, "a") << "1000: used again";
  add(t, {100, "z", kPsh | kAck, false, 2000});  // a fifth flow: 1001 is the LRU
  EXPECT_EQ(t.stats().evictions, 1u);
  EXPECT_EQ(add(t, {101, "b", kPsh | kAck, false, 1001}).lookback, "")
      << "evicted: started afresh mid-connection";
  EXPECT_EQ(add(t, {101, "b", kPsh | kAck, false, 1003}).lookback, "a");
}

// ---- Matching on streams ----

using Alerts = std::vector<std::pair<uint32_t, uint32_t>>;  // (segment, sid)

StateLimits stream_limits(uint32_t lookback = StateLimits::kDefaultStreamLookback) {
  StateLimits l;
  l.stream = true;
  l.stream_lookback = lookback;
  return l;
}

Alerts run(const std::string& rules, const std::vector<Seg>& segs, StateLimits limits) {
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  if (!parsed.ok()) return {};
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  EXPECT_TRUE(set.ok());
  Alerts out[2];
  const Engine engines[2] = {Engine::kHyperscan, Engine::kAhoCorasick};
  for (int e = 0; e < 2; ++e) {
    Result<std::unique_ptr<Matcher>> m = Matcher::create(set.value(), engines[e], limits);
    EXPECT_EQ(m.value()->streaming(), limits.stream);
    for (uint32_t i = 0; i < segs.size(); ++i) {
      const std::vector<uint8_t> f = frame(segs[i]);
      PacketView v;
      EXPECT_EQ(parse_packet(f.data(), static_cast<uint32_t>(f.size()), v), ParseResult::kOk);
      m.value()->match_batch(&v, 1, [&](uint32_t, uint32_t rule) {
        out[e].emplace_back(i, set.value()->rules()[rule].sid);
      });
    }
  }
  EXPECT_EQ(out[0], out[1]) << "hyperscan and ac differ";
  return out[0];
}

// A connection carrying `payload` to the server in segments cut at `cuts` (sorted positions),
// sent in `order` (indices of the pieces; empty: in order), then FINs.
std::vector<Seg> connection(const std::string& payload, const std::vector<uint32_t>& cuts,
                            const std::vector<uint32_t>& order = {}) {
  std::vector<Seg> s = {{kIsn, "", kSyn}, {5000, "", kSyn | kAck, true}, {kIsn + 1, "", kAck}};
  std::vector<Seg> pieces;
  uint32_t from = 0;
  std::vector<uint32_t> ends = cuts;
  ends.push_back(static_cast<uint32_t>(payload.size()));
  for (uint32_t end : ends) {
    pieces.push_back({kIsn + 1 + from, payload.substr(from, end - from)});
    from = end;
  }
  for (size_t k = 0; k < pieces.size(); ++k) s.push_back(pieces[order.empty() ? k : order[k]]);
  const uint32_t fin = kIsn + 1 + static_cast<uint32_t>(payload.size());
  s.push_back({fin, "", kFin | kAck});
  s.push_back({5001, "", kFin | kAck, true});
  return s;
}

const char* const kSplitRules =
    "alert tcp any any -> any 80 (content:\"attack\"; sid:1;)\n"
    "alert tcp any any -> any 80 (content:\"EVIL\"; nocase; sid:2;)\n"
    "alert tcp any any -> any 80 (content:\"GET\"; depth:3; content:\"/etc/passwd\"; "
    "distance:1; within:11; sid:3;)\n"
    "alert tcp any any -> any 80 (content:\"user=\"; pcre:\"/user=[a-z]+;/\"; sid:4;)\n"
    "alert tcp any any -> any 80 (content:\"xyz\"; offset:20; depth:10; sid:5;)\n"
    "alert tcp any any -> any 80 (content:\"GET\"; flow:no_stream; sid:6;)\n";
const std::string kSplitPayload = "GET /etc/passwd HTTP x xyz attack eViL user=root; end";

TEST(IdsStreamMatch, AContentSplitAtEveryPositionAlertsOnceOnTheCompletingSegment) {
  // Unsplit: every rule alerts on the data segment (index 3).
  const Alerts whole = run(kSplitRules, connection(kSplitPayload, {}), stream_limits());
  EXPECT_EQ(whole, (Alerts{{3, 1}, {3, 2}, {3, 3}, {3, 4}, {3, 5}, {3, 6}}));
  for (uint32_t k = 1; k < kSplitPayload.size(); ++k) {
    // In order: each stream rule alerts on the piece that completes its match.
    Alerts expected;
    auto piece_of = [&](size_t match_end) { return match_end <= k ? 3u : 4u; };
    expected.emplace_back(piece_of(kSplitPayload.find("attack") + 6), 1);
    expected.emplace_back(piece_of(kSplitPayload.find("eViL") + 4), 2);
    expected.emplace_back(piece_of(std::string("GET /etc/passwd").size()), 3);
    expected.emplace_back(piece_of(kSplitPayload.find(';') + 1), 4);
    expected.emplace_back(piece_of(kSplitPayload.find("xyz") + 3), 5);
    if (k >= 3) expected.emplace_back(3, 6);  // no_stream: only a piece holding "GET"
    std::sort(expected.begin(), expected.end());
    EXPECT_EQ(run(kSplitRules, connection(kSplitPayload, {k}), stream_limits()), expected)
        << "split at " << k;
    // Out of order (second piece first): everything completes on the first piece, sent last.
    Alerts reversed;
    for (uint32_t sid = 1; sid <= 5; ++sid) reversed.emplace_back(4, sid);
    if (kSplitPayload.size() - k >= 3 && kSplitPayload.substr(k).find("GET") != std::string::npos)
      reversed.emplace_back(3, 6);
    if (k >= 3) reversed.emplace_back(4, 6);
    // "xyz" (offset 20, depth 10) at 23 - k into the held piece: Suricata's packet inspection
    // of offset/depth rules (SIG_FLAG_REQUIRE_PACKET) finds it there too.
    if (k <= 3) reversed.emplace_back(3, 5);
    std::sort(reversed.begin(), reversed.end());
    EXPECT_EQ(run(kSplitRules, connection(kSplitPayload, {k}, {1, 0}), stream_limits()), reversed)
        << "split at " << k << ", out of order";
  }
}

TEST(IdsStreamMatch, PerPacketModeMissesSplitContents) {
  StateLimits off;  // stream false
  const auto cut = static_cast<uint32_t>(kSplitPayload.find("attack") + 3);
  const Alerts a = run(kSplitRules, connection(kSplitPayload, {cut}), off);
  for (const auto& [seg, sid] : a) EXPECT_NE(sid, 1u) << "\"att\" + \"ack\" per packet";
}

TEST(IdsStreamMatch, AMatchIsReportedOncePerOccurrence) {
  const char* const rules = "alert tcp any any -> any any (content:\"abc\"; sid:1;)\n";
  // Two occurrences in consecutive segments: each ends in its segment's new bytes.
  EXPECT_EQ(run(rules, connection("abcabc", {3}), stream_limits()), (Alerts{{3, 1}, {4, 1}}));
  // A segment after the match with no new occurrence does not alert again.
  EXPECT_EQ(run(rules, connection("xabcx", {2, 4}), stream_limits()), (Alerts{{4, 1}}));
  EXPECT_EQ(run(rules, connection("xabcxy", {4, 5}), stream_limits()), (Alerts{{3, 1}}));
}

TEST(IdsStreamMatch, APcreMatchGrowingOverSegmentsAlertsOnce) {
  const char* const rules = "alert tcp any any -> any any (pcre:\"/id=[0-9]+/\"; sid:1;)\n";
  // "id=1" matches in the first segment; the longer match the second completes is the same one.
  EXPECT_EQ(run(rules, connection("id=123", {4}), stream_limits()), (Alerts{{3, 1}}));
  EXPECT_EQ(run(rules, connection("id=123", {2}), stream_limits()), (Alerts{{4, 1}}));
}

TEST(IdsStreamMatch, OffsetAndDepthCountFromTheStreamsStart) {
  const char* const rules = "alert tcp any any -> any any (content:\"HELO\"; depth:4; sid:1;)\n";
  EXPECT_EQ(run(rules, connection("HELO x", {2}), stream_limits()), (Alerts{{4, 1}}));
  // At the start of a later segment but not of the stream: only the packet inspection that
  // Suricata adds for offset/depth rules (SIG_FLAG_REQUIRE_PACKET) matches it.
  EXPECT_EQ(run(rules, connection("xxHELO", {2}), stream_limits()), (Alerts{{4, 1}}));
  const char* const only =
      "alert tcp any any -> any any (content:\"HELO\"; depth:4; flow:only_stream; sid:1;)\n";
  EXPECT_EQ(run(only, connection("xxHELO", {2}), stream_limits()), (Alerts{}));
  EXPECT_EQ(run(only, connection("HELO", {2}), stream_limits()), (Alerts{{4, 1}}));
  EXPECT_EQ(run(only, connection("HELO", {}), StateLimits{}), (Alerts{}))
      << "only_stream never matches without stream reassembly";
}

TEST(IdsStreamMatch, TheLookbackBoundsTheSpanOfASplitMatch) {
  const char* const rules = "alert tcp any any -> any any (content:\"0123456789\"; sid:1;)\n";
  EXPECT_EQ(run(rules, connection("0123456789", {1}), stream_limits(9)), (Alerts{{4, 1}}))
      << "9 bytes of lookback hold the 9 bytes before the last one";
  EXPECT_EQ(run(rules, connection("0123456789", {9}), stream_limits(9)), (Alerts{{4, 1}}));
  EXPECT_EQ(run(rules, connection("0123456789", {1, 9}), stream_limits(9)), (Alerts{{5, 1}}));
  EXPECT_EQ(run(rules, connection("0123456789", {9}), stream_limits(8)), (Alerts{}))
      << "8 bytes cannot hold the first 9: the bound is real";
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  EXPECT_EQ(set.value()->stream_span(), 10u);
  Result<std::unique_ptr<Matcher>> m =
      Matcher::create(set.value(), Engine::kHyperscan, stream_limits());
  EXPECT_EQ(m.value()->stream_lookback(), 10u) << "the rule set needs no more than its span";
}

TEST(IdsStreamMatch, StreamSpansOfRuleShapes) {
  auto span = [](const char* rule) {
    Result<std::vector<Rule>> parsed = parse_rules(rule, "t.rules");
    EXPECT_TRUE(parsed.ok());
    Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
    return set.value()->stream_span();
  };
  EXPECT_EQ(span("alert tcp any any -> any any (content:\"ab\"; content:\"cde\"; distance:2; "
                 "within:5; sid:1;)"),
            2u + 7u);
  EXPECT_EQ(span("alert tcp any any -> any any (content:\"ab\"; depth:4; content:\"cd\"; "
                 "offset:10; depth:6; sid:1;)"),
            16u);
  EXPECT_EQ(span("alert tcp any any -> any any (content:\"ab\"; content:\"cd\"; sid:1;)"),
            UINT32_MAX);
  EXPECT_EQ(span("alert tcp any any -> any any (content:\"ab\"; pcre:\"/x/\"; sid:1;)"),
            UINT32_MAX);
  EXPECT_EQ(span("alert udp any any -> any any (content:\"ab\"; pcre:\"/x/\"; sid:1;)"), 0u)
      << "udp rules do not inspect streams";
  EXPECT_EQ(span("alert tcp any any -> any any (content:\"ab\"; pcre:\"/x/\"; flow:no_stream; "
                 "sid:1;)"),
            0u);
}

TEST(IdsStreamMatch, RetransmissionsAndHeldSegmentsDoNotAlertAgain) {
  const char* const rules = "alert tcp any any -> any any (content:\"attack\"; sid:1;)\n";
  std::vector<Seg> s = connection("an attack here", {5});
  s.insert(s.begin() + 5, {kIsn + 1, "an attack here"});  // a retransmission of everything
  EXPECT_EQ(run(rules, s, stream_limits()), (Alerts{{4, 1}}));
}

TEST(IdsStreamMatch, AfterAGapSegmentsAreInspectedAsPackets) {
  const char* const rules = "alert tcp any any -> any any (content:\"attack\"; sid:1;)\n";
  StateLimits l = stream_limits();
  l.stream_ooo = 16;
  std::vector<Seg> s = {{kIsn, "", kSyn},
                        {kIsn + 1, "at"},
                        {kIsn + 100, "attack"},  // past the out-of-order window: a gap
                        {kIsn + 3, "tack"},      // not taken: inspected as a packet
                        {kIsn + 200, "attack"}};
  EXPECT_EQ(run(rules, s, l), (Alerts{{2, 1}, {4, 1}}));
}

TEST(IdsStreamMatch, OtherProtocolsAndNoStreamRulesInspectPackets) {
  const char* const rules =
      "alert ip any any -> any any (content:\"ab\"; sid:1;)\n"
      "alert tcp any any -> any any (content:\"ab\"; flow:no_stream; sid:2;)\n"
      "alert tcp any any -> any any (content:\"ab\"; sid:3;)\n";
  EXPECT_EQ(run(rules, connection("xaby", {2}), stream_limits()), (Alerts{{4, 3}}));
  EXPECT_EQ(run(rules, connection("xab", {1}), stream_limits()), (Alerts{{4, 1}, {4, 2}, {4, 3}}));
}

}  // namespace
}  // namespace fulcrum::ids
