// Relative contents (distance, within) as Suricata's recursive content inspection defines them:
// every occurrence of the previous content is tried when the next one has `within`, negative
// distances, negated relative contents, nocase, offset/depth on the first content; and the
// parser's errors for the combinations Suricata refuses. Both prefilter engines.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ids_test_frames.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::ids {
namespace {

constexpr uint32_t kClient = 0x0A000001;
constexpr uint32_t kServer = 0xC0A80002;

// The sids of `rules` matching one TCP segment to port 80 carrying `payload`; the same with both
// engines (checked).
std::vector<uint32_t> sids(const std::string& rules, const std::string& payload) {
  Result<std::vector<Rule>> parsed = parse_rules(rules, "t.rules");
  EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error());
  if (!parsed.ok()) return {};
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  EXPECT_TRUE(set.ok());
  const std::vector<uint8_t> frame =
      testing::l4_frame(testing::kProtoTcp, kClient, kServer, 40000, 80, payload);
  PacketView v;
  EXPECT_EQ(parse_packet(frame.data(), static_cast<uint32_t>(frame.size()), v), ParseResult::kOk);
  std::vector<uint32_t> out[2];
  const Engine engines[2] = {Engine::kHyperscan, Engine::kAhoCorasick};
  for (int e = 0; e < 2; ++e) {
    Result<std::unique_ptr<Matcher>> m = Matcher::create(set.value(), engines[e]);
    EXPECT_TRUE(m.ok());
    m.value()->match_batch(
        &v, 1, [&](uint32_t, uint32_t rule) { out[e].push_back(set.value()->rules()[rule].sid); });
  }
  EXPECT_EQ(out[0], out[1]) << "hyperscan and ac differ on " << payload;
  return out[0];
}

using Sids = std::vector<uint32_t>;

TEST(IdsRelativeContent, OnlyALaterOccurrenceOfThePreviousContentSatisfiesWithin) {
  const std::string rule =
      "alert tcp any any -> any any (content:\"ab\"; content:\"cd\"; distance:0; within:4; "
      "sid:1;)\n";
  EXPECT_EQ(sids(rule, "ab........ab.cd"), Sids{1});  // the second "ab" is 1 byte before "cd"
  EXPECT_EQ(sids(rule, "ab........cd"), Sids{});      // too far from the only "ab"
  EXPECT_EQ(sids(rule, "cdab"), Sids{});              // before it
  EXPECT_EQ(sids(rule, "abab..cd..ab"), Sids{1});
  // Suricata's own within test (detect-within.c): "Ten" 1 to 3 bytes after "Five".
  EXPECT_EQ(sids("alert tcp any any -> any any (content:\"Five\"; content:\"Ten\"; within:3; "
                 "distance:1; sid:2;)\n",
                 "Zero Five Ten Fourteen"),
            Sids{2});
}

TEST(IdsRelativeContent, ThreeContentsBacktrackThroughEveryOccurrence) {
  const std::string rule =
      "alert tcp any any -> any any (content:\"k=\"; content:\"1\"; within:3; content:\"z\"; "
      "distance:0; within:2; sid:1;)\n";
  EXPECT_EQ(sids(rule, "k=1xxxxk=x1zq"), Sids{1});  // the second k= and its 1 lead to z
  EXPECT_EQ(sids(rule, "k=1xxz k=x1xxz"), Sids{});
}

TEST(IdsRelativeContent, NegativeDistanceLooksBeforeThePreviousMatchEnd) {
  // "BBB" ends at 6; distance -4 starts the window at 2, within 3 ends it at 6 + 3 - 4 = 5.
  const std::string rule =
      "alert tcp any any -> any any (content:\"BBB\"; content:\"AB\"; distance:-4; within:3; "
      "sid:1;)\n";
  EXPECT_EQ(sids(rule, "xxABBBx"), Sids{1});
  const std::string later =
      "alert tcp any any -> any any (content:\"BBB\"; content:\"AB\"; distance:-3; within:3; "
      "sid:2;)\n";
  EXPECT_EQ(sids(later, "xxABBBx"), Sids{});
  // A distance further back than the domain's start starts at 0.
  EXPECT_EQ(sids("alert tcp any any -> any any (content:\"BB\"; content:\"xA\"; distance:-50; "
                 "sid:3;)\n",
                 "xABB"),
            Sids{3});
}

TEST(IdsRelativeContent, NegatedRelativeContentsAsSuricata) {
  const std::string within =
      "alert tcp any any -> any any (content:\"GET\"; content:!\"HTTP\"; distance:0; within:10; "
      "sid:1;)\n";
  EXPECT_EQ(sids(within, "GET / HTTP/1.0"), Sids{});
  EXPECT_EQ(sids(within, "GET /aaaaaaaaaaaa HTTP/1.0"), Sids{1});
  // With `within` on the negated content, a later "AA" is tried (Suricata's WITHIN_NEXT) ...
  EXPECT_EQ(sids("alert tcp any any -> any any (content:\"AA\"; content:!\"XX\"; distance:0; "
                 "within:6; sid:2;)\n",
                 "AA XX AA"),
            Sids{2});
  // ... without it only the first one is (Suricata gives up: no later occurrence is tried).
  EXPECT_EQ(sids("alert tcp any any -> any any (content:\"AA\"; content:!\"XX\"; distance:0; "
                 "sid:3;)\n",
                 "AA XX AA"),
            Sids{});
}

TEST(IdsRelativeContent, NocaseAndOffsetDepthOnTheFirstContent) {
  const std::string rule =
      "alert tcp any any -> any any (content:\"user\"; nocase; depth:4; content:\"PASS\"; "
      "nocase; distance:1; within:8; sid:1;)\n";
  EXPECT_EQ(sids(rule, "USER x pass"), Sids{1});
  EXPECT_EQ(sids(rule, "xUSER pass"), Sids{});  // "user" past depth 4
  EXPECT_EQ(sids(rule, "USERpass"), Sids{});    // distance 1: not right after
  const std::string cased =
      "alert tcp any any -> any any (content:\"user\"; nocase; content:\"PASS\"; distance:1; "
      "sid:2;)\n";
  EXPECT_EQ(sids(cased, "USER pass"), Sids{});
  EXPECT_EQ(sids(cased, "USER PASS"), Sids{2});
}

TEST(IdsRelativeContent, FirstContentRelativeToTheDomainStart) {
  const std::string rule = "alert tcp any any -> any any (content:\"abc\"; distance:2; sid:1;)\n";
  EXPECT_EQ(sids(rule, "abc"), Sids{});
  EXPECT_EQ(sids(rule, "xxabc"), Sids{1});
  // After an absolute negated content, the base is still the domain's start.
  EXPECT_EQ(sids("alert tcp any any -> any any (content:!\"q\"; content:\"abc\"; within:3; "
                 "sid:2;)\n",
                 "abcx"),
            Sids{2});
}

TEST(IdsRelativeContent, AbsoluteContentsStayIndependent) {
  // "c" is absolute: found anywhere; "d" is relative to the "c" found first.
  const std::string rule =
      "alert tcp any any -> any any (content:\"a\"; content:\"b\"; within:2; content:\"c\"; "
      "content:\"d\"; within:1; sid:1;)\n";
  EXPECT_EQ(sids(rule, "ab cd"), Sids{1});
  EXPECT_EQ(sids(rule, "ab c cd"), Sids{1});  // "d" has within: the next "c" is tried
  EXPECT_EQ(sids(rule, "a  b cd"), Sids{});
}

TEST(IdsRelativeContent, ParserFlagsAndErrors) {
  Result<Rule> r = parse_rule(
      "alert tcp any any -> any any (content:\"a\"; content:!\"b\"; within:4; content:\"c\"; "
      "distance:-2; sid:1;)");
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(r->contents.size(), 3u);
  EXPECT_TRUE(r->contents[0].within_next);
  EXPECT_FALSE(r->contents[1].within_next);
  EXPECT_TRUE(r->contents[1].has_within);
  EXPECT_EQ(r->contents[1].within, 4);
  EXPECT_EQ(r->contents[2].distance, -2);
  EXPECT_TRUE(r->contents[2].relative());

  auto error = [](const std::string& opts) {
    Result<Rule> e = parse_rule("alert tcp any any -> any any (" + opts + " sid:1;)");
    return e.ok() ? std::string("(no error)") : e.error();
  };
  EXPECT_EQ(error("content:\"abc\"; within:2;"),
            "within: expected at least the content length 3, got 2");
  EXPECT_EQ(error("content:\"a\"; offset:1; distance:0;"),
            "distance: the content has offset or depth; distance and within do not mix with them");
  EXPECT_EQ(error("content:\"a\"; within:3; depth:4;"),
            "depth: the content is relative (distance, within); offset and depth do not mix with "
            "them");
  EXPECT_EQ(error("content:\"a\"; distance:1; distance:2;"),
            "distance: given twice for one content");
  EXPECT_EQ(error("content:\"a\"; distance:x;"), "distance: expected an integer, got 'x'");
  EXPECT_EQ(error("distance:1;"), "'distance' without a preceding content");

  std::string feature;
  Result<Rule> pcre = parse_rule(
      "alert tcp any any -> any any (pcre:\"/x/\"; content:\"a\"; distance:0; sid:1;)", &feature);
  ASSERT_FALSE(pcre.ok());
  EXPECT_EQ(feature, "relative to pcre");
  // A positive content between the pcre and the relative one is its base: supported.
  EXPECT_TRUE(parse_rule("alert tcp any any -> any any (pcre:\"/x/\"; content:\"b\"; "
                         "content:\"a\"; distance:0; sid:1;)")
                  .ok());
}

TEST(IdsRelativeContent, RelativeRulesWithPcreAndPlainRulesTogether) {
  const std::string rules =
      "alert tcp any any -> any any (content:\"GET\"; content:\"/x\"; within:4; "
      "pcre:\"/HTTP\\/1\\.[01]/\"; sid:1;)\n"
      "alert tcp any any -> any any (content:\"GET\"; content:\"/x\"; sid:2;)\n";
  EXPECT_EQ(sids(rules, "GET /x HTTP/1.1"), (Sids{1, 2}));
  EXPECT_EQ(sids(rules, "GET /a/x HTTP/1.1"), Sids{2});
  EXPECT_EQ(sids(rules, "GET /x HTTP/2"), Sids{2});
}

}  // namespace
}  // namespace fulcrum::ids
