#include "lib/ipsec_sa.hh"

#include <arpa/inet.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <map>

#include "core/shared_storage.hh"
#include "core/table_slot.hh"
#include "lib/table_file.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMaxPrefixLen = 32;
constexpr int kHexBase = 16;
constexpr int kDecimalBase = 10;
constexpr uint32_t kNibbleBits = 4;
constexpr size_t kMinFields = 6;
constexpr size_t kMaxFields = 8;
const char* const kExpected =
    "expected 'SPI TUNNEL_SRC TUNNEL_DST ENC_KEY_HEX AUTH_KEY_HEX SELECTOR_PREFIX [DIR out|in]'";

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

// Parses one SA line; returns the error (without "PATH:LINE: ") or "".
std::string parse_line(std::string_view content, SaConfig& sa) {
  const std::vector<std::string_view> f = split(content);
  if (f.size() < kMinFields || f.size() > kMaxFields)
    return std::string(kExpected) + ", got " + quote_excerpt(content);
  if (!parse_u32(f[0], sa.spi)) return "SPI '" + std::string(f[0]) + "' is not a number";
  if (sa.spi < kMinSpi)
    return "SPI " + std::string(f[0]) + " is reserved (use 256..4294967295, RFC 4303 2.1)";
  if (!parse_address(f[1], sa.tunnel_src))
    return "tunnel source '" + std::string(f[1]) + "' is not an IPv4 address";
  if (!parse_address(f[2], sa.tunnel_dst))
    return "tunnel destination '" + std::string(f[2]) + "' is not an IPv4 address";
  uint8_t material[kEncKeyMaterialLen];
  if (parse_hex(f[3], material, kEncKeyMaterialLen)) {
    sa.cipher = EspCipher::kAesCtr;
    std::memcpy(sa.nonce, material + kAesKeyLen, kCtrNonceLen);
  } else if (parse_hex(f[3], material, kAesKeyLen)) {
    sa.cipher = EspCipher::kAesCbc;
  } else {
    return "encryption key must be " + std::to_string(2 * kEncKeyMaterialLen) +
           " hex digits (16-byte AES key + 4-byte nonce: AES-CTR) or " +
           std::to_string(2 * kAesKeyLen) + " (AES-CBC), got " + quote_excerpt(f[3]);
  }
  std::memcpy(sa.enc_key, material, kAesKeyLen);
  if (!parse_hex(f[4], sa.auth_key, kHmacSha1KeyLen))
    return "authentication key must be " + std::to_string(2 * kHmacSha1KeyLen) +
           " hex digits (HMAC-SHA1), got " + quote_excerpt(f[4]);
  const std::string_view prefix = f[5];
  const size_t slash = prefix.find('/');
  uint32_t len = 0;
  if (slash == std::string_view::npos || !parse_address(prefix.substr(0, slash), sa.selector) ||
      !parse_u32(prefix.substr(slash + 1), len) || len > kMaxPrefixLen)
    return "selector '" + std::string(prefix) + "' is not A.B.C.D/LEN";
  if ((sa.selector & ~mask_of(len)) != 0) return "host bits set in selector " + std::string(prefix);
  sa.selector_len = static_cast<uint8_t>(len);
  std::string_view dir;
  if (f.size() == kMaxFields) {
    if (f[6] != "DIR") return std::string(kExpected) + ", got " + quote_excerpt(content);
    dir = f[7];
  } else if (f.size() == kMinFields + 1) {
    dir = f[6];
  }
  if (dir.empty() || dir == "out")
    sa.dir = SaDir::kOut;
  else if (dir == "in")
    sa.dir = SaDir::kIn;
  else
    return "direction '" + std::string(dir) + "' is neither 'out' nor 'in'";
  return {};
}

std::string where(const std::string& path, uint32_t line) {
  return path + ":" + std::to_string(line) + ": ";
}

}  // namespace

bool ReplayWindow::check(uint32_t seq) const {
  if (seq == 0) return false;
  if (seq > top_) return true;
  const uint32_t diff = top_ - seq;
  if (diff >= kSize) return false;
  return ((bitmap_ >> diff) & 1) == 0;
}

bool ReplayWindow::update(uint32_t seq) {
  if (!check(seq)) return false;
  if (seq > top_) {
    const uint32_t shift = seq - top_;
    bitmap_ = shift >= kSize ? 1 : (bitmap_ << shift) | 1;
    top_ = seq;
  } else {
    bitmap_ |= uint64_t{1} << (top_ - seq);
  }
  return true;
}

void ReplayWindow::merge(const ReplayWindow& other) {
  for (uint32_t i = 0; i < kSize && i < other.top_; ++i)
    if ((other.bitmap_ >> i) & 1) update(other.top_ - i);
}

Result<std::vector<SaConfig>> parse_sa_file(std::string_view text, const std::string& path) {
  std::vector<SaConfig> sas;
  std::map<std::pair<uint32_t, SaDir>, uint32_t> spis;
  std::map<std::pair<uint32_t, uint8_t>, uint32_t> selectors;
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
      auto [pit, new_sel] = selectors.emplace(std::pair{sa.selector, sa.selector_len}, line_no);
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
  for (size_t i = 0; i < sas.size(); ++i) {
    SecurityAssociation& sa = table->sas_[i];
    sa.cfg = sas[i];
    (*crypto)->expand_aes_ctr(sa.cfg.enc_key, sa.cfg.nonce, sa.aes);
    (*crypto)->prepare_hmac_sha1(sa.cfg.auth_key, kHmacSha1KeyLen, sa.hmac);
    const auto index = static_cast<uint16_t>(i);
    if (sa.cfg.dir == SaDir::kIn)
      table->inbound_.emplace(sa.cfg.spi, index);
    else
      outbound.push_back(index);
  }
  if (outbound.size() <= kMaxScannedSelectors) {
    for (uint16_t i : outbound) {
      const SaConfig& c = table->sas_[i].cfg;
      table->scanned_.push_back(Selector{c.selector, mask_of(c.selector_len), i});
    }
    std::stable_sort(table->scanned_.begin(), table->scanned_.end(),
                     [](const Selector& a, const Selector& b) { return a.mask > b.mask; });
    return table;
  }
  table->selectors_ = std::make_unique<Dir24_8>();
  for (uint16_t i : outbound) {
    const SaConfig& c = table->sas_[i].cfg;
    if (Status s = table->selectors_->add(c.selector, c.selector_len, i); !s)
      return make_error(where(path, c.line) + s.error());
  }
  if (Status s = table->selectors_->build(); !s) return make_error(path + ": " + s.error());
  return table;
}

namespace {

// The same SA: what its packets' bytes depend on (not its selector or its line).
bool same_sa(const SaConfig& a, const SaConfig& b) {
  return a.spi == b.spi && a.dir == b.dir && a.cipher == b.cipher && a.tunnel_src == b.tunnel_src &&
         a.tunnel_dst == b.tunnel_dst && std::memcmp(a.enc_key, b.enc_key, sizeof a.enc_key) == 0 &&
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
    Carried c{static_cast<uint16_t>(i), it->second, 0};
    if (sa.cfg.dir == SaDir::kOut) {
      c.resumed_at = was.last_seq.load(std::memory_order_relaxed) + kSeqReserve;
      sa.last_seq.store(c.resumed_at, std::memory_order_relaxed);
    } else {
      rte_spinlock_lock(&was.replay_lock);
      sa.replay = was.replay;
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
