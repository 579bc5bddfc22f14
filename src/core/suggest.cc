#include "core/suggest.hh"

#include <algorithm>
#include <cctype>
#include <numeric>

namespace fulcrum {
namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

size_t allowed_edits(std::string_view word) {
  return std::clamp<size_t>(word.size() / 3, 1, 3);
}

}  // namespace

size_t edit_distance(std::string_view a, std::string_view b) {
  const size_t n = a.size(), m = b.size();
  // Three rows of the optimal-string-alignment table: i-2, i-1, i.
  std::vector<size_t> prev2(m + 1), prev(m + 1), cur(m + 1);
  std::iota(prev.begin(), prev.end(), size_t{0});
  for (size_t i = 1; i <= n; ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= m; ++j) {
      const size_t cost = lower(a[i - 1]) == lower(b[j - 1]) ? 0 : 1;
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost});
      if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
          lower(a[i - 2]) == lower(b[j - 1]))
        cur[j] = std::min(cur[j], prev2[j - 2] + 1);
    }
    std::swap(prev2, prev);
    std::swap(prev, cur);
  }
  return prev[m];
}

std::vector<std::string> closest(std::string_view word, const std::vector<std::string>& candidates,
                                 size_t max) {
  const size_t limit = allowed_edits(word);
  std::vector<std::pair<size_t, size_t>> scored;  // (distance, index)
  for (size_t i = 0; i < candidates.size(); ++i) {
    const size_t d = edit_distance(word, candidates[i]);
    if (d <= limit && candidates[i] != word) scored.emplace_back(d, i);
  }
  std::stable_sort(scored.begin(), scored.end(),
                   [](const auto& x, const auto& y) { return x.first < y.first; });
  std::vector<std::string> out;
  for (size_t k = 0; k < scored.size() && out.size() < max; ++k)
    if (scored[k].first == scored.front().first) out.push_back(candidates[scored[k].second]);
  return out;
}

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::vector<std::string> best = closest(word, candidates, 2);
  if (best.empty()) return "";
  std::string out = " (did you mean '" + best[0] + "'";
  if (best.size() > 1) out += " or '" + best[1] + "'";
  return out + "?)";
}

}  // namespace fulcrum
