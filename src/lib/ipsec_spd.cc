#include "lib/ipsec_spd.hh"

#include <arpa/inet.h>

#include <charconv>
#include <utility>

#include "core/shared_storage.hh"
#include "core/table_slot.hh"
#include "lib/table_file.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMaxPrefixLen = 32;
constexpr uint32_t kMaxPrefixLen6 = 128;
constexpr size_t kIp6Bytes = 16;
constexpr uint32_t kMaxProto = 255;
constexpr uint32_t kMaxIcmpField = 255;
constexpr uint32_t kMinSpi = 256;  // RFC 4303 2.1: 1..255 reserved
constexpr int kDecimalBase = 10;
constexpr int kHexBase = 16;
constexpr size_t kMaxKeys = 8;
const char* const kExpected =
    "expected 'PROTECT|BYPASS|DISCARD [SRC P] [DST P] [PROTO p] [SPORT r] [DPORT r] [TYPE r] "
    "[CODE r]' (P: A.B.C.D/LEN or X:X::X/LEN; PROTECT also [SPI N]) or "
    "'DEFAULT PROTECT|BYPASS|DISCARD'";
const char* const kSelectors = "SRC, DST, PROTO, SPORT, DPORT, TYPE, CODE, SPI";

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_number(std::string_view s, uint32_t max, uint32_t& out) {
  if (!all_digits(s)) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size() && out <= max;
}

bool parse_action(std::string_view s, SpdAction& out) {
  if (s == "PROTECT")
    out = SpdAction::kProtect;
  else if (s == "BYPASS")
    out = SpdAction::kBypass;
  else if (s == "DISCARD")
    out = SpdAction::kDiscard;
  else
    return false;
  return true;
}

// "A.B.C.D/LEN" (family kSpdIpv4: addr, mask) or "X:X::X/LEN" (kSpdIpv6: addr6, len6);
// returns the error or "".
std::string parse_prefix(std::string_view key, std::string_view s, uint8_t& family, uint32_t& addr,
                         uint32_t& mask, Addr6& addr6, uint8_t& len6) {
  const size_t slash = s.find('/');
  const std::string text(s.substr(0, slash));
  uint32_t len = 0;
  in_addr a{};
  uint8_t a6[kIp6Bytes];
  const bool has_len = slash != std::string_view::npos;
  if (has_len && inet_pton(AF_INET, text.c_str(), &a) == 1 &&
      parse_number(s.substr(slash + 1), kMaxPrefixLen, len)) {
    family = kSpdIpv4;
    addr = ntohl(a.s_addr);
    mask = len == 0 ? 0 : ~uint32_t{0} << (kMaxPrefixLen - len);
    if ((addr & ~mask) != 0) return "host bits set in " + std::string(key) + " " + std::string(s);
    return {};
  }
  if (!has_len || inet_pton(AF_INET6, text.c_str(), a6) != 1 ||
      !parse_number(s.substr(slash + 1), kMaxPrefixLen6, len))
    return std::string(key) + " '" + std::string(s) + "' is not A.B.C.D/LEN or X:X::X/LEN";
  family = kSpdIpv6;
  addr6 = Addr6::from_bytes(a6);
  len6 = static_cast<uint8_t>(len);
  if (addr6.masked(len) != addr6)
    return "host bits set in " + std::string(key) + " " + std::string(s);
  return {};
}

// "N", "LO-HI" or "any" within 0..max; returns the error or "".
std::string parse_range(std::string_view key, std::string_view s, uint32_t max, uint16_t& lo,
                        uint16_t& hi) {
  uint32_t a = 0, b = max;
  const size_t dash = s.find('-');
  bool ok = s == "any";
  if (!ok && dash == std::string_view::npos) {
    ok = parse_number(s, max, a);
    b = a;
  } else if (!ok) {
    ok = parse_number(s.substr(0, dash), max, a) && parse_number(s.substr(dash + 1), max, b);
  }
  if (!ok)
    return std::string(key) + " '" + std::string(s) + "' is not N, LO-HI or any (0.." +
           std::to_string(max) + ")";
  if (a > b) return std::string(key) + " '" + std::string(s) + "': LO is above HI";
  lo = static_cast<uint16_t>(a);
  hi = static_cast<uint16_t>(b);
  return {};
}

std::string parse_spi(std::string_view s, uint32_t& spi) {
  std::string_view digits = s;
  int base = kDecimalBase;
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
    base = kHexBase;
  }
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), spi, base);
  if (digits.empty() || ec != std::errc() || end != digits.data() + digits.size())
    return "SPI '" + std::string(s) + "' is not a number";
  if (spi < kMinSpi)
    return "SPI " + std::string(s) + " is reserved (use 256..4294967295, RFC 4303 2.1)";
  return {};
}

std::string parse_proto(std::string_view s, uint16_t& proto) {
  uint32_t n = 0;
  if (s == "any")
    proto = kSpdAnyProto;
  else if (s == "tcp")
    proto = kIpProtoTcp;
  else if (s == "udp")
    proto = kIpProtoUdp;
  else if (s == "icmp")
    proto = kIpProtoIcmp;
  else if (s == "icmp6")
    proto = kIpProtoIcmp6;
  else if (parse_number(s, kMaxProto, n))
    proto = static_cast<uint16_t>(n);
  else
    return "PROTO '" + std::string(s) + "' is not any, tcp, udp, icmp, icmp6 or 0..255";
  return {};
}

// The selectors after the action; returns the error or "".
std::string parse_selectors(const std::vector<std::string_view>& f, SpdRule& r, SpdPrefixes6& r6) {
  uint8_t src_family = kSpdAnyFamily, dst_family = kSpdAnyFamily;
  std::string_view seen[kMaxKeys];
  size_t nseen = 0;
  bool has_ports = false, has_icmp = false;
  for (size_t i = 1; i < f.size(); i += 2) {
    const std::string_view key = f[i];
    if (i + 1 == f.size())
      return "selector '" + std::string(key) + "' has no value (" + kSelectors + ")";
    for (size_t k = 0; k < nseen; ++k)
      if (seen[k] == key) return "selector " + std::string(key) + " given twice";
    const std::string_view value = f[i + 1];
    std::string err;
    if (key == "SRC") {
      err = parse_prefix(key, value, src_family, r.src, r.src_mask, r6.src, r6.src_len);
    } else if (key == "DST") {
      err = parse_prefix(key, value, dst_family, r.dst, r.dst_mask, r6.dst, r6.dst_len);
    } else if (key == "PROTO") {
      err = parse_proto(value, r.proto);
    } else if (key == "SPORT" || key == "DPORT") {
      has_ports = true;
      err = key == "SPORT" ? parse_range(key, value, UINT16_MAX, r.sport_lo, r.sport_hi)
                           : parse_range(key, value, UINT16_MAX, r.dport_lo, r.dport_hi);
    } else if (key == "SPI") {
      if (r.action != SpdAction::kProtect) return "SPI names the SA of a PROTECT rule only";
      err = parse_spi(value, r.spi);
    } else if (key == "TYPE" || key == "CODE") {
      has_icmp = true;
      err = key == "TYPE" ? parse_range(key, value, kMaxIcmpField, r.sport_lo, r.sport_hi)
                          : parse_range(key, value, kMaxIcmpField, r.dport_lo, r.dport_hi);
    } else {
      return "unknown selector '" + std::string(key) + "' (" + kSelectors + ")";
    }
    if (!err.empty()) return err;
    seen[nseen++] = key;
  }
  if (has_ports && r.proto != kIpProtoTcp && r.proto != kIpProtoUdp)
    return "SPORT and DPORT need PROTO tcp or udp";
  if (has_icmp && r.proto != kIpProtoIcmp && r.proto != kIpProtoIcmp6)
    return "TYPE and CODE need PROTO icmp or icmp6";
  if (src_family != kSpdAnyFamily && dst_family != kSpdAnyFamily && src_family != dst_family)
    return "SRC and DST are not the same address family (both IPv4 or both IPv6)";
  r.family = src_family != kSpdAnyFamily ? src_family : dst_family;
  if (has_ports && has_icmp) return "SPORT/DPORT and TYPE/CODE cannot be mixed";
  r.ports = has_ports || has_icmp;
  return {};
}

}  // namespace

Result<SpdConfig> parse_spd_file(std::string_view text, const std::string& path) {
  SpdConfig cfg;
  uint32_t default_line = 0;
  Status read = for_each_table_line(
      text, path, [&](std::string_view content, uint32_t line_no, std::string* error) {
        const std::vector<std::string_view> f = split(content);
        if (f[0] == "DEFAULT") {
          if (f.size() != 2) {
            *error = std::string(kExpected) + ", got " + quote_excerpt(content);
            return false;
          }
          if (default_line != 0) {
            *error = "DEFAULT given twice (first on line " + std::to_string(default_line) + ")";
            return false;
          }
          if (!parse_action(f[1], cfg.default_action)) {
            *error = "DEFAULT '" + std::string(f[1]) + "' is not PROTECT, BYPASS or DISCARD";
            return false;
          }
          default_line = line_no;
          return true;
        }
        SpdRule r;
        SpdPrefixes6 r6;
        if (!parse_action(f[0], r.action)) {
          *error = "unknown action '" + std::string(f[0]) + "'; " + kExpected;
          return false;
        }
        if (std::string err = parse_selectors(f, r, r6); !err.empty()) {
          *error = std::move(err);
          return false;
        }
        if (cfg.rules.size() == SpdTable::kMaxRules) {
          *error = "more than " + std::to_string(SpdTable::kMaxRules) + " rules";
          return false;
        }
        cfg.rules.push_back(r);
        cfg.prefixes6.push_back(r6);
        cfg.lines.push_back(line_no);
        return true;
      });
  if (!read) return make_error(read.error());
  return cfg;
}

std::shared_ptr<SpdTable> SpdTable::build(SpdConfig config) {
  auto t = std::make_shared<SpdTable>();
  t->rules_ = std::move(config.rules);
  t->prefixes6_ = std::move(config.prefixes6);
  t->prefixes6_.resize(t->rules_.size());
  t->default_ = config.default_action;
  return t;
}

Result<std::shared_ptr<SpdTable>> SpdTable::load(const std::string& path) {
  Result<std::string> text = read_table_file(path, "security policy file");
  if (!text) return make_error(text.error());
  Result<SpdConfig> cfg = parse_spd_file(text.value(), path);
  if (!cfg) return make_error(cfg.error());
  return build(std::move(cfg.value()));
}

Result<std::shared_ptr<TableSlot<SpdTable>>> get_spd_slot(SharedStorage* shared,
                                                          const std::string& path,
                                                          const std::string& where) {
  Result<std::shared_ptr<TableSlot<SpdTable>>> slot =
      shared_table_slot<SpdTable>(shared, "ipsec-spd:" + path, "IPsec policies", path,
                                  [](const std::string& file) { return SpdTable::load(file); });
  if (!slot) return make_error(where + slot.error());
  return slot;
}

}  // namespace fulcrum
