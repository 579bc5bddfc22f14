// Rule thresholds (threshold:, detection_filter:) as Suricata applies them
// (detect-engine-threshold.c, ThresholdHandlePacket): per rule and tracked address (source,
// destination, both, or the rule alone), a window of `seconds` opened by the first match, and a
// count of the matches in it. Times are nanoseconds from the clock the Matcher is given.
#pragma once

#include <cstdint>

#include "lib/ids/bounded_table.hh"
#include "lib/ids/packet_view.hh"
#include "lib/ids/rule.hh"

namespace fulcrum::ids {

// What a threshold counts: the rule and the tracked addresses (IPv4 as {0, address}).
struct TrackKey {
  Ip6Addr a, b;
  uint32_t rule = 0;
  uint8_t family = 0;  // 4 or 6; 0 for by_rule

  bool operator==(const TrackKey& o) const {
    return a.hi == o.a.hi && a.lo == o.a.lo && b.hi == o.b.hi && b.lo == o.b.lo && rule == o.rule &&
           family == o.family;
  }
  uint64_t hash() const {
    return mix64(a.hi ^ mix64(a.lo ^ mix64(b.hi ^ mix64(b.lo ^ (uint64_t{rule} << 8 | family)))));
  }
};

inline TrackKey track_key(Track t, uint32_t rule, const PacketView& v) {
  TrackKey k;
  k.rule = rule;
  if (t == Track::kByRule) return k;
  k.family = v.ipv6() ? 6 : 4;
  const Ip6Addr src = v.ipv6() ? v.src6() : Ip6Addr{0, v.src};
  const Ip6Addr dst = v.ipv6() ? v.dst6() : Ip6Addr{0, v.dst};
  k.a = t == Track::kByDst ? dst : src;
  if (t == Track::kByBoth) k.b = dst;
  return k;
}

struct ThresholdEntry {
  uint64_t first_ns = 0;  // the window's start (Suricata's tv1)
  uint32_t count = 0;
};

// Whether a match of a rule with threshold `t` at `now_ns` alerts, given its entry (`fresh`: just
// created for this match). Suricata's rules, window end included (`now <= first + seconds`):
//   limit:     alert on the first `count` matches of a window;
//   threshold: alert on every `count`-th match of a window (the count restarts at 0 after an
//              alert, the window does not);
//   both:      alert once a window, on its `count`-th match;
//   detection_filter: alert on every match after the `count`-th of a window.
// A match past the window opens a new one with count 1 (limit alerts on it; both alerts when
// count is 1). threshold with count 1 alerts on every match without an entry (caller).
inline bool threshold_alerts(const Threshold& t, ThresholdEntry& e, bool fresh, uint64_t now_ns) {
  constexpr uint64_t kNsPerSecond = 1'000'000'000;
  if (fresh) {
    e.first_ns = now_ns;
    e.count = 1;
    return t.type == ThresholdType::kLimit || (t.type == ThresholdType::kBoth && t.count == 1);
  }
  if (now_ns > e.first_ns + uint64_t{t.seconds} * kNsPerSecond) {
    e.first_ns = now_ns;
    e.count = 1;
    return t.type == ThresholdType::kLimit || (t.type == ThresholdType::kBoth && t.count == 1);
  }
  ++e.count;
  switch (t.type) {
    case ThresholdType::kLimit:
      return e.count <= t.count;
    case ThresholdType::kThreshold:
      if (e.count < t.count) return false;
      e.count = 0;
      return true;
    case ThresholdType::kBoth:
      return e.count == t.count;
    case ThresholdType::kDetectionFilter:
      return e.count > t.count;
    case ThresholdType::kNone:
      break;
  }
  return true;
}

}  // namespace fulcrum::ids
