// Args: declarative parsing of an element's configuration arguments (Click's Args idiom).
//
//   Args& a = ...;
//   a.positional("FILE", file_, "route file").key("OFFSET", offset_, "where to look");
//   return a.finish();
//
// An argument is either positional ("routes.txt") or a keyword ("OFFSET 12": an upper-case word,
// a space, the value). Values are parsed by parse_value(text, T&) overloads. Errors name the
// file:line:column of the element, the element and the key.
//
// Every argument carries its help text, so the manual is what configure() reads: an Args made by
// Args::describe() parses nothing, records each argument (name, type, default: the variable's
// value before parsing, help) and fails at finish(), so configure stops before acting on values.
// `fulcrum elements NAME` prints the record.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/location.hh"
#include "core/result.hh"

namespace fulcrum {

struct MacAddr {
  uint8_t b[6];
};

bool parse_value(std::string_view s, std::string& out);
bool parse_value(std::string_view s, int64_t& out);
bool parse_value(std::string_view s, uint32_t& out);
bool parse_value(std::string_view s, uint16_t& out);
bool parse_value(std::string_view s, int& out);
bool parse_value(std::string_view s, double& out);
bool parse_value(std::string_view s, bool& out);
bool parse_value(std::string_view s, MacAddr& out);
// IPv4 address in host byte order.
bool parse_ipv4(std::string_view s, uint32_t& out);

std::string format_value(const std::string& v);
std::string format_value(bool v);
std::string format_value(double v);
std::string format_value(const MacAddr& v);
template <class T>
requires std::is_integral_v<T> std::string format_value(T v) {
  return std::to_string(v);
}

template <class T>
constexpr std::string_view type_name() {
  if constexpr (std::is_same_v<T, std::string>) return "string";
  if constexpr (std::is_same_v<T, bool>) return "boolean (true/false)";
  if constexpr (std::is_same_v<T, double>) return "number";
  if constexpr (std::is_same_v<T, MacAddr>) return "Ethernet address (xx:xx:xx:xx:xx:xx)";
  if constexpr (std::is_integral_v<T>) return "integer";
  return "value";
}

// One argument as configure() reads it (Args::describe()).
struct ArgDoc {
  enum class Kind : uint8_t { kPositional, kKeyword, kRest };
  Kind kind;
  std::string name;
  std::string type;
  std::string default_value;  // empty when required
  bool required;
  std::string help;
};

class Args {
 public:
  Args(const std::vector<std::string>& raw, SourceLoc loc, std::string element_name,
       std::string_view class_name);

  // An Args that records the arguments instead of parsing them (see the top of this file).
  static Args describe(std::string_view class_name);
  bool describing() const { return describing_; }
  const std::vector<ArgDoc>& docs() const { return docs_; }

  // Next positional argument into `out`.
  template <class T>
  Args& positional(std::string_view key, T& out, std::string_view help, bool required = true) {
    if (describing_)
      return record(ArgDoc::Kind::kPositional, key, type_name<T>(), out, help, required);
    if (!error_.empty()) return *this;
    if (next_positional_ >= positional_.size()) {
      if (required) fail(key, "missing required argument");
      return *this;
    }
    const std::string& text = positional_[next_positional_++];
    if (!parse_value(text, out)) bad_value(key, text, type_name<T>());
    return *this;
  }

  // Next positional argument naming a file the element reads: a relative path is taken from
  // the folder of the pipeline file (so a configuration runs from any directory) and comes back
  // absolute; an absolute path, or any path of a pipeline given as text, stays as written.
  Args& positional_file(std::string_view key, std::string& out, std::string_view help);

  // Keyword argument "KEY file" naming a file the element reads, found as positional_file's.
  Args& key_file(std::string_view key, std::string& out, std::string_view help);

  // Keyword argument "KEY value" into `out` (left unchanged when absent and not required).
  template <class T>
  Args& key(std::string_view key, T& out, std::string_view help, bool required = false) {
    if (describing_)
      return record(ArgDoc::Kind::kKeyword, key, type_name<T>(), out, help, required);
    if (!error_.empty()) return *this;
    std::optional<std::string> text = take_keyword(key);
    if (!text) {
      if (required) fail(key, "missing required keyword");
      return *this;
    }
    if (!parse_value(*text, out)) bad_value(key, *text, type_name<T>());
    return *this;
  }

  // Every remaining positional argument (for elements with a variable argument list), each
  // described as `key`.
  std::vector<std::string> rest(std::string_view key, std::string_view help);

  // Error if any argument was not consumed, or an earlier step failed; always an error when
  // describing.
  Status finish();

  // An error of the element's own, formatted like the others.
  Error error(std::string_view what) const;
  const SourceLoc& loc() const { return loc_; }

 private:
  // A relative `path` of a pipeline file, made absolute from the file's folder.
  void relative_to_pipeline(std::string& path) const;

  template <class T>
  Args& record(ArgDoc::Kind kind, std::string_view key, std::string_view type, const T& out,
               std::string_view help, bool required) {
    docs_.push_back({kind, std::string(key), std::string(type),
                     required ? std::string() : format_value(out), required, std::string(help)});
    return *this;
  }
  std::optional<std::string> take_keyword(std::string_view key);
  std::string unknown_keyword(const std::string& key) const;
  void fail(std::string_view key, std::string_view what);
  void bad_value(std::string_view key, std::string_view text, std::string_view expected);

  std::vector<std::string> positional_;
  std::vector<std::pair<std::string, std::string>> keywords_;
  std::vector<bool> keyword_used_;
  std::vector<std::string> asked_;  // the keywords the element looked for (for "did you mean")
  size_t next_positional_ = 0;
  SourceLoc loc_;
  std::string element_;
  std::string class_;
  std::string error_;
  bool describing_ = false;
  std::vector<ArgDoc> docs_;
};

}  // namespace fulcrum
