#include "lib/ids/rule_parser.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>
#include <string>

#include "core/args.hh"
#include "lib/table_file.hh"

namespace fulcrum::ids {
namespace {

constexpr uint32_t kMaxPrefixLen = 32;
constexpr uint32_t kMaxPrefixLen6 = 128;
constexpr uint32_t kBitsPerByte = 8;
constexpr uint32_t kMaxPort = 0xFFFF;
constexpr int kNibbleBits = 4;

std::string quote(std::string_view s) {
  return quote_excerpt(s);
}

bool parse_u32(std::string_view s, uint32_t& out) {
  if (s.empty()) return false;
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// The next blank-separated word of `s` (consumed).
std::string_view next_word(std::string_view& s) {
  s = trim_blanks(s);
  size_t end = 0;
  while (end < s.size() && s[end] != ' ' && s[end] != '\t') ++end;
  std::string_view w = s.substr(0, end);
  s.remove_prefix(end);
  return w;
}

// Splits "[a,b,c]" (or a single item) into items; false when brackets do not balance.
bool split_list(std::string_view s, std::vector<std::string_view>& items) {
  if (s.empty()) return false;
  if (s.front() != '[') {
    items.push_back(s);
    return true;
  }
  if (s.back() != ']' || s.size() < 3) return false;
  s = s.substr(1, s.size() - 2);
  size_t pos = 0;
  while (pos <= s.size()) {
    size_t comma = s.find(',', pos);
    if (comma == std::string_view::npos) comma = s.size();
    const std::string_view item = s.substr(pos, comma - pos);
    if (item.empty()) return false;
    items.push_back(item);
    pos = comma + 1;
  }
  return true;
}

// An IPv6 address in any inet_pton form.
bool parse_ipv6(std::string_view s, Ip6Addr& out) {
  constexpr size_t kIp6Bytes = 16, kHalf = 8;
  char text[INET6_ADDRSTRLEN + 1];
  if (s.empty() || s.size() >= sizeof text) return false;
  s.copy(text, s.size());
  text[s.size()] = '\0';
  uint8_t bytes[kIp6Bytes];
  if (inet_pton(AF_INET6, text, bytes) != 1) return false;
  out.hi = out.lo = 0;
  for (size_t k = 0; k < kHalf; ++k) {
    out.hi = (out.hi << kBitsPerByte) | bytes[k];
    out.lo = (out.lo << kBitsPerByte) | bytes[kHalf + k];
  }
  return true;
}

// The mask of a /len prefix in one 64-bit half whose first bit is bit `first` of the address.
uint64_t half_mask(uint32_t len, uint32_t first) {
  constexpr uint32_t kHalfBits = 64;
  if (len <= first) return 0;
  if (len >= first + kHalfBits) return ~uint64_t{0};
  return ~uint64_t{0} << (kHalfBits - (len - first));
}

// One address item without its '!': A.B.C.D[/LEN] or X:X::X[/LEN] (an IPv6 address has a ':').
bool parse_addr_item(std::string_view item, bool negated, AddrSet& out) {
  const bool v6 = item.find(':') != std::string_view::npos;
  const uint32_t max_len = v6 ? kMaxPrefixLen6 : kMaxPrefixLen;
  uint32_t len = max_len;
  const size_t slash = item.find('/');
  if (slash != std::string_view::npos) {
    if (!parse_u32(item.substr(slash + 1), len) || len > max_len) return false;
    item = item.substr(0, slash);
  }
  if (item.empty()) return false;
  if (v6) {
    AddrItem6 a;
    a.negated = negated;
    Ip6Addr addr;
    if (!parse_ipv6(item, addr)) return false;
    constexpr uint32_t kLoFirst = 64;
    a.mask = {half_mask(len, 0), half_mask(len, kLoFirst)};
    a.net = {addr.hi & a.mask.hi, addr.lo & a.mask.lo};
    out.items6.push_back(a);
    return true;
  }
  AddrItem a;
  a.negated = negated;
  uint32_t addr = 0;
  if (!parse_ipv4(item, addr)) return false;
  a.mask = len == 0 ? 0 : ~uint32_t{0} << (kMaxPrefixLen - len);
  a.net = addr & a.mask;
  out.items.push_back(a);
  return true;
}

bool parse_addr(std::string_view s, AddrSet& out) {
  if (!s.empty() && s.front() == '!') {
    out.negated = true;
    s.remove_prefix(1);
  }
  if (s == "any") return true;
  std::vector<std::string_view> items;
  if (!split_list(s, items)) return false;
  for (std::string_view item : items) {
    const bool negated = !item.empty() && item.front() == '!';
    if (negated) item.remove_prefix(1);
    if (!parse_addr_item(item, negated, out)) return false;
  }
  return true;
}

bool parse_port_number(std::string_view s, uint16_t& out) {
  uint32_t v = 0;
  if (!parse_u32(s, v) || v > kMaxPort) return false;
  out = static_cast<uint16_t>(v);
  return true;
}

bool parse_ports(std::string_view s, PortSet& out) {
  if (!s.empty() && s.front() == '!') {
    out.negated = true;
    s.remove_prefix(1);
  }
  if (s == "any") return true;
  std::vector<std::string_view> items;
  if (!split_list(s, items)) return false;
  for (std::string_view item : items) {
    PortItem p;
    if (!item.empty() && item.front() == '!') {
      p.negated = true;
      item.remove_prefix(1);
    }
    const size_t colon = item.find(':');
    if (colon == std::string_view::npos) {
      if (!parse_port_number(item, p.lo)) return false;
      p.hi = p.lo;
    } else {
      const std::string_view lo = item.substr(0, colon), hi = item.substr(colon + 1);
      if (lo.empty() && hi.empty()) return false;
      p.hi = static_cast<uint16_t>(kMaxPort);
      if (!lo.empty() && !parse_port_number(lo, p.lo)) return false;
      if (!hi.empty() && !parse_port_number(hi, p.hi)) return false;
      if (p.lo > p.hi) return false;
    }
    out.items.push_back(p);
  }
  return true;
}

// A quoted option value: `"..."` with backslash escapes removed. false when not quoted.
bool unquote(std::string_view v, std::string& out) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return false;
  v = v.substr(1, v.size() - 2);
  out.clear();
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '\\' && i + 1 < v.size())
      ++i;
    else if (v[i] == '"')
      return false;
    out.push_back(v[i]);
  }
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Content text with |hex| segments ("|0d 0a|GET") into bytes.
bool decode_content(std::string_view s, std::string& out, std::string* error) {
  out.clear();
  size_t i = 0;
  while (i < s.size()) {
    if (s[i] != '|') {
      out.push_back(s[i++]);
      continue;
    }
    const size_t end = s.find('|', i + 1);
    if (end == std::string_view::npos) {
      *error = "content: expected a closing '|' after the hex bytes";
      return false;
    }
    std::string_view hex = s.substr(i + 1, end - i - 1);
    int nibbles = 0, value = 0;
    for (char c : hex) {
      if (c == ' ') {
        if (nibbles % 2 != 0) break;
        continue;
      }
      const int d = hex_digit(c);
      if (d < 0) {
        *error = "content: expected hex digits between '|', got " + quote(hex);
        return false;
      }
      value = (value << kNibbleBits) | d;
      if (++nibbles % 2 == 0) {
        out.push_back(static_cast<char>(value));
        value = 0;
      }
    }
    if (nibbles % 2 != 0 || nibbles == 0) {
      *error = "content: expected pairs of hex digits between '|', got " + quote(hex);
      return false;
    }
    i = end + 1;
  }
  if (out.empty()) {
    *error = "content: expected at least one byte";
    return false;
  }
  return true;
}

bool parse_pcre(std::string_view v, Pcre& out, std::string* error) {
  // The regex keeps its backslashes (\/ \" \; are regex escapes too).
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') {
    *error = "pcre: expected \"/regex/flags\"";
    return false;
  }
  const std::string text(v.substr(1, v.size() - 2));
  if (text.size() < 2 || text.front() != '/' || text.rfind('/') == 0) {
    *error = "pcre: expected \"/regex/flags\"";
    return false;
  }
  const size_t last = text.rfind('/');
  out.expr = text.substr(1, last - 1);
  for (char f : std::string_view(text).substr(last + 1)) {
    switch (f) {
      case 'i':
        out.caseless = true;
        break;
      case 's':
        out.dotall = true;
        break;
      case 'm':
        out.multiline = true;
        break;
      default:
        *error = std::string("pcre: unsupported flag '") + f + "' (supported: i, s, m)";
        return false;
    }
  }
  if (out.expr.empty()) {
    *error = "pcre: expected a non-empty regex";
    return false;
  }
  return true;
}

// threshold:"type T, track K, count N, seconds M" (detection_filter: no type), in any order.
bool parse_threshold(const std::string& name, std::string_view v, Threshold& out,
                     std::string* error, std::string* feature) {
  const bool filter = name == "detection_filter";
  if (out.type != ThresholdType::kNone) {
    *error = name + ": a rule takes one threshold or detection_filter";
    return false;
  }
  bool have_type = filter, have_track = false, have_count = false, have_seconds = false;
  out.type = filter ? ThresholdType::kDetectionFilter : ThresholdType::kNone;
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string_view::npos) comma = v.size();
    std::string_view item = trim_blanks(v.substr(pos, comma - pos));
    pos = comma + 1;
    const std::string_view key = next_word(item);
    const std::string_view value = trim_blanks(item);
    if (key == "type" && !filter) {
      have_type = true;
      if (value == "limit")
        out.type = ThresholdType::kLimit;
      else if (value == "threshold")
        out.type = ThresholdType::kThreshold;
      else if (value == "both")
        out.type = ThresholdType::kBoth;
      else {
        *error = name + ": expected type limit, threshold or both, got " + quote(value);
        return false;
      }
    } else if (key == "track") {
      have_track = true;
      if (value == "by_src")
        out.track = Track::kBySrc;
      else if (value == "by_dst")
        out.track = Track::kByDst;
      else if (value == "by_both")
        out.track = Track::kByBoth;
      else if (value == "by_rule")
        out.track = Track::kByRule;
      else {
        if (value == "by_flow") *feature = name + " track by_flow";
        *error = name + ": expected track by_src, by_dst, by_both or by_rule, got " + quote(value);
        return false;
      }
    } else if (key == "count" || key == "seconds") {
      (key == "count" ? have_count : have_seconds) = true;
      if (!parse_u32(value, key == "count" ? out.count : out.seconds)) {
        *error = name + ": " + std::string(key) + ": expected a non-negative integer, got " +
                 quote(value);
        return false;
      }
    } else {
      *error = name + ": expected " + (filter ? "" : "type, ") + "track, count or seconds, got " +
               quote(key);
      return false;
    }
  }
  if (!have_type || !have_track || !have_count || !have_seconds) {
    *error = name + ": expected " + (filter ? "" : "type, ") + "track, count and seconds";
    return false;
  }
  return true;
}

// flowbits:CMD,NAME or flowbits:noalert.
bool parse_flowbits(std::string_view v, Rule& r, std::string* error, std::string* feature) {
  const size_t comma = v.find(',');
  const std::string_view cmd = trim_blanks(v.substr(0, comma));
  const std::string_view name =
      comma == std::string_view::npos ? std::string_view() : trim_blanks(v.substr(comma + 1));
  if (cmd == "noalert") {
    if (!name.empty()) {
      *error = "flowbits: expected no name after noalert";
      return false;
    }
    r.noalert = true;
    return true;
  }
  static const std::pair<const char*, FlowbitCmd> kCmds[] = {{"set", FlowbitCmd::kSet},
                                                             {"unset", FlowbitCmd::kUnset},
                                                             {"toggle", FlowbitCmd::kToggle},
                                                             {"isset", FlowbitCmd::kIsset},
                                                             {"isnotset", FlowbitCmd::kIsnotset}};
  for (const auto& [word, c] : kCmds) {
    if (cmd != word) continue;
    if (name.empty()) {
      *error = "flowbits: expected a name after " + std::string(cmd);
      return false;
    }
    if (name.find_first_of("|&") != std::string_view::npos) {
      *feature = "flowbits group";
      *error = "flowbits: groups of names (" + quote(name) + ") are not supported";
      return false;
    }
    if (name.find_first_of(" \t,") != std::string_view::npos) {
      *error = "flowbits: expected one name, got " + quote(name);
      return false;
    }
    r.flowbits.push_back({c, std::string(name)});
    return true;
  }
  *error = "flowbits: expected set, unset, toggle, isset, isnotset or noalert, got " + quote(cmd);
  return false;
}

// flow:OPTION,OPTION,... (Suricata's detect-flow.c). only_frag and no_frag (reassembled
// fragments) are skipped as "flow: only_frag" / "flow: no_frag".
bool parse_flow(std::string_view v, Rule& r, std::string* error, std::string* feature) {
  if (r.flow.given) {
    *error = "flow: given twice";
    return false;
  }
  r.flow.given = true;
  bool stateless = false;
  size_t pos = 0;
  while (pos <= v.size()) {
    size_t comma = v.find(',', pos);
    if (comma == std::string_view::npos) comma = v.size();
    const std::string_view item = trim_blanks(v.substr(pos, comma - pos));
    pos = comma + 1;
    if (item == "to_server" || item == "from_client" || item == "to_client" ||
        item == "from_server") {
      if (r.flow.dir != FlowDir::kAny) {
        *error = "flow: more than one direction";
        return false;
      }
      r.flow.dir =
          item == "to_server" || item == "from_client" ? FlowDir::kToServer : FlowDir::kToClient;
    } else if (item == "established" || item == "not_established" || item == "stateless") {
      if (r.flow.established != FlowEstablished::kAny || stateless) {
        *error = "flow: more than one of established, not_established and stateless";
        return false;
      }
      stateless = item == "stateless";
      if (!stateless)
        r.flow.established = item == "established" ? FlowEstablished::kEstablished
                                                   : FlowEstablished::kNotEstablished;
    } else if (item == "only_stream" || item == "no_stream") {
      if (r.flow.stream != FlowStream::kAny) {
        *error = "flow: more than one of only_stream and no_stream";
        return false;
      }
      r.flow.stream = item == "only_stream" ? FlowStream::kOnlyStream : FlowStream::kNoStream;
    } else if (item == "only_frag" || item == "no_frag") {
      *feature = "flow: " + std::string(item);
      *error = "flow: " + std::string(item) + " needs reassembled fragments, which the IDS does " +
               "not track";
      return false;
    } else {
      *error =
          "flow: expected to_server, from_client, to_client, from_server, established, "
          "not_established, stateless, only_stream or no_stream, got " +
          quote(item);
      return false;
    }
  }
  if (r.flow.stream == FlowStream::kOnlyStream && r.proto != Proto::kTcp) {
    *feature = "flow: only_stream";
    *error = "flow: only_stream needs a tcp rule (only TCP streams are reassembled)";
    return false;
  }
  return true;
}

// Splits the option block "name:value; name; ..." into (name, value) pairs. A ';' inside a
// quoted value or escaped with a backslash does not end the option.
bool split_options(std::string_view s, std::vector<std::pair<std::string, std::string>>& out,
                   std::string* error) {
  size_t i = 0;
  while (true) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    if (i >= s.size()) return true;
    bool quoted = false;
    size_t j = i;
    for (; j < s.size(); ++j) {
      if (s[j] == '\\') {
        ++j;
      } else if (s[j] == '"') {
        quoted = !quoted;
      } else if (s[j] == ';' && !quoted) {
        break;
      }
    }
    if (j >= s.size()) {
      *error = quoted ? "expected a closing '\"'"
                      : "expected ';' after option " + quote(trim_blanks(s.substr(i)));
      return false;
    }
    const std::string_view opt = trim_blanks(s.substr(i, j - i));
    const size_t colon = opt.find(':');
    std::string name(trim_blanks(opt.substr(0, colon)));
    std::string value(colon == std::string_view::npos ? "" : trim_blanks(opt.substr(colon + 1)));
    if (name.empty()) {
      *error = "expected an option name before ';'";
      return false;
    }
    out.emplace_back(std::move(name), std::move(value));
    i = j + 1;
  }
}

// Where the payload options (content, pcre) stand while a rule's options are read, in their
// order: what relative contents are relative to.
struct PayloadOrder {
  bool last_is_pcre = false;           // the last content or pcre was a pcre
  bool last_positive_is_pcre = false;  // the last positive content or pcre was a pcre
  std::vector<bool> follows_pcre;      // per content: the option before it was a pcre
  std::vector<bool> based_on_pcre;     // per content: the last positive one before it was a pcre
};

bool apply_option(const std::string& name, const std::string& value, Rule& r, bool& have_sid,
                  PayloadOrder& order, std::string* error, std::string* feature) {
  static const char* const kIgnored[] = {"classtype", "reference", "metadata", "priority", "gid"};
  auto number = [&](uint32_t& out) {
    if (parse_u32(value, out)) return true;
    *error = name + ": expected a non-negative integer, got " + quote(value);
    return false;
  };
  auto last_content = [&]() -> Content* {
    if (r.contents.empty()) {
      *error = quote(name) + " without a preceding content";
      return nullptr;
    }
    return &r.contents.back();
  };
  if (name == "msg") {
    if (unquote(value, r.msg)) return true;
    *error = "msg: expected a quoted string";
    return false;
  }
  if (name == "content") {
    Content c;
    std::string_view v = value;
    if (!v.empty() && v.front() == '!') {
      c.negated = true;
      v = trim_blanks(v.substr(1));
    }
    std::string text;
    if (!unquote(v, text)) {
      *error = "content: expected a quoted string";
      return false;
    }
    if (!decode_content(text, c.bytes, error)) return false;
    order.follows_pcre.push_back(order.last_is_pcre);
    order.based_on_pcre.push_back(order.last_positive_is_pcre);
    order.last_is_pcre = false;
    if (!c.negated) order.last_positive_is_pcre = false;
    r.contents.push_back(std::move(c));
    return true;
  }
  if (name == "nocase") {
    Content* c = last_content();
    if (c == nullptr) return false;
    if (!value.empty()) {
      *error = "nocase: expected no value";
      return false;
    }
    c->nocase = true;
    return true;
  }
  if (name == "offset" || name == "depth") {
    Content* c = last_content();
    if (c == nullptr) return false;
    if (c->relative()) {
      *error = name +
               ": the content is relative (distance, within); offset and depth do not mix "
               "with them";
      return false;
    }
    c->absolute = true;
    uint32_t v = 0;
    if (!number(v)) return false;
    if (name == "depth" && v < c->bytes.size()) {
      *error = "depth: expected at least the content length " + std::to_string(c->bytes.size()) +
               ", got " + value;
      return false;
    }
    (name == "offset" ? c->offset : c->depth) = v;
    return true;
  }
  if (name == "distance" || name == "within") {
    Content* c = last_content();
    if (c == nullptr) return false;
    const bool within = name == "within";
    if (c->absolute) {
      *error = name + ": the content has offset or depth; distance and within do not mix with them";
      return false;
    }
    if (within ? c->has_within : c->has_distance) {
      *error = name + ": given twice for one content";
      return false;
    }
    int32_t v = 0;
    const auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
    if (value.empty() || ec != std::errc() || ptr != value.data() + value.size()) {
      *error = name + ": expected an integer, got " + quote(value);
      return false;
    }
    if (within && v < static_cast<int32_t>(c->bytes.size())) {
      *error = "within: expected at least the content length " + std::to_string(c->bytes.size()) +
               ", got " + value;
      return false;
    }
    (within ? c->within : c->distance) = v;
    (within ? c->has_within : c->has_distance) = true;
    return true;
  }
  if (name == "pcre") {
    Pcre p;
    if (!parse_pcre(value, p, error)) {
      if (const size_t at = error->find("unsupported flag '"); at != std::string::npos)
        *feature = "pcre flag " + error->substr(at + 18, 1);
      return false;
    }
    r.pcres.push_back(std::move(p));
    order.last_is_pcre = order.last_positive_is_pcre = true;
    return true;
  }
  if (name == "sid") {
    if (!number(r.sid)) return false;
    have_sid = true;
    return true;
  }
  if (name == "rev") return number(r.rev);
  if (name == "flowbits") return parse_flowbits(value, r, error, feature);
  if (name == "flow") return parse_flow(value, r, error, feature);
  if (name == "threshold" || name == "detection_filter")
    return parse_threshold(name, value, r.threshold, error, feature);
  for (const char* ignored : kIgnored)
    if (name == ignored) return true;
  *error = "unsupported option " + quote(name);
  *feature = name;
  return false;
}

}  // namespace

Result<Rule> parse_rule(std::string_view text, std::string* feature) {
  std::string ignored;
  if (feature == nullptr) feature = &ignored;
  *feature = "malformed";
  Rule r;
  std::string_view s = trim_blanks(text);
  const size_t open = s.find('(');
  if (open == std::string_view::npos) return make_error("expected '(' to open the rule options");
  if (s.back() != ')') return make_error("expected ')' at the end of the rule");
  std::string_view head = s.substr(0, open);
  const std::string_view body = s.substr(open + 1, s.size() - open - 2);

  const std::string_view action = next_word(head);
  if (action != "alert") {
    static const char* const kActions[] = {"drop",       "reject",    "pass",
                                           "log",        "rejectsrc", "rejectdst",
                                           "rejectboth", "activate",  "dynamic"};
    for (const char* a : kActions)
      if (action == a) *feature = "action " + std::string(action);
    return make_error("expected action 'alert', got " + quote(action));
  }
  const std::string_view proto = next_word(head);
  if (proto == "tcp")
    r.proto = Proto::kTcp;
  else if (proto == "udp")
    r.proto = Proto::kUdp;
  else if (proto == "icmp")
    r.proto = Proto::kIcmp;
  else if (proto == "icmpv4")
    r.proto = Proto::kIcmpv4;
  else if (proto == "icmpv6")
    r.proto = Proto::kIcmpv6;
  else if (proto == "ip")
    r.proto = Proto::kIp;
  else {
    if (!proto.empty() && std::all_of(proto.begin(), proto.end(), [](char c) {
          return std::islower(static_cast<unsigned char>(c)) ||
                 std::isdigit(static_cast<unsigned char>(c)) || c == '-';
        }))
      *feature = "protocol " + std::string(proto);
    return make_error("expected protocol tcp, udp, icmp, icmpv4, icmpv6 or ip, got " +
                      quote(proto));
  }

  const char* const kAddrForm =
      "(any, A.B.C.D, A.B.C.D/LEN, X:X::X, X:X::X/LEN or [list], optionally '!')";
  const char* const kPortForm = "(any, N, N:M or [list], optionally '!')";
  const std::string_view src = next_word(head), sport = next_word(head);
  const std::string_view dir = next_word(head);
  const std::string_view dst = next_word(head), dport = next_word(head);
  for (std::string_view field : {src, sport, dst, dport})
    if (field.find('$') != std::string_view::npos) {
      *feature = "variables";
      return make_error("got " + quote(field) +
                        " in the header: variables ($HOME_NET, $HTTP_PORTS) are not supported");
    }
  if (!parse_addr(src, r.src))
    return make_error("expected source address " + std::string(kAddrForm) + ", got " + quote(src));
  if (!parse_ports(sport, r.sport))
    return make_error("expected source port " + std::string(kPortForm) + ", got " + quote(sport));
  if (dir == "<>")
    r.bidirectional = true;
  else if (dir != "->")
    return make_error("expected '->' or '<>', got " + quote(dir));
  if (!parse_addr(dst, r.dst))
    return make_error("expected destination address " + std::string(kAddrForm) + ", got " +
                      quote(dst));
  if (!parse_ports(dport, r.dport))
    return make_error("expected destination port " + std::string(kPortForm) + ", got " +
                      quote(dport));
  if (!trim_blanks(head).empty())
    return make_error("expected '(' after the destination port, got " + quote(trim_blanks(head)));
  const bool has_ports =
      !r.sport.items.empty() || r.sport.negated || !r.dport.items.empty() || r.dport.negated;
  if (has_ports && r.proto != Proto::kTcp && r.proto != Proto::kUdp)
    return make_error("expected ports 'any' for protocol " + std::string(proto) +
                      " (ports apply to tcp and udp only)");

  std::vector<std::pair<std::string, std::string>> options;
  std::string error;
  if (!split_options(body, options, &error)) return make_error(error);
  bool have_sid = false;
  PayloadOrder order;
  for (const auto& [name, value] : options)
    if (!apply_option(name, value, r, have_sid, order, &error, feature)) return make_error(error);
  if (!have_sid) return make_error("expected a sid:N option");
  for (size_t i = 0; i < r.contents.size(); ++i) {
    const Content& c = r.contents[i];
    if (!c.relative()) continue;
    // Suricata makes a relative content relative to a pcre's match too; not supported here.
    if (order.based_on_pcre[i]) {
      *feature = "relative to pcre";
      return make_error("content " + std::to_string(i + 1) +
                        ": distance/within relative to a pcre match is not supported");
    }
    if (c.has_within && i > 0 && !order.follows_pcre[i]) r.contents[i - 1].within_next = true;
  }
  return r;
}

Result<RuleFile> parse_rule_file(std::string_view text, const std::string& path, bool strict) {
  RuleFile file;
  std::map<uint32_t, uint32_t> sid_line;
  uint32_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    const std::string_view line = trim_blanks(text.substr(pos, nl - pos));
    pos = nl + 1;
    ++line_no;
    if (line.empty() || line.front() == '#') continue;
    const std::string where = path + ":" + std::to_string(line_no) + ": ";
    std::string feature;
    Result<Rule> r = parse_rule(line, &feature);
    if (!r) {
      if (strict) return make_error(where + r.error());
      file.skipped.push_back({line_no, feature, r.error()});
      continue;
    }
    r->line = line_no;
    const auto [it, fresh] = sid_line.emplace(r->sid, line_no);
    if (!fresh) {
      const std::string why = "duplicate sid " + std::to_string(r->sid) + " (first on line " +
                              std::to_string(it->second) + ")";
      if (strict) return make_error(where + why);
      file.skipped.push_back({line_no, "duplicate sid", why});
      continue;
    }
    file.rules.push_back(std::move(r.value()));
  }
  return file;
}

Result<RuleFile> load_rule_file(const std::string& path, bool strict) {
  Result<std::string> text = read_table_file(path, "rule file");
  if (!text) return make_error(text.error());
  return parse_rule_file(text.value(), path, strict);
}

Result<std::vector<Rule>> parse_rules(std::string_view text, const std::string& path) {
  Result<RuleFile> file = parse_rule_file(text, path, true);
  if (!file) return make_error(file.error());
  return std::move(file->rules);
}

Result<std::vector<Rule>> load_rules(const std::string& path) {
  Result<RuleFile> file = load_rule_file(path, true);
  if (!file) return make_error(file.error());
  return std::move(file->rules);
}

std::string skipped_summary(const std::vector<SkippedRule>& skipped) {
  std::map<std::string, size_t> counts;
  for (const SkippedRule& s : skipped) ++counts[s.feature];
  std::vector<std::pair<std::string, size_t>> sorted(counts.begin(), counts.end());
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string out;
  for (const auto& [feature, n] : sorted)
    out += (out.empty() ? "" : ", ") + feature + " " + std::to_string(n);
  return out;
}

}  // namespace fulcrum::ids
