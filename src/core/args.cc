#include "core/args.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "core/suggest.hh"

namespace fulcrum {
namespace {

bool is_keyword(std::string_view word) {
  if (word.empty() || !std::isupper(static_cast<unsigned char>(word[0]))) return false;
  for (char c : word)
    if (!(std::isupper(static_cast<unsigned char>(c)) ||
          std::isdigit(static_cast<unsigned char>(c)) || c == '_'))
      return false;
  return true;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

template <class T>
bool parse_int(std::string_view s, T& out) {
  s = trim(s);
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    base = 16;
    s.remove_prefix(2);
  }
  T v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return false;
  out = v;
  return true;
}

}  // namespace

std::string format_value(const std::string& v) {
  return v.empty() ? "none" : v;
}
std::string format_value(bool v) {
  return v ? "true" : "false";
}
std::string format_value(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}
std::string format_value(const MacAddr& v) {
  char buf[18];
  std::snprintf(buf, sizeof buf, "%02x:%02x:%02x:%02x:%02x:%02x", v.b[0], v.b[1], v.b[2], v.b[3],
                v.b[4], v.b[5]);
  return buf;
}

bool parse_value(std::string_view s, std::string& out) {
  out = std::string(trim(s));
  return true;
}
bool parse_value(std::string_view s, int64_t& out) {
  return parse_int(s, out);
}
bool parse_value(std::string_view s, uint32_t& out) {
  return parse_int(s, out);
}
bool parse_value(std::string_view s, uint16_t& out) {
  return parse_int(s, out);
}
bool parse_value(std::string_view s, int& out) {
  return parse_int(s, out);
}

bool parse_value(std::string_view s, double& out) {
  std::string t(trim(s));
  if (t.empty()) return false;
  char* end = nullptr;
  double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return false;  // nan, inf, 1e400
  out = v;
  return true;
}

bool parse_value(std::string_view s, bool& out) {
  s = trim(s);
  if (s == "true" || s == "1" || s == "yes") return out = true, true;
  if (s == "false" || s == "0" || s == "no") return out = false, true;
  return false;
}

bool parse_value(std::string_view s, MacAddr& out) {
  s = trim(s);
  if (s.size() != 17) return false;
  for (int i = 0; i < 6; ++i) {
    if (i > 0 && s[i * 3 - 1] != ':') return false;
    unsigned v = 0;
    auto [p, ec] = std::from_chars(s.data() + i * 3, s.data() + i * 3 + 2, v, 16);
    if (ec != std::errc() || p != s.data() + i * 3 + 2) return false;
    out.b[i] = static_cast<uint8_t>(v);
  }
  return true;
}

bool parse_ipv4(std::string_view s, uint32_t& out) {
  std::string t(trim(s));
  in_addr a{};
  if (inet_pton(AF_INET, t.c_str(), &a) != 1) return false;
  out = ntohl(a.s_addr);
  return true;
}

Args& Args::positional_file(std::string_view key, std::string& out, std::string_view help) {
  if (describing_) {
    docs_.push_back({ArgDoc::Kind::kPositional, std::string(key),
                     "file relative to the pipeline's folder", "", true, std::string(help)});
    return *this;
  }
  positional(key, out, help);
  if (error_.empty()) relative_to_pipeline(out);
  return *this;
}

Args& Args::key_file(std::string_view key, std::string& out, std::string_view help) {
  if (describing_) {
    docs_.push_back({ArgDoc::Kind::kKeyword, std::string(key),
                     "file relative to the pipeline's folder", format_value(out), false,
                     std::string(help)});
    return *this;
  }
  this->key(key, out, help);
  if (error_.empty()) relative_to_pipeline(out);
  return *this;
}

void Args::relative_to_pipeline(std::string& path) const {
  if (path.empty() || path.front() == '/' || loc_.file.empty()) return;
  std::error_code ec;
  const std::filesystem::path folder =
      std::filesystem::absolute(std::filesystem::path(loc_.file), ec).parent_path();
  if (!ec) path = (folder / path).lexically_normal().string();
}

Args::Args(const std::vector<std::string>& raw, SourceLoc loc, std::string element_name,
           std::string_view class_name)
    : loc_(std::move(loc)), element_(std::move(element_name)), class_(class_name) {
  for (const std::string& arg : raw) {
    std::string_view t = trim(arg);
    size_t sp = t.find_first_of(" \t\n");
    if (sp != std::string_view::npos && is_keyword(t.substr(0, sp))) {
      keywords_.emplace_back(std::string(t.substr(0, sp)), std::string(trim(t.substr(sp))));
    } else if (!t.empty()) {
      positional_.emplace_back(t);
    }
  }
  keyword_used_.assign(keywords_.size(), false);
}

Args Args::describe(std::string_view class_name) {
  Args a({}, SourceLoc{}, std::string(class_name), class_name);
  a.describing_ = true;
  return a;
}

std::optional<std::string> Args::take_keyword(std::string_view key) {
  if (std::find(asked_.begin(), asked_.end(), key) == asked_.end()) asked_.emplace_back(key);
  for (size_t i = 0; i < keywords_.size(); ++i) {
    if (keywords_[i].first == key && !keyword_used_[i]) {
      keyword_used_[i] = true;
      return keywords_[i].second;
    }
  }
  return std::nullopt;
}

std::vector<std::string> Args::rest(std::string_view key, std::string_view help) {
  if (describing_) {
    docs_.push_back({ArgDoc::Kind::kRest, std::string(key), "list", "", false, std::string(help)});
    return {};
  }
  std::vector<std::string> out(positional_.begin() + static_cast<long>(next_positional_),
                               positional_.end());
  next_positional_ = positional_.size();
  return out;
}

Error Args::error(std::string_view what) const {
  return make_error(loc_.str() + ": " + element_ + " :: " + class_ + ": " + std::string(what));
}

void Args::fail(std::string_view key, std::string_view what) {
  if (error_.empty()) error_ = std::string(key) + ": " + std::string(what);
}

void Args::bad_value(std::string_view key, std::string_view text, std::string_view expected) {
  fail(key, "expected " + std::string(expected) + ", got '" + std::string(text) + "'");
}

std::string Args::unknown_keyword(const std::string& key) const {
  std::string out = "unknown keyword '" + key + "'" + did_you_mean(key, asked_) + "; " + class_;
  if (asked_.empty()) return out + " takes no keywords";
  out += " takes ";
  for (size_t i = 0; i < asked_.size(); ++i) out += (i ? ", " : "") + asked_[i];
  return out;
}

Status Args::finish() {
  if (describing_) return error("described, not configured");
  if (!error_.empty()) return error(error_);
  if (next_positional_ < positional_.size())
    return error("unexpected argument '" + positional_[next_positional_] + "'");
  for (size_t i = 0; i < keywords_.size(); ++i)
    if (!keyword_used_[i]) return error(unknown_keyword(keywords_[i].first));
  return {};
}

}  // namespace fulcrum
