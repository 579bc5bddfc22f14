#include "lib/ipsec_sa.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <map>
#include <tuple>

#include "core/shared_storage.hh"
#include "core/table_slot.hh"
#include "lib/table_file.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMaxPrefixLen = 32;
constexpr uint32_t kMaxPrefixLen6 = 128;
constexpr int kHexBase = 16;
constexpr int kDecimalBase = 10;
constexpr uint32_t kNibbleBits = 4;
constexpr size_t kMinFields = 6;
constexpr size_t kMaxOptions = 7;
constexpr size_t kMaxFields = kMinFields + 2 * kMaxOptions;  // a key and a value each
constexpr uint64_t kNsPerSecond = 1000000000;
const char* const kExpected =
    "expected 'SPI TUNNEL_SRC TUNNEL_DST ENC_KEY_HEX AUTH_KEY_HEX SELECTOR_PREFIX [KEY VALUE]...'";
const char* const kOptions =
    "DIR out|in, CIPHER aes-ctr|aes-cbc|aes-gcm, ESN on|off, REPLAY N, LIFE_PACKETS SOFT,HARD, "
    "LIFE_BYTES SOFT,HARD, LIFE_SECONDS SOFT,HARD";

bool is_blank(char c) {
  return c == ' ' || c == '\t' || c == '\r';
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_blank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> split(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_blank(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && !is_blank(s[j])) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool parse_address(std::string_view s, uint32_t& out) {
  std::string t(s);
  in_addr a{};
  if (inet_pton(AF_INET, t.c_str(), &a) != 1) return false;
  out = ntohl(a.s_addr);
  return true;
}

bool parse_address6(std::string_view s, uint8_t* out) {
  std::string t(s);
  return inet_pton(AF_INET6, t.c_str(), out) == 1;
}

bool parse_u32(std::string_view s, uint32_t& out) {
  int base = kDecimalBase;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = kHexBase;
  }
  if (s.empty()) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out, base);
  return ec == std::errc() && end == s.data() + s.size();
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + kDecimalBase;
  if (c >= 'A' && c <= 'F') return c - 'A' + kDecimalBase;
  return -1;
}

bool parse_hex(std::string_view s, uint8_t* out, size_t len) {
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) s.remove_prefix(2);
  if (s.size() != 2 * len) return false;
  for (size_t i = 0; i < len; ++i) {
    const int hi = hex_digit(s[2 * i]);
    const int lo = hex_digit(s[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    out[i] = static_cast<uint8_t>(hi << kNibbleBits | lo);
  }
  return true;
}

uint32_t mask_of(uint32_t len) {
  return len == 0 ? 0 : ~uint32_t{0} << (kMaxPrefixLen - len);
}

// A LIFE_* value "SOFT,HARD", each a positive number or "-"; returns the error or "".
std::string parse_limit(std::string_view key, std::string_view value, SaLimit& out) {
  const size_t comma = value.find(',');
  auto number = [](std::string_view s, uint64_t& n) {
    if (s == "-") return true;
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
    return !s.empty() && ec == std::errc() && end == s.data() + s.size() && n > 0;
  };
  SaLimit l;
  if (comma == std::string_view::npos || !number(value.substr(0, comma), l.soft) ||
      !number(value.substr(comma + 1), l.hard))
    return std::string(key) + " '" + std::string(value) +
           "' is not SOFT,HARD (each a positive number or '-')";
  if (!l.set()) return std::string(key) + " '" + std::string(value) + "' sets no limit";
  if (l.soft != 0 && l.hard != 0 && l.soft >= l.hard)
    return std::string(key) + " '" + std::string(value) + "': SOFT must be below HARD";
  out = l;
  return {};
}

// The options after the selector (ipsec_sa.hh); returns the error or "".
std::string parse_options(const std::vector<std::string_view>& f, std::string_view content,
                          SaConfig& sa, std::string_view& cipher) {
  constexpr size_t kFirstOption = kMinFields;
  if (f.size() == kFirstOption + 1) {
    if (f[kFirstOption] == "out" || f[kFirstOption] == "in") {
      sa.dir = f[kFirstOption] == "in" ? SaDir::kIn : SaDir::kOut;
      return {};
    }
    return std::string(kExpected) + ", got " + quote_excerpt(content);
  }
  for (size_t i = kFirstOption; i < f.size(); i += 2) {
    if (i + 1 == f.size())
      return "option '" + std::string(f[i]) + "' has no value (" + kOptions + ")";
    const std::string_view key = f[i], value = f[i + 1];
    if (key == "DIR") {
      if (value != "out" && value != "in")
        return "direction '" + std::string(value) + "' is neither 'out' nor 'in'";
      sa.dir = value == "in" ? SaDir::kIn : SaDir::kOut;
    } else if (key == "ESN") {
      if (value != "on" && value != "off")
        return "ESN '" + std::string(value) + "' is neither 'on' nor 'off'";
      sa.esn = value == "on";
    } else if (key == "REPLAY") {
      uint32_t n = 0;
      if (!parse_u32(value, n) || n == 0 || n > SaConfig::kMaxReplayWindow)
        return "REPLAY '" + std::string(value) + "' is not a window of 1.." +
               std::to_string(SaConfig::kMaxReplayWindow) + " packets";
      sa.replay_window = static_cast<uint16_t>(n);
    } else if (key == "CIPHER") {
      if (value != "aes-ctr" && value != "aes-cbc" && value != "aes-gcm")
        return "CIPHER '" + std::string(value) + "' is not aes-ctr, aes-cbc or aes-gcm";
      cipher = value;
    } else if (key == "LIFE_PACKETS" || key == "LIFE_BYTES" || key == "LIFE_SECONDS") {
      SaLimit& limit = key == "LIFE_PACKETS" ? sa.life.packets
                       : key == "LIFE_BYTES" ? sa.life.bytes
                                             : sa.life.seconds;
      if (std::string err = parse_limit(key, value, limit); !err.empty()) return err;
    } else {
      return "unknown option '" + std::string(key) + "' (" + kOptions + ")";
    }
  }
  return {};
}

// The key material of ENC_KEY_HEX for `cipher` ("" when not named); returns the error or "".
std::string parse_keys(std::string_view enc, std::string_view auth, std::string_view cipher,
                       SaConfig& sa) {
  uint8_t material[kAes256KeyLen + kCtrNonceLen];
  const bool salted = cipher != "aes-cbc";  // CTR and GCM: key, then 4 bytes
  const bool unsalted = cipher.empty() || cipher == "aes-cbc";
  size_t key_len = 0;
  for (size_t k : {kAesKeyLen, kAes256KeyLen}) {
    if (salted && parse_hex(enc, material, k + kCtrNonceLen)) {
      key_len = k;
      sa.cipher = cipher == "aes-gcm" ? EspCipher::kAesGcm : EspCipher::kAesCtr;
      std::memcpy(sa.nonce, material + k, kCtrNonceLen);
    } else if (unsalted && parse_hex(enc, material, k)) {
      key_len = k;
      sa.cipher = EspCipher::kAesCbc;
    }
  }
  if (key_len == 0) {
    const std::string two = std::to_string(2 * kAesKeyLen),
                      four = std::to_string(2 * kAes256KeyLen);
    const std::string salt = std::to_string(2 * kCtrNonceLen);
    if (cipher == "aes-cbc")
      return "aes-cbc key must be " + two + " or " + four + " hex digits, got " +
             quote_excerpt(enc);
    if (!cipher.empty())
      return std::string(cipher) + " key material must be " + two + " or " + four +
             " hex digits of key and " + salt + " of " + (cipher == "aes-gcm" ? "salt" : "nonce") +
             ", got " + quote_excerpt(enc);
    return "encryption key must be " + std::to_string(2 * kEncKeyMaterialLen) +
           " hex digits (16-byte AES key + 4-byte nonce: AES-CTR) or " + two +
           " (AES-CBC), or their AES-256 lengths " + std::to_string(2 * (kAes256KeyLen + 4)) +
           " and " + four + "; got " + quote_excerpt(enc);
  }
  std::memcpy(sa.enc_key, material, key_len);
  sa.key_len = static_cast<uint8_t>(key_len);
  if (sa.cipher == EspCipher::kAesGcm) {
    if (auth != "-")
      return "aes-gcm authenticates by itself: AUTH_KEY_HEX must be '-', got " +
             quote_excerpt(auth);
    return {};
  }
  if (!parse_hex(auth, sa.auth_key, kHmacSha1KeyLen))
    return "authentication key must be " + std::to_string(2 * kHmacSha1KeyLen) +
           " hex digits (HMAC-SHA1), got " + quote_excerpt(auth);
  return {};
}

// TUNNEL_SRC and TUNNEL_DST: both IPv4 or both IPv6; returns the error or "".
std::string parse_tunnel(std::string_view src, std::string_view dst, SaConfig& sa) {
  const bool src4 = parse_address(src, sa.tunnel_src);
  const bool src6 = !src4 && parse_address6(src, sa.tunnel_src6);
  if (!src4 && !src6)
    return "tunnel source '" + std::string(src) + "' is not an IPv4 or IPv6 address";
  const bool dst4 = parse_address(dst, sa.tunnel_dst);
  const bool dst6 = !dst4 && parse_address6(dst, sa.tunnel_dst6);
  if (!dst4 && !dst6)
    return "tunnel destination '" + std::string(dst) + "' is not an IPv4 or IPv6 address";
  if (src4 != dst4)
    return "tunnel source '" + std::string(src) + "' and destination '" + std::string(dst) +
           "' are not the same address family (expected two IPv4 or two IPv6 addresses)";
  sa.tunnel6 = src6;
  return {};
}

// SELECTOR_PREFIX: A.B.C.D/LEN or X:X::X/LEN, host bits zero; returns the error or "".
std::string parse_selector(std::string_view prefix, SaConfig& sa) {
  const size_t slash = prefix.find('/');
  const std::string_view addr = prefix.substr(0, slash);
  uint32_t len = 0;
  const bool has_len = slash != std::string_view::npos && parse_u32(prefix.substr(slash + 1), len);
  if (has_len && parse_address(addr, sa.selector)) {
    if (len > kMaxPrefixLen)
      return "selector '" + std::string(prefix) + "': IPv4 prefix length above 32";
    if ((sa.selector & ~mask_of(len)) != 0)
      return "host bits set in selector " + std::string(prefix);
    sa.selector_len = static_cast<uint8_t>(len);
    return {};
  }
  uint8_t bytes[kIp6AddrLen];
  if (!has_len || !parse_address6(addr, bytes))
    return "selector '" + std::string(prefix) + "' is not A.B.C.D/LEN or X:X::X/LEN";
  if (len > kMaxPrefixLen6)
    return "selector '" + std::string(prefix) + "': IPv6 prefix length above 128";
  sa.selector6 = Addr6::from_bytes(bytes);
  if (sa.selector6.masked(len) != sa.selector6)
    return "host bits set in selector " + std::string(prefix);
  sa.selector_is6 = true;
  sa.selector_len = static_cast<uint8_t>(len);
  return {};
}

// Parses one SA line; returns the error (without "PATH:LINE: ") or "".
std::string parse_line(std::string_view content, SaConfig& sa) {
  const std::vector<std::string_view> f = split(content);
  if (f.size() < kMinFields || f.size() > kMaxFields)
    return std::string(kExpected) + ", got " + quote_excerpt(content);
  if (!parse_u32(f[0], sa.spi)) return "SPI '" + std::string(f[0]) + "' is not a number";
  if (sa.spi < kMinSpi)
    return "SPI " + std::string(f[0]) + " is reserved (use 256..4294967295, RFC 4303 2.1)";
  if (std::string err = parse_tunnel(f[1], f[2], sa); !err.empty()) return err;
  std::string_view cipher;
  if (std::string err = parse_options(f, content, sa, cipher); !err.empty()) return err;
  if (std::string err = parse_keys(f[3], f[4], cipher, sa); !err.empty()) return err;
  return parse_selector(f[5], sa);
}

std::string where(const std::string& path, uint32_t line) {
  return path + ":" + std::to_string(line) + ": ";
}

}  // namespace

namespace {

uint64_t monotonic_ns() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * kNsPerSecond + static_cast<uint64_t>(ts.tv_nsec);
}

std::atomic<SaClock> g_sa_clock{&monotonic_ns};

}  // namespace

uint64_t sa_clock_ns() {
  return g_sa_clock.load(std::memory_order_relaxed)();
}

void set_sa_clock(SaClock clock) {
  g_sa_clock.store(clock != nullptr ? clock : &monotonic_ns, std::memory_order_relaxed);
}

uint64_t SecurityAssociation::age_seconds(uint64_t now_ns) const {
  return now_ns > installed_ns ? (now_ns - installed_ns) / kNsPerSecond : 0;
}

SaLife SecurityAssociation::count_slow(uint32_t bytes, uint64_t now_ns) {
  const uint8_t state = life_state.load(std::memory_order_relaxed);
  if ((state & kHardReached) != 0) return SaLife::kExpired;
  const SaLifetime& l = cfg.life;
  bool soft = false, hard = false;
  auto check = [&](const SaLimit& limit, uint64_t value) {
    soft |= limit.soft != 0 && value >= limit.soft;
    hard |= limit.hard != 0 && value > limit.hard;
  };
  if (l.seconds.set()) {
    const uint64_t age = age_seconds(now_ns);
    soft |= l.seconds.soft != 0 && age >= l.seconds.soft;
    hard |= l.seconds.hard != 0 && age >= l.seconds.hard;
  }
  if (l.packets.set()) check(l.packets, life_packets.fetch_add(1, std::memory_order_relaxed) + 1);
  if (l.bytes.set()) check(l.bytes, life_bytes.fetch_add(bytes, std::memory_order_relaxed) + bytes);
  if (hard) return expire();
  if (!soft || (state & kSoftReached) != 0) return SaLife::kLive;
  const uint8_t was = life_state.fetch_or(kSoftReached, std::memory_order_relaxed);
  return (was & kSoftReached) != 0 ? SaLife::kLive : SaLife::kSoftNow;
}

void SecurityAssociation::report(SaLife event, const std::string& who, uint64_t now_ns) const {
  const bool hard = event == SaLife::kExpiredNow;
  std::string counts;
  if (cfg.life.packets.set())
    counts += ", " + std::to_string(life_packets.load(std::memory_order_relaxed)) + " packets";
  if (cfg.life.bytes.set())
    counts += ", " + std::to_string(life_bytes.load(std::memory_order_relaxed)) + " bytes";
  if (cfg.life.seconds.set()) counts += ", " + std::to_string(age_seconds(now_ns)) + " s";
  std::fprintf(stderr, "%s: %s SA %u (line %u) %s%s\n", who.c_str(),
               cfg.dir == SaDir::kOut ? "outbound" : "inbound", cfg.spi, cfg.line,
               hard ? "expired (hard lifetime): its packets are dropped as sa-expired"
                    : "reached its soft lifetime: rekey it",
               counts.c_str());
}

uint64_t ReplayWindow::infer_from(uint64_t top, uint32_t low) const {
  if (!esn_) return low;
  // RFC 4303 Appendix A2.2: Tl, Th the halves of the top, W the window.
  const auto tl = static_cast<uint32_t>(top);
  uint64_t th = top >> 32;
  const uint32_t bottom = tl - (size_ - 1);  // Tl - W + 1, modulo 2^32
  if (tl >= size_ - 1) {
    if (low < bottom) ++th;  // case A: below the window is the next subspace
  } else if (low >= bottom && th > 0) {
    --th;  // case B: the window reaches back into the previous subspace
  }
  return th << 32 | low;
}

bool ReplayWindow::check(uint64_t seq) const {
  if (seq == 0) return false;
  if (seq > top_) return true;
  if (top_ - seq >= size_) return false;
  return !seen(seq);
}

bool ReplayWindow::update(uint64_t seq) {
  if (!check(seq)) return false;
  if (seq > top_) {
    const uint64_t first = top_ / kBlockBits + 1, last = seq / kBlockBits;
    if (last - first + 1 >= kBlocks) {
      std::fill(std::begin(bits_), std::end(bits_), 0);
    } else {
      for (uint64_t b = first; b <= last; ++b) bits_[b % kBlocks] = 0;
    }
    top_ = seq;
  }
  bits_[(seq / kBlockBits) % kBlocks] |= uint64_t{1} << (seq % kBlockBits);
  return true;
}

void ReplayWindow::merge(const ReplayWindow& other) {
  const uint64_t span = std::min<uint64_t>(other.size_, other.top_);
  for (uint64_t s = other.top_ - span + 1; s <= other.top_ && span > 0; ++s)
    if (other.seen(s)) update(s);
}

Result<std::vector<SaConfig>> parse_sa_file(std::string_view text, const std::string& path) {
  std::vector<SaConfig> sas;
  std::map<std::pair<uint32_t, SaDir>, uint32_t> spis;
  // (family, prefix, length): a selector of each family may repeat the other's bits.
  std::map<std::tuple<bool, Addr6, uint8_t>, uint32_t> selectors;
  uint32_t line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    std::string_view line = text.substr(pos, nl - pos);
    pos = nl + 1;
    ++line_no;
    const size_t hash = line.find('#');
    const std::string_view content =
        trim(hash == std::string_view::npos ? line : line.substr(0, hash));
    if (content.empty()) continue;
    SaConfig sa;
    sa.line = line_no;
    if (std::string err = parse_line(content, sa); !err.empty())
      return make_error(where(path, line_no) + err);
    auto [sit, fresh] = spis.emplace(std::pair{sa.spi, sa.dir}, line_no);
    if (!fresh)
      return make_error(where(path, line_no) + "duplicate SPI " + std::to_string(sa.spi) +
                        " (first on line " + std::to_string(sit->second) + ")");
    if (sa.dir == SaDir::kOut) {
      const Addr6 key = sa.selector_is6 ? sa.selector6 : Addr6{0, sa.selector};
      auto [pit, new_sel] =
          selectors.emplace(std::tuple{sa.selector_is6, key, sa.selector_len}, line_no);
      if (!new_sel)
        return make_error(where(path, line_no) + "duplicate selector " +
                          std::string(split(content)[5]) + " (first on line " +
                          std::to_string(pit->second) + ")");
    }
    sas.push_back(sa);
    if (sas.size() > SaTable::kMaxSas)
      return make_error(where(path, line_no) + "more than " + std::to_string(SaTable::kMaxSas) +
                        " SAs");
  }
  return sas;
}

Result<std::vector<SaConfig>> load_sa_file(const std::string& path) {
  Result<std::string> text = read_table_file(path, "SA file");
  if (!text) return make_error(text.error());
  return parse_sa_file(text.value(), path);
}

Result<std::shared_ptr<SaTable>> SaTable::build(const std::vector<SaConfig>& sas,
                                                const std::string& path) {
  Result<std::unique_ptr<MbCrypto>> crypto = MbCrypto::create();
  if (!crypto) return make_error(crypto.error());
  auto table = std::make_shared<SaTable>();
  table->count_ = sas.size();
  table->sas_ = std::make_unique<SecurityAssociation[]>(sas.size());
  std::vector<uint16_t> outbound;
  const uint64_t now = sa_clock_ns();
  for (size_t i = 0; i < sas.size(); ++i) {
    SecurityAssociation& sa = table->sas_[i];
    sa.cfg = sas[i];
    sa.installed_ns = now;
    table->timed_ |= sa.cfg.life.seconds.set();
    sa.replay = ReplayWindow(sa.cfg.replay_window, sa.cfg.esn);
    if (sa.cfg.cipher == EspCipher::kAesGcm) {
      sa.gcm = std::make_unique<GcmKey>();
      (*crypto)->expand_gcm(sa.cfg.enc_key, sa.cfg.key_len, sa.cfg.nonce, *sa.gcm);
    } else {
      (*crypto)->expand_aes(sa.cfg.enc_key, sa.cfg.key_len, sa.cfg.nonce, sa.aes);
      (*crypto)->prepare_hmac_sha1(sa.cfg.auth_key, kHmacSha1KeyLen, sa.hmac);
    }
    const auto index = static_cast<uint16_t>(i);
    if (sa.cfg.dir == SaDir::kIn) {
      table->inbound_.emplace(sa.cfg.spi, index);
    } else {
      outbound.push_back(index);
      table->outbound_spi_.emplace(sa.cfg.spi, index);
    }
  }
  std::vector<uint16_t> outbound4, outbound6;
  for (uint16_t i : outbound)
    (table->sas_[i].cfg.selector_is6 ? outbound6 : outbound4).push_back(i);
  if (Status s = table->build_selectors6(outbound6, path); !s) return make_error(s.error());
  if (outbound4.size() <= kMaxScannedSelectors) {
    for (uint16_t i : outbound4) {
      const SaConfig& c = table->sas_[i].cfg;
      table->scanned_.push_back(Selector{c.selector, mask_of(c.selector_len), i});
    }
    std::stable_sort(table->scanned_.begin(), table->scanned_.end(),
                     [](const Selector& a, const Selector& b) { return a.mask > b.mask; });
    return table;
  }
  table->selectors_ = std::make_unique<Dir24_8>();
  for (uint16_t i : outbound4) {
    const SaConfig& c = table->sas_[i].cfg;
    if (Status s = table->selectors_->add(c.selector, c.selector_len, i); !s)
      return make_error(where(path, c.line) + s.error());
  }
  if (Status s = table->selectors_->build(); !s) return make_error(path + ": " + s.error());
  return table;
}

Status SaTable::build_selectors6(const std::vector<uint16_t>& outbound6, const std::string& path) {
  if (outbound6.size() <= kMaxScannedSelectors) {
    for (uint16_t i : outbound6) {
      const SaConfig& c = sas_[i].cfg;
      scanned6_.push_back(Selector6{c.selector6, Addr6::hi_mask(c.selector_len),
                                    Addr6::lo_mask(c.selector_len), c.selector_len, i});
    }
    std::stable_sort(scanned6_.begin(), scanned6_.end(),
                     [](const Selector6& a, const Selector6& b) { return a.len > b.len; });
    return {};
  }
  selectors6_ = std::make_unique<Ip6Table>();
  for (uint16_t i : outbound6) {
    const SaConfig& c = sas_[i].cfg;
    uint8_t prefix[kIp6AddrLen];
    c.selector6.to_bytes(prefix);
    if (Status s = selectors6_->add(prefix, c.selector_len, i); !s)
      return make_error(where(path, c.line) + s.error());
  }
  if (Status s = selectors6_->build(); !s) return make_error(path + ": " + s.error());
  return {};
}

namespace {

// The same SA: what its packets' bytes depend on (not its selector or its line).
bool same_sa(const SaConfig& a, const SaConfig& b) {
  return a.spi == b.spi && a.dir == b.dir && a.cipher == b.cipher && a.key_len == b.key_len &&
         a.esn == b.esn && a.tunnel_src == b.tunnel_src && a.tunnel_dst == b.tunnel_dst &&
         a.tunnel6 == b.tunnel6 &&
         std::memcmp(a.tunnel_src6, b.tunnel_src6, sizeof a.tunnel_src6) == 0 &&
         std::memcmp(a.tunnel_dst6, b.tunnel_dst6, sizeof a.tunnel_dst6) == 0 &&
         std::memcmp(a.enc_key, b.enc_key, sizeof a.enc_key) == 0 &&
         std::memcmp(a.nonce, b.nonce, sizeof a.nonce) == 0 &&
         std::memcmp(a.auth_key, b.auth_key, sizeof a.auth_key) == 0;
}

}  // namespace

void SaTable::take_over(const SaTable& old) {
  std::map<std::pair<uint32_t, SaDir>, uint16_t> before;
  for (size_t i = 0; i < old.count_; ++i)
    before.emplace(std::pair{old.sas_[i].cfg.spi, old.sas_[i].cfg.dir}, static_cast<uint16_t>(i));
  for (size_t i = 0; i < count_; ++i) {
    SecurityAssociation& sa = sas_[i];
    auto it = before.find({sa.cfg.spi, sa.cfg.dir});
    if (it == before.end() || !same_sa(sa.cfg, old.sas_[it->second].cfg)) continue;
    SecurityAssociation& was = old.sas_[it->second];
    Carried c{static_cast<uint16_t>(i), it->second, 0,
              was.life_packets.load(std::memory_order_relaxed),
              was.life_bytes.load(std::memory_order_relaxed)};
    sa.life_packets.store(c.packets_at, std::memory_order_relaxed);
    sa.life_bytes.store(c.bytes_at, std::memory_order_relaxed);
    sa.life_state.store(was.life_state.load(std::memory_order_relaxed), std::memory_order_relaxed);
    sa.installed_ns = was.installed_ns;
    if (sa.cfg.dir == SaDir::kOut) {
      c.resumed_at = was.last_seq.load(std::memory_order_relaxed) + kSeqReserve;
      sa.last_seq.store(c.resumed_at, std::memory_order_relaxed);
    } else {
      rte_spinlock_lock(&was.replay_lock);
      sa.replay.merge(was.replay);
      rte_spinlock_unlock(&was.replay_lock);
    }
    carried_.push_back(c);
  }
}

Status SaTable::settle(const SaTable& old) {
  std::string overlapped;
  for (const Carried& c : carried_) {
    SecurityAssociation& sa = sas_[c.now];
    SecurityAssociation& was = old.sas_[c.before];
    sa.life_packets.fetch_add(was.life_packets.load(std::memory_order_relaxed) - c.packets_at,
                              std::memory_order_relaxed);
    sa.life_bytes.fetch_add(was.life_bytes.load(std::memory_order_relaxed) - c.bytes_at,
                            std::memory_order_relaxed);
    sa.life_state.fetch_or(was.life_state.load(std::memory_order_relaxed),
                           std::memory_order_relaxed);
    if (sa.cfg.dir == SaDir::kOut) {
      if (was.last_seq.load(std::memory_order_relaxed) > c.resumed_at)
        overlapped += (overlapped.empty() ? "" : ", ") + std::to_string(sa.cfg.spi);
      continue;
    }
    rte_spinlock_lock(&was.replay_lock);
    const ReplayWindow received = was.replay;
    rte_spinlock_unlock(&was.replay_lock);
    rte_spinlock_lock(&sa.replay_lock);
    sa.replay.merge(received);
    rte_spinlock_unlock(&sa.replay_lock);
  }
  if (!overlapped.empty())
    return make_error("SA(s) " + overlapped +
                      ": the old table used more sequence numbers than the reserve of " +
                      std::to_string(kSeqReserve) + " after the new one took over");
  return {};
}

Result<std::shared_ptr<SaTable>> SaTable::load(const std::string& path) {
  Result<std::vector<SaConfig>> sas = load_sa_file(path);
  if (!sas) return make_error(sas.error());
  return build(*sas, path);
}

Result<std::shared_ptr<TableSlot<SaTable>>> get_sa_slot(SharedStorage* shared,
                                                        const std::string& path,
                                                        const std::string& where_prefix) {
  Result<std::shared_ptr<TableSlot<SaTable>>> slot =
      shared_table_slot<SaTable>(shared, "ipsec-sa:" + path, "IPsec SAs", path,
                                 [](const std::string& file) { return SaTable::load(file); });
  if (!slot) return make_error(where_prefix + slot.error());
  return slot;
}

Result<std::shared_ptr<const SaTable>> get_sa_table(SharedStorage* shared, const std::string& path,
                                                    const std::string& where_prefix) {
  Result<std::shared_ptr<TableSlot<SaTable>>> slot = get_sa_slot(shared, path, where_prefix);
  if (!slot) return make_error(slot.error());
  // Kept for good: the caller's table is never replaced under it.
  slot.value()->pin(where_prefix.substr(0, where_prefix.rfind(": ")));
  return std::shared_ptr<const SaTable>(slot.value(), slot.value()->current());
}

}  // namespace fulcrum
