// IDS rules: the Snort/Suricata subset Fulcrum understands (docs/ids.md), as parsed from a rule
// file. A rule is
//
//   alert PROTO SRC SPORT -> DST DPORT (msg:"..."; content:"..."; nocase; offset:N; depth:N;
//                                        pcre:"/re/flags"; sid:N; rev:N;)
//
// with `<>` for either direction. Matching against packets is in rule_engine.hh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum::ids {

enum class Proto : uint8_t { kIp, kTcp, kUdp, kIcmp };

inline constexpr uint8_t kIpProtoIcmp = 1;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;

// An address list: `any`, A.B.C.D, A.B.C.D/LEN, [item,item,...], each item optionally `!`-negated,
// the whole optionally `!`-negated. An address matches when it is in a positive item (or there
// are none) and in no negated item; then the outer negation applies.
struct AddrItem {
  uint32_t net = 0;  // host byte order, masked
  uint32_t mask = 0;
  bool negated = false;
};
struct AddrSet {
  std::vector<AddrItem> items;  // empty: any
  bool negated = false;

  bool contains(uint32_t addr) const {
    bool positive = false, any_positive = false;
    for (const AddrItem& it : items) {
      const bool in = (addr & it.mask) == it.net;
      if (it.negated) {
        if (in) return negated;
      } else {
        any_positive = true;
        positive |= in;
      }
    }
    return (positive || !any_positive) != negated;
  }
};

// A port list: `any`, N, N:M, :M, N:, [item,...], with the same negation rules as addresses.
struct PortItem {
  uint16_t lo = 0;
  uint16_t hi = 0;
  bool negated = false;
};
struct PortSet {
  std::vector<PortItem> items;  // empty: any
  bool negated = false;

  bool contains(uint16_t port) const {
    bool positive = false, any_positive = false;
    for (const PortItem& it : items) {
      const bool in = port >= it.lo && port <= it.hi;
      if (it.negated) {
        if (in) return negated;
      } else {
        any_positive = true;
        positive |= in;
      }
    }
    return (positive || !any_positive) != negated;
  }
};

// content:"..." (with |hex| bytes), its modifiers nocase, offset, depth, and `!` negation.
struct Content {
  std::string bytes;
  bool nocase = false;
  bool negated = false;
  uint32_t offset = 0;
  uint32_t depth = 0;  // 0: no depth limit
};

// pcre:"/expr/flags" with flags among i, s, m (Hyperscan CASELESS, DOTALL, MULTILINE).
struct Pcre {
  std::string expr;
  bool caseless = false;
  bool dotall = false;
  bool multiline = false;
};

struct Rule {
  uint32_t sid = 0;
  uint32_t rev = 0;
  uint32_t line = 0;  // line in the rule file
  std::string msg;
  Proto proto = Proto::kIp;
  AddrSet src, dst;
  PortSet sport, dport;
  bool bidirectional = false;  // `<>`
  std::vector<Content> contents;
  std::vector<Pcre> pcres;
};

// A rule of a rule file that was not loaded (Suricata's behaviour: the rest still loads), with
// the Snort/Suricata feature it needs that Fulcrum lacks ("flow", "action drop", "protocol
// http", "address variables", "pcre: Hyperscan") or "malformed", and the full reason.
struct SkippedRule {
  uint32_t line = 0;
  std::string feature;
  std::string reason;
};

}  // namespace fulcrum::ids
