// The Hyperscan prefilter scans a batch's short payloads joined end to end in one call
// (Matcher::prefilter_hyperscan): the rules each packet matches must be those it matches alone,
// and those the Aho-Corasick engine finds, whatever its neighbours hold — contents split over
// two neighbouring payloads, payloads of 0 bytes, payloads past the joining limit between short
// ones, offset/depth and nocase contents.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "ids_test_frames.hh"
#include "lib/ids/rule_engine.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::ids {
namespace {

constexpr uint32_t kClient = 0x0A000001;
constexpr uint32_t kServer = 0xC0A80002;
constexpr uint32_t kPackets = 300;  // several groups of the prefilter, and a partial one
constexpr uint32_t kLongPayload = 700;

const char* const kRules =
    "alert udp any any -> any any (content:\"needle\"; sid:1;)\n"
    "alert udp any any -> any any (content:\"HayStack\"; nocase; sid:2;)\n"
    "alert udp any any -> any any (content:\"abc\"; offset:2; depth:5; sid:3;)\n"
    "alert udp any any -> any any (content:\"xy\"; content:\"zz\"; distance:0; sid:4;)\n"
    "alert udp any any -> any any (content:\"edge\"; content:!\"nope\"; sid:5;)\n"
    "alert udp any any -> any any (content:\"q\"; sid:6;)\n"
    // "dle" then the next frame's UDP source and destination ports (4000, 53): only ever found
    // across two joined payloads.
    "alert udp any any -> any any (content:\"dle|0f a0 00 35|\"; sid:7;)\n"
    "alert ip any any -> any any (content:\"dle|0f a0|\"; sid:8;)\n";

const char* const kPieces[] = {"needle", "haystack", "HAYSTACK", "abc", "xy",  "zz",
                               "edge",   "nope",     "q",        "nee", "dle", "Hay"};

// Payloads whose contents often sit at a payload's very start or end, so that the joined buffer
// holds contents that straddle two payloads.
std::vector<std::string> payloads(uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::string> out;
  for (uint32_t i = 0; i < kPackets; ++i) {
    const uint32_t kind = rng() % 10;
    std::string p;
    if (kind == 0) {
      out.emplace_back();  // empty
      continue;
    }
    const uint32_t len = kind == 1 ? kLongPayload + rng() % 100 : rng() % 40;
    for (uint32_t b = 0; b < len; ++b) p += static_cast<char>('a' + rng() % 26);
    if (rng() % 2) p = kPieces[rng() % std::size(kPieces)] + p;
    if (rng() % 2) p += kPieces[rng() % std::size(kPieces)];
    out.push_back(p);
  }
  return out;
}

using Alerts = std::vector<std::vector<uint32_t>>;  // sids per packet

std::shared_ptr<RuleSet> compiled_rules() {
  Result<std::vector<Rule>> parsed = parse_rules(kRules, "t.rules");
  EXPECT_TRUE(parsed.ok()) << parsed.error();
  if (!parsed) return nullptr;
  Result<std::shared_ptr<RuleSet>> set = RuleSet::compile(std::move(parsed.value()));
  EXPECT_TRUE(set.ok());
  return set ? set.value() : nullptr;
}

// UDP frames from kClient to kServer carrying `payloads`, and their parsed views (pointing into
// `frames`, which must outlive them).
std::vector<PacketView> udp_views(const std::vector<std::string>& payloads,
                                  std::vector<std::vector<uint8_t>>& frames) {
  frames.clear();
  for (const std::string& p : payloads)
    frames.push_back(testing::l4_frame(testing::kProtoUdp, kClient, kServer, 4000, 53, p));
  std::vector<PacketView> views(frames.size());
  for (size_t i = 0; i < frames.size(); ++i)
    EXPECT_EQ(parse_packet(frames[i].data(), static_cast<uint32_t>(frames[i].size()), views[i]),
              ParseResult::kOk);
  return views;
}

Alerts run(const std::shared_ptr<RuleSet>& set, Engine engine, const std::vector<PacketView>& v,
           uint32_t batch) {
  Result<std::unique_ptr<Matcher>> m = Matcher::create(set, engine);
  EXPECT_TRUE(m.ok());
  Alerts out(v.size());
  for (uint32_t k = 0; k < v.size(); k += batch) {
    const uint32_t n = std::min<uint32_t>(batch, static_cast<uint32_t>(v.size()) - k);
    m.value()->match_batch(
        &v[k], n, [&](uint32_t i, uint32_t rule) { out[k + i].push_back(set->rules()[rule].sid); });
  }
  return out;
}

TEST(IdsBatchScan, JoinedPayloadsMatchAsEachPayloadAlone) {
  const std::shared_ptr<RuleSet> set = compiled_rules();
  ASSERT_NE(set, nullptr);
  for (uint32_t seed = 1; seed <= 4; ++seed) {
    const std::vector<std::string> text = payloads(seed);
    std::vector<std::vector<uint8_t>> frames;
    const std::vector<PacketView> views = udp_views(text, frames);
    const Alerts alone = run(set, Engine::kHyperscan, views, 1);
    const Alerts batched = run(set, Engine::kHyperscan, views, kPackets);
    const Alerts ac = run(set, Engine::kAhoCorasick, views, kPackets);
    uint32_t alerted = 0;
    for (size_t i = 0; i < views.size(); ++i) {
      EXPECT_EQ(batched[i], alone[i]) << "seed " << seed << " packet " << i << ": " << text[i];
      EXPECT_EQ(ac[i], alone[i]) << "seed " << seed << " packet " << i << ": " << text[i];
      alerted += alone[i].empty() ? 0 : 1;
    }
    EXPECT_GT(alerted, kPackets / 4);  // the pieces do match
    EXPECT_LT(alerted, kPackets);
  }
}

TEST(IdsBatchScan, AContentSplitOverTwoPayloadsMatchesNeither) {
  const std::shared_ptr<RuleSet> set = compiled_rules();
  ASSERT_NE(set, nullptr);
  std::vector<std::vector<uint8_t>> frames;
  const std::vector<PacketView> views =
      udp_views({"....nee", "dle....", "", "....need", "le", "...dle", "needle"}, frames);
  const Alerts got = run(set, Engine::kHyperscan, views, 64);
  const Alerts want = {{}, {}, {}, {}, {}, {}, {1}};
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace fulcrum::ids
