// IPsec security policy database (RFC 4301 §4.4.1): ordered rules over IPv4 selectors, the
// first rule that matches a packet decides PROTECT, BYPASS or DISCARD.
//
// File format, one rule a line (# comments and blank lines are ignored):
//
//   ACTION [SELECTOR VALUE]...
//   PROTECT SRC 10.1.0.0/16 DST 10.2.0.0/16
//   BYPASS  PROTO udp DPORT 500                 # IKE
//   DISCARD PROTO tcp DPORT 135-139
//   PROTECT SPI 8192 PROTO tcp DPORT 22
//   PROTECT PROTO icmp TYPE 8
//   DEFAULT BYPASS
//
//   ACTION   PROTECT (encapsulate: IPsecPolicy's output 0), BYPASS (pass in the clear: output
//            1) or DISCARD (drop)
//   SPI N    PROTECT only: the outbound SA to use, 256..4294967295 (decimal or 0x-hex), set in
//            the packet's annotation for IPsecESPEncap(POLICY_SPI true); without it the SA is
//            the one whose selector matches the inner destination. The SA file is not read
//            here: an SPI it lacks drops the packet at IPsecESPEncap (no-sa).
//   Selectors, in any order, each at most once; one left out matches anything:
//   SRC P    source prefix A.B.C.D/LEN (host bits zero)
//   DST P    destination prefix A.B.C.D/LEN
//   PROTO p  any, tcp, udp, icmp or a protocol number 0..255
//   SPORT r  source port: N, LO-HI (inclusive) or any; only with PROTO tcp or udp (6, 17)
//   DPORT r  destination port, likewise
//   TYPE r   ICMP type: N, LO-HI or any; only with PROTO icmp (1)
//   CODE r   ICMP code, likewise
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

namespace fulcrum {

enum class SpdAction : uint8_t { kProtect, kBypass, kDiscard };

// What IPsecPolicy's SPD_FILE argument is (its manual).
inline constexpr std::string_view kSpdFileHelp =
    "security policy file (src/lib/ipsec_spd.hh: ordered rules 'PROTECT|BYPASS|DISCARD [SRC "
    "P] [DST P] [PROTO p] [SPORT r] [DPORT r] [TYPE r] [CODE r]', first match wins, and "
    "'DEFAULT ACTION', DISCARD unless given), loaded once per process and shared by the workers";

inline constexpr uint16_t kSpdAnyProto = 0x100;
// The annotation slot (PacketAnno::user[4]) where IPsecPolicy puts the SPI a PROTECT rule names
// (0: none) and IPsecESPEncap(POLICY_SPI true) reads it.
inline constexpr uint32_t kPolicySpiSlot = 4;
inline constexpr uint8_t kIpProtoIcmp = 1;
inline constexpr uint8_t kIpProtoTcp = 6;
inline constexpr uint8_t kIpProtoUdp = 17;

// The fields of a packet the selectors look at (host byte order). For ICMP, sport and dport
// hold the type and the code.
struct SpdPacket {
  uint32_t src = 0;
  uint32_t dst = 0;
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
  bool ports = false;                            // a port or type/code selector was given
  SpdAction action = SpdAction::kDiscard;
  uint32_t spi = 0;  // PROTECT: the SA named by the rule; 0 for the destination's selector

  bool matches(const SpdPacket& p) const {
    if ((p.src & src_mask) != src || (p.dst & dst_mask) != dst) return false;
    if (proto != kSpdAnyProto && proto != p.proto) return false;
    if (!ports) return true;
    return p.has_ports && p.sport >= sport_lo && p.sport <= sport_hi && p.dport >= dport_lo &&
           p.dport <= dport_hi;
  }
};

static_assert(sizeof(SpdRule) == 32, "two rules a cache line: the scan's footprint");

struct SpdConfig {
  std::vector<SpdRule> rules;
  std::vector<uint32_t> lines;  // each rule's line in the file
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
      if (rules_[i].matches(p)) return i;
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
  SpdAction default_action() const { return default_; }

 private:
  std::vector<SpdRule> rules_;
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
