// Line-oriented table files (routes, SAs, names): one entry a line, `#` starts a comment, blank
// lines are ignored. Shared by the table loaders so they report errors the same way.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "core/result.hh"

namespace fulcrum {

inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// Calls parse(content, line_no) for every line with content (comment removed, trimmed).
// parse returns true to go on, or false after setting *error; the error comes back prefixed
// "PATH:LINE: ".
template <class Parse>
Status for_each_table_line(std::string_view text, const std::string& path, Parse&& parse) {
  uint32_t line_no = 0;
  size_t pos = 0;
  std::string error;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    const size_t hash = line.find('#');
    std::string_view content =
        trim_blanks(hash == std::string_view::npos ? line : line.substr(0, hash));
    if (content.empty()) continue;
    if (!parse(content, line_no, &error))
      return make_error(path + ":" + std::to_string(line_no) + ": " + error);
  }
  return {};
}

}  // namespace fulcrum
