#include "core/suggest.hh"

#include <gtest/gtest.h>

namespace fulcrum {
namespace {

TEST(Suggest, EditDistanceCountsTranspositionsAsOneAndIgnoresCase) {
  EXPECT_EQ(edit_distance("", ""), 0u);
  EXPECT_EQ(edit_distance("abc", ""), 3u);
  EXPECT_EQ(edit_distance("kitten", "sitting"), 3u);
  EXPECT_EQ(edit_distance("CheckIPHedaer", "CheckIPHeader"), 1u);  // one transposition
  EXPECT_EQ(edit_distance("checkipheader", "CheckIPHeader"), 0u);
  EXPECT_EQ(edit_distance("--prot", "--port"), 1u);
}

TEST(Suggest, OffersOnlyCloseCandidatesBestFirst) {
  const std::vector<std::string> keys = {"OFFSET", "CHECKSUM", "BADSRC", "OFFSETS"};
  EXPECT_EQ(closest("OFSET", keys), (std::vector<std::string>{"OFFSET"}));
  EXPECT_EQ(closest("XYZ", keys), std::vector<std::string>{});
  // Within a third of the word's length: a short word gets one edit, not a rewrite.
  EXPECT_EQ(closest("FOO", {"FOX", "BAR"}), (std::vector<std::string>{"FOX"}));
  EXPECT_EQ(closest("FOO", {"BAZ"}), std::vector<std::string>{});
  EXPECT_EQ(did_you_mean("chek", {"check", "graph"}), " (did you mean 'check'?)");
  EXPECT_EQ(did_you_mean("ab", {"ac", "ad", "xy"}), " (did you mean 'ac' or 'ad'?)");
  EXPECT_EQ(did_you_mean("run", {"run"}), "") << "the word itself is not a suggestion";
}

}  // namespace
}  // namespace fulcrum
