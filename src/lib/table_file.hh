// Line-oriented table files (routes, SAs, names): one entry a line, `#` starts a comment, blank
// lines are ignored. Shared by the table loaders so they report errors the same way.
#pragma once

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "core/result.hh"
#include "core/text_file.hh"

namespace fulcrum {

inline constexpr size_t kMaxTableLineBytes = size_t{64} << 10;

// The whole file (core/text_file.hh: a regular file of at most 1 GiB), checked to be text: a
// line longer than 64 KiB or a NUL byte is an error at its line ("PATH:LINE: line is N bytes
// long, more than the limit of 64 KiB", "PATH:LINE:COL: a NUL byte: WHAT must be text").
inline Result<std::string> read_table_file(const std::string& path, const std::string& what) {
  Result<std::string> text = read_input_file(path, what);
  if (!text) return text;
  const std::string_view t = text.value();
  size_t start = 0;
  for (uint32_t line_no = 1; start <= t.size(); ++line_no) {
    size_t nl = t.find('\n', start);
    if (nl == std::string_view::npos) nl = t.size();
    const std::string_view line = t.substr(start, nl - start);
    const std::string where = path + ":" + std::to_string(line_no) + ":";
    if (line.size() > kMaxTableLineBytes)
      return make_error(where + " line is " + std::to_string(line.size()) +
                        " bytes long, more than the limit of " +
                        std::to_string(kMaxTableLineBytes >> 10) + " KiB");
    if (const size_t nul = line.find('\0'); nul != std::string_view::npos)
      return make_error(where + std::to_string(nul + 1) + ": a NUL byte: " + what +
                        " must be text");
    start = nl + 1;
  }
  return text;
}

// `header` as comment lines: "# LINE\n" each, "#\n" for an empty one.
inline std::string comment_lines(std::string_view header) {
  std::string out;
  while (!header.empty()) {
    const size_t nl = header.find('\n');
    const std::string_view line = header.substr(0, nl);
    out += line.empty() ? "#\n" : "# " + std::string(line) + "\n";
    header = nl == std::string_view::npos ? std::string_view{} : header.substr(nl + 1);
  }
  return out;
}

// Writes `text` to `path`; the error names the file as `what` ("cannot write route file PATH:
// REASON").
inline Status write_table_file(const std::string& path, std::string_view text,
                               const std::string& what) {
  auto failed = [&] {
    return make_error("cannot write " + what + " " + path + ": " + std::strerror(errno));
  };
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "wb"), &std::fclose);
  if (!f) return failed();
  if (std::fwrite(text.data(), 1, text.size(), f.get()) != text.size() || std::fflush(f.get()) != 0)
    return failed();
  return {};
}

inline std::string_view trim_blanks(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

inline bool all_digits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The fields of a route line "ADDR/LEN PORT" (IPv4 and IPv6 route files).
struct RouteLine {
  std::string_view prefix;  // "ADDR/LEN" as written
  uint32_t len = 0;
  uint32_t port = 0;
};

// Splits and checks a route line; parse_addr(text) parses ADDR for the family. False with
// `error` set: "expected 'FORM', got '...'", "prefix length L out of range 0..MAX_LEN",
// "port 'P' is not a number" or "port P out of range 0..MAX_PORT". Host bits are the caller's.
template <class ParseAddr>
bool parse_route_line(std::string_view content, std::string_view form, uint32_t max_len,
                      uint32_t max_port, ParseAddr&& parse_addr, RouteLine& out,
                      std::string& error) {
  auto expected = [&] {
    error = "expected '" + std::string(form) + "', got " + quote_excerpt(content);
    return false;
  };
  const size_t sp = content.find_first_of(" \t");
  if (sp == std::string_view::npos) return expected();
  const std::string_view prefix = content.substr(0, sp);
  const std::string_view port_text = trim_blanks(content.substr(sp));
  if (port_text.find_first_of(" \t") != std::string_view::npos) return expected();
  const size_t slash = prefix.find('/');
  if (slash == std::string_view::npos || !parse_addr(prefix.substr(0, slash))) return expected();
  const std::string_view len_text = prefix.substr(slash + 1);
  if (!all_digits(len_text)) return expected();
  uint32_t len = 0;
  auto [lend, lec] = std::from_chars(len_text.data(), len_text.data() + len_text.size(), len);
  if (lec != std::errc() || len > max_len) {
    error =
        "prefix length " + std::string(len_text) + " out of range 0.." + std::to_string(max_len);
    return false;
  }
  if (!all_digits(port_text)) {
    error = "port '" + std::string(port_text) + "' is not a number";
    return false;
  }
  uint32_t port = 0;
  auto [pend, pec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (pec != std::errc() || port > max_port) {
    error = "port " + std::string(port_text) + " out of range 0.." + std::to_string(max_port);
    return false;
  }
  out = RouteLine{prefix, len, port};
  return true;
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

// Parses a route-style table: parse(content, Entry&, std::string* error) per line, then rejects
// a repeated key_of(entry) with "PATH:LINE: duplicate route <describe(entry)> (first on line N)"
// naming the earliest repeating line.
template <class Entry, class Parse, class KeyOf, class Describe>
Result<std::vector<Entry>> parse_unique_table(std::string_view text, const std::string& path,
                                              size_t typical_line_bytes, Parse&& parse,
                                              KeyOf&& key_of, Describe&& describe) {
  std::vector<Entry> entries;
  std::vector<uint32_t> lines;
  entries.reserve(text.size() / typical_line_bytes);
  lines.reserve(text.size() / typical_line_bytes);
  Status read = for_each_table_line(
      text, path, [&](std::string_view content, uint32_t line_no, std::string* error) {
        Entry e{};
        if (!parse(content, e, error)) return false;
        entries.push_back(e);
        lines.push_back(line_no);
        return true;
      });
  if (!read) return make_error(read.error());

  using Key = decltype(key_of(entries.front()));
  std::vector<std::tuple<Key, uint32_t, size_t>> keys(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) keys[i] = {key_of(entries[i]), lines[i], i};
  std::sort(keys.begin(), keys.end());
  size_t dup = 0;
  uint32_t dup_line = 0, first_line = 0;
  for (size_t i = 1; i < keys.size(); ++i) {
    const uint32_t line = std::get<1>(keys[i]);
    if (std::get<0>(keys[i]) == std::get<0>(keys[i - 1]) && (dup_line == 0 || line < dup_line)) {
      dup = std::get<2>(keys[i]);
      dup_line = line;
      first_line = std::get<1>(keys[i - 1]);
    }
  }
  if (dup_line != 0)
    return make_error(path + ":" + std::to_string(dup_line) + ": duplicate route " +
                      describe(entries[dup]) + " (first on line " + std::to_string(first_line) +
                      ")");
  return entries;
}

}  // namespace fulcrum
