// IPsec security policy database (RFC 4301 §4.4.1): ordered rules over IPv4 and IPv6 selectors,
// the first rule that matches a packet decides PROTECT, BYPASS or DISCARD.
//
// File format, one rule a line (# comments and blank lines are ignored):
//
//   ACTION [SELECTOR VALUE]...
//   PROTECT SRC 10.1.0.0/16 DST 10.2.0.0/16
//   BYPASS  PROTO udp DPORT 500                 # IKE
//   DISCARD PROTO tcp DPORT 135-139
//   PROTECT SPI 8192 PROTO tcp DPORT 22
//   PROTECT PROTO icmp TYPE 8
//   PROTECT SRC 2001:db8:1::/48 DST 2001:db8:2::/48 PROTO tcp DPORT 443
//   BYPASS  PROTO icmp6 TYPE 133-137            # IPv6 neighbour discovery
//   DEFAULT BYPASS
//
//   ACTION   PROTECT (encapsulate: IPsecPolicy's output 0), BYPASS (pass in the clear: output
//            1) or DISCARD (drop)
//   SPI N    PROTECT only: the outbound SA to use, 256..4294967295 (decimal or 0x-hex), set in
//            the packet's annotation for IPsecESPEncap(POLICY_SPI true); without it the SA is
//            the one whose selector matches the inner destination. The SA file is not read
//            here: an SPI it lacks drops the packet at IPsecESPEncap (no-sa).
//   Selectors, in any order, each at most once; one left out matches anything:
//   SRC P    source prefix A.B.C.D/LEN or X:X::X/LEN (host bits zero)
//   DST P    destination prefix, likewise; SRC and DST of one rule are of one family
//   PROTO p  any, tcp, udp, icmp, icmp6 or a protocol number 0..255; for IPv6 packets the
//            protocol is the next header after the extension headers (hop-by-hop, routing,
//            fragment, destination options: lib/ip6_ext.hh)
//   SPORT r  source port: N, LO-HI (inclusive) or any; only with PROTO tcp or udp (6, 17)
//   DPORT r  destination port, likewise
//   TYPE r   ICMP type: N, LO-HI or any; only with PROTO icmp (1) or icmp6 (58)
//   CODE r   ICMP code, likewise
//   A rule with IPv4 prefixes matches IPv4 packets only, one with IPv6 prefixes IPv6 packets
//   only, and one without SRC and DST both.
//   DEFAULT ACTION   what a packet no rule matches gets; at most one such line, anywhere in the
//            file. Without it, DISCARD (RFC 4301 §4.4.1: traffic no policy names is discarded).
//
// Ports and ICMP type/code are read from the first fragment (or an unfragmented packet); a
// non-initial fragment carries none (RFC 4301 §4.4.1.1 calls them OPAQUE), so rules with port or
// type/code selectors do not match it, and rules without them do.
//
// Matching is a scan of the rules in file order: O(rules) per packet, a handful of compares per
// rule over one 32-byte record each (16 rules fit in eight cache lines). That is the model RFC
// 4301 describes (an ordered list, no decorrelation needed) and fast enough for gateway SPDs of
// tens of rules; kMaxRules bounds the scan. A larger SPD would need a classifier (decision tree
// or tuple-space search over decorrelated rules), which is not built.
//
// Errors name the file and line: PATH:LINE: expected '...', got '...'; bad action, prefix,
// protocol, port or type range, SPI; a repeated selector or DEFAULT; ports without tcp/udp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "lib/ip6_table.hh"

namespace fulcrum {

enum class SpdAction : uint8_t { kProtect, kBypass, kDiscard };

// What IPsecPolicy's SPD_FILE argument is (its manual).
inline constexpr std::string_view kSpdFileHelp =
    "security policy file (src/lib/ipsec_spd.hh: ordered rules 'PROTECT|BYPASS|DISCARD [SRC "
    "P] [DST P] [PROTO p] [SPORT r] [DPORT r] [TYPE r] [CODE r]', IPv4 or IPv6 prefixes, first "
    "match wins, and 'DEFAULT ACTION', DISCARD unless given), loaded once per process and "
    "shared by the workers";

inline constexpr uint16_t kSpdAnyProto = 0x100;
// The annotation slot (PacketAnno::user[4]) where IPsecPolicy puts the SPI a PROTECT rule names
// (0: none) and IPsecESPEncap(POLICY_SPI true) reads it.
inline constexpr uint32_t kPolicySpiSlot = 4;
inline constexpr uint8_t kIpProtoIcmp = 1;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;
inline constexpr uint8_t kIpProtoIcmp6 = 58;
// The address family of a packet, or of a rule's prefixes (kSpdAnyFamily: the rule has none).
inline constexpr uint8_t kSpdAnyFamily = 0;
inline constexpr uint8_t kSpdIpv4 = 1;
inline constexpr uint8_t kSpdIpv6 = 2;

// The fields of a packet the selectors look at (host byte order). For ICMP, sport and dport
// hold the type and the code.
struct SpdPacket {
  uint8_t family = kSpdIpv4;
  uint32_t src = 0;  // IPv4
  uint32_t dst = 0;
  Addr6 src6, dst6;  // IPv6
  uint8_t proto = 0;
  bool has_ports = false;  // false for a non-initial fragment or a protocol without ports
  uint16_t sport = 0;
  uint16_t dport = 0;
};

struct SpdRule {
  uint32_t src = 0, src_mask = 0;
  uint32_t dst = 0, dst_mask = 0;
  uint16_t proto = kSpdAnyProto;                 // a protocol number or kSpdAnyProto
  uint16_t sport_lo = 0, sport_hi = UINT16_MAX;  // ICMP: the type
  uint16_t dport_lo = 0, dport_hi = UINT16_MAX;  // ICMP: the code
  uint8_t ports : 1 = 0;                         // a port or type/code selector was given
  uint8_t family : 2 = kSpdAnyFamily;            // of its prefixes: IPv6 ones are in SpdPrefixes6
  SpdAction action = SpdAction::kDiscard;
  uint32_t spi = 0;  // PROTECT: the SA named by the rule; 0 for the destination's selector

  // Everything but the IPv6 prefixes of a kSpdIpv6 rule (its masks here are 0).
  bool matches(const SpdPacket& p) const {
    if (family != kSpdAnyFamily && family != p.family) return false;
    if ((p.src & src_mask) != src || (p.dst & dst_mask) != dst) return false;
    if (proto != kSpdAnyProto && proto != p.proto) return false;
    if (!ports) return true;
    return p.has_ports && p.sport >= sport_lo && p.sport <= sport_hi && p.dport >= dport_lo &&
           p.dport <= dport_hi;
  }
};

static_assert(sizeof(SpdRule) == 32, "two rules a cache line: the scan's footprint");

// The IPv6 SRC and DST prefixes of a rule (len 0: any), beside the rules (read only for
// kSpdIpv6 rules, so IPv4 scans keep their footprint).
struct SpdPrefixes6 {
  Addr6 src, dst;
  uint8_t src_len = 0, dst_len = 0;

  bool matches(const SpdPacket& p) const {
    return p.src6.masked(src_len) == src && p.dst6.masked(dst_len) == dst;
  }
};

struct SpdConfig {
  std::vector<SpdRule> rules;
  std::vector<SpdPrefixes6> prefixes6;  // one per rule
  std::vector<uint32_t> lines;          // each rule's line in the file
  SpdAction default_action = SpdAction::kDiscard;
};

// Parses an SPD file's contents; `path` only names the file in error messages.
Result<SpdConfig> parse_spd_file(std::string_view text, const std::string& path);

class SpdTable {
 public:
  static constexpr size_t kMaxRules = 4096;
  static constexpr size_t kDefaultRule = SIZE_MAX;

  static Result<std::shared_ptr<SpdTable>> load(const std::string& path);
  static std::shared_ptr<SpdTable> build(SpdConfig config);

  // The index of the first rule matching `p`, or kDefaultRule.
  size_t match(const SpdPacket& p) const {
    for (size_t i = 0; i < rules_.size(); ++i)
      if (rules_[i].matches(p) && (rules_[i].family != kSpdIpv6 || prefixes6_[i].matches(p)))
        return i;
    return kDefaultRule;
  }
  SpdAction action(size_t rule) const {
    return rule == kDefaultRule ? default_ : rules_[rule].action;
  }
  SpdAction lookup(const SpdPacket& p) const { return action(match(p)); }
  // The SPI a PROTECT rule names, 0 for none (and for the default).
  uint32_t spi(size_t rule) const { return rule == kDefaultRule ? 0 : rules_[rule].spi; }

  size_t size() const { return rules_.size(); }
  const SpdRule& rule(size_t i) const { return rules_[i]; }
  const SpdPrefixes6& prefixes6(size_t i) const { return prefixes6_[i]; }
  SpdAction default_action() const { return default_; }

 private:
  std::vector<SpdRule> rules_;
  std::vector<SpdPrefixes6> prefixes6_;
  SpdAction default_ = SpdAction::kDiscard;
};

// The reloadable slot holding the table for `path` (shared storage key "ipsec-spd:PATH"), or
// one of the caller's own when `shared` is null. Errors are prefixed with `where`.
class SharedStorage;
template <class T>
class TableSlot;
Result<std::shared_ptr<TableSlot<SpdTable>>> get_spd_slot(SharedStorage* shared,
                                                          const std::string& path,
                                                          const std::string& where);

}  // namespace fulcrum
