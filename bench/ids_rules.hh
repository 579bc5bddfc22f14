// The synthetic rule set the IDS benchmarks share (bench/ids_bench.cc, ids_stream_bench.cc):
// kLiteralRules random 6..12-byte contents (a quarter nocase) and kRegexRules rules that add a
// pcre, over one protocol; the contents are kept so traffic can carry them.
#pragma once

#include <cstdint>
#include <random>
#include <string>
#include <string_view>
#include <vector>

namespace fulcrum::bench {

inline constexpr uint32_t kLiteralRules = 300;
inline constexpr uint32_t kRegexRules = 30;
inline constexpr uint32_t kMinPattern = 6;
inline constexpr uint32_t kMaxPattern = 12;
inline constexpr uint32_t kNocaseEvery = 4;

inline std::string random_text(std::mt19937& rng, uint32_t len) {
  constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789 ";
  std::string s(len, ' ');
  for (char& c : s) c = kAlphabet[rng() % kAlphabet.size()];
  return s;
}

struct RuleFile {
  std::string text;
  std::vector<std::string> contents;  // what a matching payload may carry
};

// `proto` is the rules' protocol (udp, tcp), `msg` the start of each rule's msg.
inline RuleFile make_rules(std::mt19937& rng, const std::string& proto, const std::string& msg) {
  RuleFile f;
  for (uint32_t i = 0; i < kLiteralRules + kRegexRules; ++i) {
    const std::string c = random_text(rng, kMinPattern + rng() % (kMaxPattern - kMinPattern + 1));
    f.contents.push_back(c);
    std::string rule = "alert " + proto + " any any -> any any (msg:\"" + msg + " " +
                       std::to_string(i) + "\"; content:\"" + c + "\";";
    if (i % kNocaseEvery == 0) rule += " nocase;";
    if (i >= kLiteralRules) rule += " pcre:\"/" + c.substr(0, 3) + "[a-z0-9 ]*/\";";
    f.text += rule + " sid:" + std::to_string(i + 1) + ";)\n";
  }
  return f;
}

}  // namespace fulcrum::bench
