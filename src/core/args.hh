// Args: declarative parsing of an element's configuration arguments (Click's Args idiom).
//
//   Args& a = ...;
//   a.positional("FILE", file_).key("OFFSET", offset_).key("ANNO", anno_, /*required=*/false);
//   return a.finish();
//
// An argument is either positional ("routes.txt") or a keyword ("OFFSET 12": an upper-case word,
// a space, the value). Values are parsed by parse_value(text, T&) overloads. Errors name the
// file:line:column of the element, the element and the key.
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

template <class T>
constexpr std::string_view type_name() {
  if constexpr (std::is_same_v<T, std::string>) return "string";
  if constexpr (std::is_same_v<T, bool>) return "boolean (true/false)";
  if constexpr (std::is_same_v<T, double>) return "number";
  if constexpr (std::is_same_v<T, MacAddr>) return "Ethernet address (xx:xx:xx:xx:xx:xx)";
  if constexpr (std::is_integral_v<T>) return "integer";
  return "value";
}

class Args {
 public:
  Args(const std::vector<std::string>& raw, SourceLoc loc, std::string element_name,
       std::string_view class_name);

  // Next positional argument into `out`.
  template <class T>
  Args& positional(std::string_view key, T& out, bool required = true) {
    if (!error_.empty()) return *this;
    if (next_positional_ >= positional_.size()) {
      if (required) fail(key, "missing required argument");
      return *this;
    }
    const std::string& text = positional_[next_positional_++];
    if (!parse_value(text, out)) bad_value(key, text, type_name<T>());
    return *this;
  }

  // Keyword argument "KEY value" into `out` (left unchanged when absent and not required).
  template <class T>
  Args& key(std::string_view key, T& out, bool required = false) {
    if (!error_.empty()) return *this;
    std::optional<std::string> text = take_keyword(key);
    if (!text) {
      if (required) fail(key, "missing required keyword");
      return *this;
    }
    if (!parse_value(*text, out)) bad_value(key, *text, type_name<T>());
    return *this;
  }

  // Every remaining positional argument (for elements with a variable argument list).
  std::vector<std::string> rest();

  // Error if any argument was not consumed, or an earlier step failed.
  Status finish();

  // An error of the element's own, formatted like the others.
  Error error(std::string_view what) const;
  const SourceLoc& loc() const { return loc_; }

 private:
  std::optional<std::string> take_keyword(std::string_view key);
  void fail(std::string_view key, std::string_view what);
  void bad_value(std::string_view key, std::string_view text, std::string_view expected);

  std::vector<std::string> positional_;
  std::vector<std::pair<std::string, std::string>> keywords_;
  std::vector<bool> keyword_used_;
  size_t next_positional_ = 0;
  SourceLoc loc_;
  std::string element_;
  std::string class_;
  std::string error_;
};

}  // namespace fulcrum
