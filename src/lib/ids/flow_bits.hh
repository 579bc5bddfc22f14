// Per-flow state: flowbits (one bit per flowbit name of the rule set) and the state of the flow
// keyword (the client end; TCP's handshake; the directions seen). A flow is the packet's
// protocol and its two (address, port) endpoints in either order, so both directions of a
// connection share their entry; protocols without ports (ICMP, non-first fragments, ...) are
// keyed by protocol and addresses. The table (BoundedTable) is per worker.
#pragma once

#include <cstdint>

#include "lib/ids/bounded_table.hh"
#include "lib/ids/packet_view.hh"

namespace fulcrum::ids {

struct FlowKey {
  Ip6Addr a, b;  // the lower endpoint first; IPv4 as {0, address}
  uint16_t pa = 0, pb = 0;
  uint8_t proto = 0;
  uint8_t family = 0;  // 4 or 6

  bool operator==(const FlowKey& o) const {
    return a.hi == o.a.hi && a.lo == o.a.lo && b.hi == o.b.hi && b.lo == o.b.lo && pa == o.pa &&
           pb == o.pb && proto == o.proto && family == o.family;
  }
  uint64_t hash() const {
    constexpr int kPortShift = 16, kProtoShift = 32, kFamilyShift = 40;
    const uint64_t small = uint64_t{pa} | (uint64_t{pb} << kPortShift) |
                           (uint64_t{proto} << kProtoShift) | (uint64_t{family} << kFamilyShift);
    return mix64(a.hi ^ mix64(a.lo ^ mix64(b.hi ^ mix64(b.lo ^ small))));
  }
};

// The packet's flow, the same for both directions; `src_first` (when given) receives whether the
// packet's source is the key's first end `a`.
inline FlowKey flow_key(const PacketView& v, bool* src_first = nullptr) {
  FlowKey k;
  k.proto = v.proto;
  k.family = v.ipv6() ? 6 : 4;
  const Ip6Addr src = v.ipv6() ? v.src6() : Ip6Addr{0, v.src};
  const Ip6Addr dst = v.ipv6() ? v.dst6() : Ip6Addr{0, v.dst};
  auto below = [](const Ip6Addr& x, uint16_t xp, const Ip6Addr& y, uint16_t yp) {
    if (x.hi != y.hi) return x.hi < y.hi;
    if (x.lo != y.lo) return x.lo < y.lo;
    return xp < yp;
  };
  if (below(dst, v.dport, src, v.sport)) {
    k.a = dst, k.pa = v.dport, k.b = src, k.pb = v.sport;
  } else {
    k.a = src, k.pa = v.sport, k.b = dst, k.pb = v.dport;
  }
  if (src_first != nullptr) *src_first = k.a.hi == src.hi && k.a.lo == src.lo && k.pa == v.sport;
  return k;
}

// A TCP flow's session as far as `flow:established` needs it (Suricata's stream engine with
// midstream pick-up off): kNone until a SYN is seen (such a flow is never established), then
// the 3-way handshake; kClosed after a RST or a FIN from both ends (a new SYN starts over).
enum class TcpState : uint8_t { kNone, kSynSent, kSynRecv, kEstablished, kClosed };

struct FlowEntry {
  uint64_t last_ns = 0;       // the last time a flowbits rule looked at the flow
  uint64_t seen_ns = 0;       // the flow's last packet (tracked only when a rule has flow state)
  bool started = false;       // flow state: a packet was seen (fresh entries have none)
  bool client_first = false;  // the client is FlowKey's first end `a`
  bool established = false;   // TCP: the handshake completed; others: both ends sent
  TcpState tcp = TcpState::kNone;
  uint8_t ends = 0;  // kEndA, kEndB: TCP: the ends that sent a FIN; others: that sent a packet

  static constexpr uint8_t kEndA = 1, kEndB = 2;
};

}  // namespace fulcrum::ids
