#include "elements/l2/ether_rewrite.hh"

#include <sstream>
#include <string>
#include <vector>

namespace fulcrum {
namespace {

constexpr size_t kEntryWords = 3;    // PORT SRC DST
constexpr size_t kDefaultWords = 2;  // SRC DST

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

std::string bad_mac(const std::string& text) {
  return "expected " + std::string(type_name<MacAddr>()) + ", got '" + text + "'";
}

}  // namespace

Status EtherRewrite::configure(Args& args) {
  std::string fallback;
  args.key("DEFAULT", fallback, "\"SRC DST\": the addresses for ports not listed");
  std::vector<std::string> entries =
      args.rest("\"PORT SRC DST\"",
                "the source and destination Ethernet addresses for port PORT (below 32); "
                "at least one unless DEFAULT");
  if (Status s = args.finish(); !s) return s;

  // SRC and DST into the frame's order: destination first.
  auto set = [](Addrs& a, const MacAddr& src, const MacAddr& dst) {
    std::memcpy(a.dst_src.data(), dst.b, RTE_ETHER_ADDR_LEN);
    std::memcpy(a.dst_src.data() + RTE_ETHER_ADDR_LEN, src.b, RTE_ETHER_ADDR_LEN);
    a.valid = true;
  };

  default_ = Addrs{};
  if (!fallback.empty()) {
    std::vector<std::string> w = split_words(fallback);
    if (w.size() != kDefaultWords)
      return args.error("DEFAULT: expected 'SRC DST', got '" + fallback + "'");
    MacAddr src, dst;
    if (!parse_value(w[0], src)) return args.error("DEFAULT: " + bad_mac(w[0]));
    if (!parse_value(w[1], dst)) return args.error("DEFAULT: " + bad_mac(w[1]));
    set(default_, src, dst);
  }
  if (entries.empty() && !default_.valid)
    return args.error("expected at least one 'PORT SRC DST' argument or DEFAULT");

  std::array<bool, RTE_MAX_ETHPORTS> listed{};
  table_.fill(default_);
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string where = "argument " + std::to_string(i + 1) + ": ";
    std::vector<std::string> w = split_words(entries[i]);
    if (w.size() != kEntryWords)
      return args.error(where + "expected 'PORT SRC DST', got '" + entries[i] + "'");
    uint16_t port = 0;
    if (!parse_value(w[0], port))
      return args.error(where + "expected port number, got '" + w[0] + "'");
    if (port >= table_.size())
      return args.error(where + "port " + w[0] + " out of range (at most " +
                        std::to_string(table_.size() - 1) + ")");
    if (listed[port]) return args.error(where + "port " + w[0] + " listed twice");
    MacAddr src, dst;
    if (!parse_value(w[1], src)) return args.error(where + bad_mac(w[1]));
    if (!parse_value(w[2], dst)) return args.error(where + bad_mac(w[2]));
    set(table_[port], src, dst);
    listed[port] = true;
  }
  return {};
}

}  // namespace fulcrum
