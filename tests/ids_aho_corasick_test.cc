// Aho-Corasick DFA (src/lib/ids/aho_corasick.hh) against a naive search and against Hyperscan's
// literal matching: on random patterns and texts over a small alphabet (so that patterns
// overlap, nest and repeat), all three report the same (pattern id, end offset) multiset,
// case-sensitive and caseless; the interleaved scan_lanes equals one scan per buffer.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "lib/ids/aho_corasick.hh"
#include "lib/ids/hs_matcher.hh"

namespace fulcrum::ids {
namespace {

using Match = std::pair<uint32_t, uint32_t>;  // (id, end)

constexpr int kRounds = 40;
constexpr uint32_t kMaxPatterns = 60;
constexpr uint32_t kMaxPatternLen = 7;
constexpr uint32_t kMaxTextLen = 400;
constexpr uint32_t kTexts = 8;
const std::string kAlphabet = std::string("abcAB\x00\xff|", 8);

std::string random_string(std::mt19937& rng, uint32_t min_len, uint32_t max_len) {
  std::string s(min_len + rng() % (max_len - min_len + 1), '\0');
  for (char& c : s) c = kAlphabet[rng() % kAlphabet.size()];
  return s;
}

char fold(char c, bool caseless) {
  return caseless ? static_cast<char>(std::tolower(static_cast<unsigned char>(c))) : c;
}

std::vector<Match> naive(const std::vector<std::string>& pats, const std::string& text,
                         bool caseless) {
  std::vector<Match> out;
  for (uint32_t id = 0; id < pats.size(); ++id) {
    const std::string& p = pats[id];
    for (size_t start = 0; start + p.size() <= text.size(); ++start) {
      bool eq = true;
      for (size_t k = 0; k < p.size() && eq; ++k)
        eq = fold(text[start + k], caseless) == fold(p[k], caseless);
      if (eq) out.emplace_back(id, static_cast<uint32_t>(start + p.size()));
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Match> with_ac(const AhoCorasick& ac, const std::string& text) {
  std::vector<Match> out;
  uint32_t last_end = 0;
  bool ordered = true;
  ac.scan(reinterpret_cast<const uint8_t*>(text.data()), text.size(),
          [&](uint32_t id, uint32_t end) {
            ordered &= end >= last_end;
            last_end = end;
            out.emplace_back(id, end);
          });
  EXPECT_TRUE(ordered) << "matches must come in increasing end order";
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<Match> with_hyperscan(const hs_database_t* db, hs_scratch_t* scratch,
                                  const std::string& text) {
  std::vector<Match> out;
  EXPECT_TRUE(hs_scan_block(db, scratch, reinterpret_cast<const uint8_t*>(text.data()),
                            static_cast<uint32_t>(text.size()),
                            [&](uint32_t id, uint32_t end) { out.emplace_back(id, end); }));
  std::sort(out.begin(), out.end());
  return out;
}

void differential(bool caseless, uint32_t seed) {
  std::mt19937 rng(seed);
  for (int round = 0; round < kRounds; ++round) {
    const uint32_t npats = 1 + rng() % kMaxPatterns;
    std::vector<std::string> pats;
    AhoCorasick ac(caseless);
    std::vector<HsLiteral> lits;
    for (uint32_t id = 0; id < npats; ++id) {
      pats.push_back(random_string(rng, 1, kMaxPatternLen));
      ac.add(pats.back(), id);
      lits.push_back({pats.back(), caseless, id});
    }
    ASSERT_TRUE(ac.build().ok());
    Result<HsDatabase> db = compile_literals(lits);
    ASSERT_TRUE(db.ok()) << db.error();
    HsScratch scratch;
    ASSERT_TRUE(alloc_scratch(db->get(), scratch).ok());
    std::vector<std::string> texts;
    for (uint32_t t = 0; t < kTexts; ++t) texts.push_back(random_string(rng, 0, kMaxTextLen));
    texts.push_back(pats[rng() % npats]);  // a text that is exactly a pattern
    for (const std::string& text : texts) {
      const std::vector<Match> want = naive(pats, text, caseless);
      EXPECT_EQ(with_ac(ac, text), want) << "round " << round;
      EXPECT_EQ(with_hyperscan(db->get(), scratch.get(), text), want) << "round " << round;
    }
    // The interleaved scan of four buffers of different lengths reports what four scans do.
    const uint8_t* data[AhoCorasick::kLanes];
    uint32_t len[AhoCorasick::kLanes];
    std::vector<Match> lanes[AhoCorasick::kLanes];
    for (uint32_t l = 0; l < AhoCorasick::kLanes; ++l) {
      data[l] = reinterpret_cast<const uint8_t*>(texts[l].data());
      len[l] = static_cast<uint32_t>(texts[l].size());
    }
    ac.scan_lanes(data, len, AhoCorasick::kLanes,
                  [&](uint32_t l, uint32_t id, uint32_t end) { lanes[l].emplace_back(id, end); });
    for (uint32_t l = 0; l < AhoCorasick::kLanes; ++l) {
      std::sort(lanes[l].begin(), lanes[l].end());
      EXPECT_EQ(lanes[l], naive(pats, texts[l], caseless)) << "lane " << l;
    }
  }
}

TEST(IdsAhoCorasick, MatchesNaiveSearchAndHyperscanCaseSensitive) {
  differential(false, 1);
}

TEST(IdsAhoCorasick, MatchesNaiveSearchAndHyperscanCaseless) {
  differential(true, 2);
}

TEST(IdsAhoCorasick, FlatLayoutInvariants) {
  AhoCorasick ac(true);
  ac.add("he", 0);
  ac.add("She", 1);
  ac.add("his", 2);
  ac.add("hers", 3);
  ASSERT_TRUE(ac.build().ok());
  // Classes: h e s i r and "everything else"; 'S' and 's' share one.
  EXPECT_EQ(ac.stride(), 6u);
  EXPECT_EQ(ac.classes()['S'], ac.classes()['s']);
  EXPECT_EQ(ac.classes()['x'], 0u);
  EXPECT_EQ(ac.table().size(), size_t{ac.states()} * ac.stride());
  EXPECT_EQ(ac.out_begin().size(), size_t{ac.states()} + 1);
  for (uint32_t e : ac.table()) {
    const uint32_t target = e & AhoCorasick::kStateMask;
    ASSERT_EQ(target % ac.stride(), 0u);
    ASSERT_LT(target / ac.stride(), ac.states());
    const uint32_t s = target / ac.stride();
    EXPECT_EQ((e & AhoCorasick::kMatchBit) != 0, ac.out_begin()[s] != ac.out_begin()[s + 1]);
  }
  const std::string text = "USHERS";
  std::vector<Match> got = with_ac(ac, text);
  const std::vector<Match> want = {{0, 4}, {1, 4}, {3, 6}};
  EXPECT_EQ(got, want);
}

TEST(IdsAhoCorasick, EmptySetAndEmptyPatterns) {
  AhoCorasick none;
  ASSERT_TRUE(none.build().ok());
  EXPECT_TRUE(with_ac(none, "anything").empty());
  AhoCorasick bad;
  bad.add("", 1);
  EXPECT_FALSE(bad.build().ok());
}

}  // namespace
}  // namespace fulcrum::ids
