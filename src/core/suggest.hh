// "Did you mean" for a mistyped name (element class, keyword, option, command): the closest
// candidates by edit distance (Damerau-Levenshtein, optimal string alignment; letter case
// ignored), within a third of the word's length (at least 1, at most 3 edits).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fulcrum {

size_t edit_distance(std::string_view a, std::string_view b);

// The candidates closest to `word`, best first (ties in the order given); empty when none is
// close enough.
std::vector<std::string> closest(std::string_view word, const std::vector<std::string>& candidates,
                                 size_t max = 3);

// " (did you mean 'X'?)" or " (did you mean 'X' or 'Y'?)"; "" when nothing is close.
std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates);

}  // namespace fulcrum
