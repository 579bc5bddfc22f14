// IDS rules: the Snort/Suricata subset Fulcrum understands (docs/ids.md), as parsed from a rule
// file. A rule is
//
//   alert PROTO SRC SPORT -> DST DPORT (msg:"..."; content:"..."; nocase; offset:N; depth:N;
//                                        distance:N; within:N; pcre:"/re/flags"; sid:N; rev:N;
//                                        threshold:...; flowbits:...; flow:...;)
//
// with `<>` for either direction. Matching against packets is in rule_engine.hh.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fulcrum::ids {

// kIcmp matches ICMPv4 and ICMPv6 (Suricata's `icmp`), kIcmpv4 and kIcmpv6 one of them.
enum class Proto : uint8_t { kIp, kTcp, kUdp, kIcmp, kIcmpv4, kIcmpv6 };

inline constexpr uint8_t kIpProtoIcmp = 1;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr uint8_t kIpProtoIcmpv6 = 58;

// Whether a list of items (addresses or ports) holds a value: it is in a positive item (or there
// are none) and in no negated item. `in(item)` says whether the value is in the item.
template <class Item, class In>
bool list_holds(const std::vector<Item>& items, In in) {
  bool positive = false, any_positive = false;
  for (const Item& it : items) {
    if (it.negated) {
      if (in(it)) return false;
    } else {
      any_positive = true;
      positive = positive || in(it);
    }
  }
  return positive || !any_positive;
}

// An IPv6 address as two 64-bit halves in host byte order (hi: the first 8 bytes).
struct Ip6Addr {
  uint64_t hi = 0;
  uint64_t lo = 0;
};

// An address list: `any`, A.B.C.D[/LEN], X:X::X[/LEN], [item,item,...], each item optionally
// `!`-negated, the whole optionally `!`-negated. Items are kept per family. An address is looked
// up among the items of its family only: it matches when it is in a positive item (or there are
// none) and in no negated item; then the outer negation applies. A list without an item of the
// address's family (other than `any`, which has no items) never matches it, negated or not:
// Suricata's address groups are per family too, and `!10.0.0.0/8` holds no IPv6 address there
// (DetectAddressMergeNot completes a negated-only family with 0.0.0.0/0 or ::/0, never the
// other family).
struct AddrItem {
  uint32_t net = 0;  // host byte order, masked
  uint32_t mask = 0;
  bool negated = false;
};
struct AddrItem6 {
  Ip6Addr net;  // masked
  Ip6Addr mask;
  bool negated = false;
};
struct AddrSet {
  std::vector<AddrItem> items;    // IPv4 items
  std::vector<AddrItem6> items6;  // IPv6 items; both empty: any
  bool negated = false;

  bool any() const { return items.empty() && items6.empty(); }

  bool contains(uint32_t addr) const {
    if (items.empty() && !items6.empty()) return false;
    return list_holds(items, [addr](const AddrItem& it) { return (addr & it.mask) == it.net; }) !=
           negated;
  }
  bool contains(const Ip6Addr& a) const {
    if (items6.empty() && !items.empty()) return false;
    return list_holds(items6, [&a](const AddrItem6& it) {
             return (a.hi & it.mask.hi) == it.net.hi && (a.lo & it.mask.lo) == it.net.lo;
           }) != negated;
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
    return list_holds(items, [port](const PortItem& it) {
             return port >= it.lo && port <= it.hi;
           }) != negated;
  }
};

// content:"..." (with |hex| bytes), its modifiers nocase, offset, depth, distance, within, and
// `!` negation. A content with distance or within is relative: it is looked for after the end of
// the previous positive content's match (Suricata's buffer offset; the domain's start when there
// is none), at least `distance` bytes after it (negative allowed), ending at most `distance +
// within` bytes after it. offset/depth and distance/within do not mix on one content.
struct Content {
  std::string bytes;
  bool nocase = false;
  bool negated = false;
  uint32_t offset = 0;
  uint32_t depth = 0;     // 0: no depth limit
  bool absolute = false;  // offset or depth given
  bool has_distance = false;
  bool has_within = false;
  int32_t distance = 0;
  int32_t within = 0;
  // The next payload option (content or pcre) is a content with `within` (Suricata's
  // DETECT_CONTENT_WITHIN_NEXT): when the rest of the chain fails, the next occurrence of this
  // content is tried.
  bool within_next = false;

  bool relative() const { return has_distance || has_within; }
};

// pcre:"/expr/flags" with flags among i, s, m (Hyperscan CASELESS, DOTALL, MULTILINE).
struct Pcre {
  std::string expr;
  bool caseless = false;
  bool dotall = false;
  bool multiline = false;
};

// threshold:type limit|threshold|both, track by_src|by_dst|by_both|by_rule, count N, seconds M
// and detection_filter:track ..., count N, seconds M (threshold.hh applies them).
enum class ThresholdType : uint8_t { kNone, kLimit, kThreshold, kBoth, kDetectionFilter };
enum class Track : uint8_t { kBySrc, kByDst, kByBoth, kByRule };
struct Threshold {
  ThresholdType type = ThresholdType::kNone;
  Track track = Track::kBySrc;
  uint32_t count = 0;
  uint32_t seconds = 0;
};

// flowbits:set|unset|toggle|isset|isnotset,NAME (flowbits:noalert is Rule::noalert). isset and
// isnotset are conditions of the match; set, unset and toggle act on the packet's flow when the
// rule matches (Suricata's post-match list).
enum class FlowbitCmd : uint8_t { kSet, kUnset, kToggle, kIsset, kIsnotset };
struct Flowbit {
  FlowbitCmd cmd = FlowbitCmd::kSet;
  std::string name;

  bool reads() const { return cmd == FlowbitCmd::kIsset || cmd == FlowbitCmd::kIsnotset; }
};

// flow:OPTION,... (Suricata's detect-flow.c): the direction of the packet in its flow
// (to_server: from the client) and whether the flow is established (TCP: the 3-way handshake
// completed; other protocols: packets seen both ways). Matcher::update_flow keeps the state.
// `stateless` adds no condition; `only_stream` and `no_stream` choose what a tcp rule's contents
// and pcres inspect (docs/ids.md: the reassembled stream only, or each packet's payload only).
enum class FlowDir : uint8_t { kAny, kToServer, kToClient };
enum class FlowEstablished : uint8_t { kAny, kEstablished, kNotEstablished };
enum class FlowStream : uint8_t { kAny, kOnlyStream, kNoStream };
struct FlowCond {
  bool given = false;  // the rule has flow: (it then never matches a non-first fragment)
  FlowDir dir = FlowDir::kAny;
  FlowEstablished established = FlowEstablished::kAny;
  FlowStream stream = FlowStream::kAny;

  // Whether matching needs the per-flow state (a direction or the established state).
  bool stateful() const { return dir != FlowDir::kAny || established != FlowEstablished::kAny; }
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
  Threshold threshold;
  std::vector<Flowbit> flowbits;
  bool noalert = false;  // flowbits:noalert: the rule acts on flowbits and never alerts
  FlowCond flow;

  bool relative_contents() const {
    for (const Content& c : contents)
      if (c.relative()) return true;
    return false;
  }
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
