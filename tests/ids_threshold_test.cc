// threshold (limit, threshold, both) and detection_filter as Suricata applies them, with the time
// injected (Matcher::set_time; no wall clock): the boundaries of the counts and of the windows
// (a window includes its last nanosecond), tracking by source, destination, both and rule, and
// the bounded table's LRU eviction.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ids_test_frames.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::ids {
namespace {

constexpr uint32_t kHostA = 0x0A000001;
constexpr uint32_t kHostB = 0x0A000002;
constexpr uint32_t kServer = 0xC0A80002;
constexpr uint64_t kSecond = 1'000'000'000;

struct Pkt {
  uint64_t ns;
  uint32_t src = kHostA;
  uint32_t dst = kServer;
};

// The indices of `pkts` (each a UDP datagram carrying "EVIL" at its time) that alert with
// `rules`; `evictions` receives the threshold table's evictions.
std::vector<uint32_t> alerts(const std::string& rules, const std::vector<Pkt>& pkts,
                             StateLimits limits = {}, uint64_t* evictions = nullptr) {
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  if (!parsed.ok()) return {};
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  EXPECT_TRUE(set.ok() && set.value()->stateful());
  Result<std::unique_ptr<Matcher>> m = Matcher::create(set.value(), Engine::kHyperscan, limits);
  std::vector<uint32_t> out;
  for (uint32_t i = 0; i < pkts.size(); ++i) {
    const std::vector<uint8_t> f =
        testing::l4_frame(testing::kProtoUdp, pkts[i].src, pkts[i].dst, 5000, 53, "an EVIL one");
    PacketView v;
    EXPECT_EQ(parse_packet(f.data(), static_cast<uint32_t>(f.size()), v), ParseResult::kOk);
    m.value()->set_time(pkts[i].ns);
    m.value()->match_batch(&v, 1, [&](uint32_t, uint32_t) { out.push_back(i); });
  }
  if (evictions != nullptr) *evictions = m.value()->stats().threshold_evictions;
  return out;
}

std::string rule(const std::string& option) {
  return "alert udp any any -> any any (content:\"EVIL\"; " + option + "; sid:1;)\n";
}

using Idx = std::vector<uint32_t>;

TEST(IdsThreshold, LimitAlertsOnTheFirstCountMatchesOfAWindow) {
  const std::string r = rule("threshold: type limit, track by_src, count 2, seconds 10");
  EXPECT_EQ(alerts(r, {{0},
                       {1 * kSecond},
                       {2 * kSecond},
                       {3 * kSecond, kHostB},
                       {10 * kSecond},
                       {10 * kSecond + 1},
                       {11 * kSecond},
                       {12 * kSecond}}),
            (Idx{0, 1, 3, 5, 6}));  // 10 s is the window's last instant; 10 s + 1 ns opens one
}

TEST(IdsThreshold, ThresholdAlertsOnEveryCountthMatchAndKeepsItsWindow) {
  const std::string r = rule("threshold: type threshold, track by_src, count 3, seconds 10");
  EXPECT_EQ(alerts(r, {{0},
                       {1},
                       {2},
                       {3},
                       {4},
                       {5},
                       {6},  // alerts on the 3rd and the 6th
                       {11 * kSecond},
                       {12 * kSecond},
                       {13 * kSecond}}),
            (Idx{2, 5, 9}));  // 11 s opens a new window with count 1: 13 s is its 3rd match
  const std::string every = rule("threshold: type threshold, track by_src, count 1, seconds 10");
  EXPECT_EQ(alerts(every, {{0}, {1}, {20 * kSecond}}), (Idx{0, 1, 2}));
}

TEST(IdsThreshold, BothAlertsOnceAWindowOnItsCountthMatch) {
  const std::string r = rule("threshold: type both, track by_dst, count 2, seconds 10");
  EXPECT_EQ(alerts(r, {{0}, {1}, {2}, {3, kHostB}, {20 * kSecond}, {21 * kSecond}}),
            (Idx{1, 5}));  // by_dst: host B's packet counts with host A's
  const std::string once = rule("threshold: type both, track by_src, count 1, seconds 10");
  EXPECT_EQ(alerts(once, {{0}, {1}, {11 * kSecond}}), (Idx{0, 2}));
}

TEST(IdsThreshold, DetectionFilterAlertsAfterTheCountthMatch) {
  const std::string r = rule("detection_filter: track by_src, count 2, seconds 5");
  EXPECT_EQ(alerts(r, {{0},
                       {1},
                       {2},
                       {3},
                       {9 * kSecond},
                       {10 * kSecond},
                       {11 * kSecond},
                       {12 * kSecond, kHostB}}),
            (Idx{2, 3, 6}));
}

TEST(IdsThreshold, TrackByBothAndByRule) {
  const std::string pair = rule("threshold: type limit, track by_both, count 1, seconds 10");
  EXPECT_EQ(alerts(pair, {{0}, {1}, {2, kHostA, kHostB}, {3, kHostB, kServer}}), (Idx{0, 2, 3}));
  const std::string all = rule("threshold: type limit, track by_rule, count 1, seconds 10");
  EXPECT_EQ(alerts(all, {{0}, {1, kHostB}, {2, kHostA, kHostB}}), Idx{0});
}

TEST(IdsThreshold, AFullBucketEvictsItsLeastRecentlyUsedEntry) {
  // 4 entries: one bucket of 4 ways. Five sources once each: the fifth evicts the first.
  const std::string r = rule("threshold: type limit, track by_src, count 1, seconds 100");
  uint64_t evictions = 0;
  const std::vector<Pkt> pkts = {{0, 1}, {1, 2}, {2, 3},
                                 {3, 4}, {4, 5}, {5, 2},  // still there: suppressed
                                 {6, 1}};                 // evicted, so counted afresh: alerts
  EXPECT_EQ(alerts(r, pkts, StateLimits{.thresholds = 4}, &evictions), (Idx{0, 1, 2, 3, 4, 6}));
  EXPECT_EQ(evictions, 2u);                          // source 1 by 5, then source 3 by 1
  EXPECT_EQ(alerts(r, pkts), (Idx{0, 1, 2, 3, 4}));  // the default table holds them all
}

TEST(IdsThreshold, ParserFieldsAndErrors) {
  Result<Rule> r = parse_rule(
      "alert tcp any any -> any any (content:\"a\"; threshold: seconds 60, count 5, track "
      "by_dst, type both; sid:1;)");
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_EQ(r->threshold.type, ThresholdType::kBoth);
  EXPECT_EQ(r->threshold.track, Track::kByDst);
  EXPECT_EQ(r->threshold.count, 5u);
  EXPECT_EQ(r->threshold.seconds, 60u);
  auto error = [](const std::string& opt, std::string* feature = nullptr) {
    Result<Rule> e =
        parse_rule("alert tcp any any -> any any (content:\"a\"; " + opt + " sid:1;)", feature);
    return e.ok() ? std::string("(no error)") : e.error();
  };
  EXPECT_EQ(error("threshold: type limit, track by_src, count 1;"),
            "threshold: expected type, track, count and seconds");
  EXPECT_EQ(error("threshold: type often, track by_src, count 1, seconds 1;"),
            "threshold: expected type limit, threshold or both, got 'often'");
  EXPECT_EQ(error("detection_filter: type limit, track by_src, count 1, seconds 1;"),
            "detection_filter: expected track, count or seconds, got 'type'");
  EXPECT_EQ(error("detection_filter: track by_src, count x, seconds 1;"),
            "detection_filter: count: expected a non-negative integer, got 'x'");
  EXPECT_EQ(error("detection_filter: track by_src, count 1, seconds 1; "
                  "threshold: type limit, track by_src, count 1, seconds 1;"),
            "threshold: a rule takes one threshold or detection_filter");
  std::string feature;
  EXPECT_EQ(error("threshold: type limit, track by_flow, count 1, seconds 1;", &feature),
            "threshold: expected track by_src, by_dst, by_both or by_rule, got 'by_flow'");
  EXPECT_EQ(feature, "threshold track by_flow");
}

}  // namespace
}  // namespace fulcrum::ids
