// IPsec security associations (RFC 4303 ESP, tunnel mode): the SA file, the table the IPsec
// elements share, outbound sequence numbers and the inbound anti-replay window.
//
// File format, one SA a line (# comments and blank lines are ignored):
//
//   SPI  TUNNEL_SRC  TUNNEL_DST  ENC_KEY_HEX  AUTH_KEY_HEX  SELECTOR_PREFIX  [KEY VALUE]...
//   4096 192.0.2.1   198.51.100.1 <40 hex digits> <40 hex digits> 10.1.0.0/16 DIR out ESN on
//
//   SPI              256..4294967295, decimal or 0x-hex (0..255 are reserved, RFC 4303 §2.1)
//   TUNNEL_SRC/DST   the outer header's addresses: both IPv4 (outer IPv4 header) or both IPv6
//                    (outer IPv6 header); either family carries IPv4 and IPv6 inner packets
//   ENC_KEY_HEX      the cipher's key material (CIPHER below):
//                      aes-ctr  16 or 32 bytes of AES key, then the 4-byte nonce (RFC 3686 §5.1)
//                      aes-cbc  16 or 32 bytes of AES key (RFC 3602)
//                      aes-gcm  16 or 32 bytes of AES key, then the 4-byte salt (RFC 4106 §8.1),
//                               a 16-byte ICV
//   AUTH_KEY_HEX     20 bytes: the HMAC-SHA1 key (RFC 2404, HMAC-SHA1-96); "-" for aes-gcm,
//                    which authenticates by itself
//   SELECTOR_PREFIX  A.B.C.D/LEN or X:X::X/LEN: outbound packets of that family whose inner
//                    destination matches it (longest prefix of the family wins) use this SA,
//                    whatever the tunnel's family; ignored for inbound SAs (any family)
//   Options, in any order:
//   DIR out|in       out (default) or in; a lone "out" or "in" after the selector says the same
//   CIPHER c         aes-ctr, aes-cbc or aes-gcm; without it, 20 or 36 bytes of key material
//                    mean aes-ctr and 16 or 32 mean aes-cbc (aes-gcm must be named)
//   ESN on|off       64-bit extended sequence numbers (RFC 4303 §2.2.1, RFC 4304); off (default):
//                    an outbound SA stops after 2^32 - 1 packets (seq-overflow drops)
//   REPLAY N         inbound anti-replay window of N packets, 1..4096 (default 64)
//   LIFE_PACKETS SOFT,HARD   SA lifetimes (RFC 4301 §4.4.2.1): packets, bytes of inner packets
//   LIFE_BYTES SOFT,HARD     (IPv4 total length, IPv6 payload length + 40), and seconds since
//                    the SA was installed
//   LIFE_SECONDS SOFT,HARD   (loaded, or added by a reload). Each of SOFT and HARD is a positive
//                    number or "-" (none); SOFT below HARD when both are given. At SOFT the SA
//                    keeps working and the event is reported once (stderr, and the elements'
//                    counter soft-expired): time to rekey. Past HARD the SA is no longer used:
//                    the packet that would take a count past HARD, and every packet after it
//                    (or every packet once HARD seconds have passed), is dropped as sa-expired,
//                    outbound and inbound. Outbound packets are counted when encapsulated,
//                    inbound ones once their ICV verified. An SA a reload keeps as it was
//                    (SaTable below) keeps its counts and its install time.
//
// Errors name the file and line: PATH:LINE: expected '...', got '...'; bad SPI, address, key,
// prefix, option or direction; tunnel endpoints of two families; duplicate SPI within a
// direction; duplicate outbound selector.
#pragma once

#include <rte_spinlock.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/result.hh"
#include "lib/dir24_8.hh"
#include "lib/ip6_table.hh"
#include "lib/ipsec_crypto.hh"

namespace fulcrum {

enum class SaDir : uint8_t { kOut, kIn };
enum class EspCipher : uint8_t { kAesCtr, kAesCbc, kAesGcm };

inline constexpr uint32_t kMinSpi = 256;
// What an IPsec element's SA_FILE argument is (its manual).
inline constexpr std::string_view kSaFileHelp =
    "SA table (src/lib/ipsec_sa.hh: \"out\" SAs by destination for encapsulation, \"in\" SAs "
    "by SPI for decapsulation), loaded once per process and shared by every worker and every "
    "IPsec element naming the same file";
inline constexpr size_t kEncKeyMaterialLen = kAesKeyLen + kCtrNonceLen;
inline constexpr uint32_t kEspAlign = 4;
inline constexpr uint32_t kSaOuterIpv4Len = 20;  // the outer headers IPsecESPEncap builds
inline constexpr uint32_t kSaOuterIpv6Len = 40;
inline constexpr uint32_t kSaEspHdrLen = 8;   // SPI, sequence number
inline constexpr uint32_t kSaTrailerLen = 2;  // pad length, next header
inline constexpr size_t kIp6AddrLen = 16;

// One lifetime limit (RFC 4301 §4.4.2.1): 0 means none.
struct SaLimit {
  uint64_t soft = 0;
  uint64_t hard = 0;
  bool set() const { return soft != 0 || hard != 0; }
};

struct SaLifetime {
  SaLimit packets, bytes, seconds;
  bool any() const { return packets.set() || bytes.set() || seconds.set(); }
};

// What counting a packet against an SA's lifetime found: kSoftNow and kExpiredNow once per SA
// (the caller reports them), kExpired for every packet after the hard limit.
enum class SaLife : uint8_t { kLive, kSoftNow, kExpiredNow, kExpired };

struct SaConfig {
  static constexpr uint32_t kDefaultReplayWindow = 64;
  static constexpr uint32_t kMaxReplayWindow = 4096;

  uint32_t spi = 0;
  uint32_t tunnel_src = 0;  // host byte order (IPv4 tunnels)
  uint32_t tunnel_dst = 0;
  bool tunnel6 = false;                   // IPv6 endpoints: an outer IPv6 header
  uint8_t tunnel_src6[kIp6AddrLen] = {};  // network byte order (IPv6 tunnels)
  uint8_t tunnel_dst6[kIp6AddrLen] = {};
  uint8_t enc_key[kAes256KeyLen] = {};
  uint8_t key_len = kAesKeyLen;      // 16 or 32
  uint8_t nonce[kCtrNonceLen] = {};  // the CTR nonce or the GCM salt
  uint8_t auth_key[kHmacSha1KeyLen] = {};
  uint32_t selector = 0;  // host byte order, host bits zero (IPv4 selector)
  Addr6 selector6;        // IPv6 selector, host bits zero
  bool selector_is6 = false;
  uint8_t selector_len = 0;
  SaDir dir = SaDir::kOut;
  EspCipher cipher = EspCipher::kAesCtr;
  bool esn = false;
  uint16_t replay_window = kDefaultReplayWindow;
  SaLifetime life;
  uint32_t line = 0;

  // The IV carried in each packet, the alignment of payload + trailer (RFC 4303 2.4) and the ICV.
  uint32_t iv_len() const { return cipher == EspCipher::kAesCbc ? kCbcIvLen : kCtrIvLen; }
  uint32_t align() const { return cipher == EspCipher::kAesCbc ? kAesBlockLen : kEspAlign; }
  uint32_t icv_len() const { return cipher == EspCipher::kAesGcm ? kGcmIcvLen : kIcvLen; }
  bool hmac() const { return cipher != EspCipher::kAesGcm; }
  // The outer IP header IPsecESPEncap writes, and what it puts in front of the inner packet.
  uint32_t outer_hdr_len() const { return tunnel6 ? kSaOuterIpv6Len : kSaOuterIpv4Len; }
  uint32_t prepend_len() const { return outer_hdr_len() + kSaEspHdrLen + iv_len(); }
  // The longest inner packet whose encapsulation is at most `mtu` bytes of outer IP packet
  // (padding rounds payload + trailer up to align()); 0 when none fits.
  uint32_t inner_mtu(uint32_t mtu) const {
    const uint32_t fixed = prepend_len() + icv_len();
    if (mtu < fixed + align()) return 0;
    return (mtu - fixed) / align() * align() - kSaTrailerLen;
  }
  // What the device kernels take (src/offload/ipsec_tables.hh): AES-128/256-CTR and GCM, not
  // CBC (each block chains on the last: it stays on the CPU); the HMAC kernel takes every SA:
  // HMAC-SHA1-96 with or without ESN, and GCM SAs, which it passes untouched (so a chain with
  // the cipher stays whole).
  bool device_aes() const { return cipher != EspCipher::kAesCbc; }
  static constexpr bool device_hmac() { return true; }
};

// Parses an SA file's contents; `path` only names the file in error messages.
Result<std::vector<SaConfig>> parse_sa_file(std::string_view text, const std::string& path);
Result<std::vector<SaConfig>> load_sa_file(const std::string& path);

// RFC 4303 §3.4.3 anti-replay window of 1..4096 packets over 64-bit sequence numbers: the
// high half inferred as RFC 4303 Appendix A2.2 says when the SA has ESN, the bitmap a ring of
// 64-bit blocks cleared a block at a time as the top moves (RFC 6479).
class ReplayWindow {
 public:
  explicit ReplayWindow(uint32_t size = SaConfig::kDefaultReplayWindow, bool esn = false)
      : size_(size), esn_(esn) {}

  // The sequence number of a packet carrying `low` (the 32 bits in its ESP header): `low`
  // itself without ESN; with ESN, the high half that puts it in or above the window.
  uint64_t infer(uint32_t low) const { return infer_from(top_, low); }
  // The same for a window whose highest number received were `top`.
  uint64_t infer_from(uint64_t top, uint32_t low) const;
  // Whether `seq` is new: above the highest seen, or inside the window and not yet seen.
  bool check(uint64_t seq) const;
  // Marks `seq` received (after its ICV verified); false when check(seq) fails.
  bool update(uint64_t seq);
  // Marks every number `other` received (an SA's window carried over a reload).
  void merge(const ReplayWindow& other);
  uint64_t top() const { return top_; }
  uint32_t size() const { return size_; }

 private:
  static constexpr uint32_t kBlockBits = 64;
  static constexpr uint32_t kBlocks = 2 * SaConfig::kMaxReplayWindow / kBlockBits;
  static constexpr uint64_t kRingBits = uint64_t{kBlocks} * kBlockBits;
  bool seen(uint64_t seq) const {
    return (bits_[(seq / kBlockBits) % kBlocks] >> (seq % kBlockBits)) & 1;
  }

  uint64_t top_ = 0;  // highest sequence number received
  uint32_t size_;
  bool esn_;
  uint64_t bits_[kBlocks] = {};  // ring: bit seq % kRingBits set when seq was received
};

// The clock of LIFE_SECONDS, in nanoseconds: CLOCK_MONOTONIC unless a test set another
// (set_sa_clock(nullptr) restores it). The elements read it once per batch, and only for tables
// with a LIFE_SECONDS SA.
using SaClock = uint64_t (*)();
uint64_t sa_clock_ns();
void set_sa_clock(SaClock clock);

struct SecurityAssociation {
  static constexpr uint8_t kSoftReached = 1;
  static constexpr uint8_t kHardReached = 2;

  // Counts a packet of `bytes` (the inner IPv4 packet) against cfg.life at `now_ns` (sa_clock_ns;
  // any value when no SA of the table has LIFE_SECONDS). Shared by the workers: atomics.
  SaLife count(uint32_t bytes, uint64_t now_ns) {
    if (!cfg.life.any()) [[likely]]
      return SaLife::kLive;
    return count_slow(bytes, now_ns);
  }
  // Past its hard lifetime already (nothing counted): inbound packets skip the crypto.
  bool expired(uint64_t now_ns) const {
    if (!cfg.life.any()) [[likely]]
      return false;
    return (life_state.load(std::memory_order_relaxed) & kHardReached) != 0 ||
           (cfg.life.seconds.hard != 0 && age_seconds(now_ns) >= cfg.life.seconds.hard);
  }
  // Marks the SA past its hard lifetime (found by expired()): kExpiredNow the first time.
  SaLife expire() {
    const uint8_t was = life_state.fetch_or(kSoftReached | kHardReached, std::memory_order_relaxed);
    return (was & kHardReached) != 0 ? SaLife::kExpired : SaLife::kExpiredNow;
  }
  uint64_t age_seconds(uint64_t now_ns) const;
  // The warning for a kSoftNow or kExpiredNow from count(), printed on stderr by `who`.
  void report(SaLife event, const std::string& who, uint64_t now_ns) const;

  SaConfig cfg;
  AesKey aes;
  HmacSha1Key hmac;
  std::unique_ptr<GcmKey> gcm;  // aes-gcm SAs only
  // Outbound: the last sequence number used (the first packet gets 1); shared by the workers.
  alignas(64) std::atomic<uint64_t> last_seq{0};
  // Inbound: the replay window and the lock that guards it.
  alignas(64) rte_spinlock_t replay_lock = RTE_SPINLOCK_INITIALIZER;
  ReplayWindow replay;
  // Lifetime: what the SA protected (counted only for the limits set), kSoftReached and
  // kHardReached, and when the SA was installed (sa_clock_ns).
  alignas(64) std::atomic<uint64_t> life_packets{0};
  std::atomic<uint64_t> life_bytes{0};
  std::atomic<uint8_t> life_state{0};
  uint64_t installed_ns = 0;

 private:
  SaLife count_slow(uint32_t bytes, uint64_t now_ns);
};

// The SAs of one file, with their expanded keys. Read-mostly: sequence numbers and replay
// windows change through the mutable accessors, everything else is fixed after load().
//
// Reload (core/table_slot.hh): an SA the new file holds again (same direction, SPI, keys,
// cipher and tunnel endpoints; its selector may change) goes on where it was. Its outbound
// sequence numbers resume kSeqReserve past the old SA's (the workers may still encapsulate with
// the old table until their next quiescent point, taking numbers below that: a number is never
// used twice with the same keys); its replay window is copied, then merged with what the old
// table received meanwhile; its lifetime counts and install time go on (what the old table
// counts meanwhile is added when it settles). An SA with new keys is a new SA and starts at 1,
// its lifetime from the reload.
//
// Make-before-break rekeying is such a reload: the new file replaces the outbound SA with one of
// a new SPI and keys for the same selector, and keeps the old inbound SA next to the new one, so
// packets in flight under the old SPI still decapsulate (drop the old inbound SA in a later
// reload).
class SaTable {
 public:
  static constexpr uint64_t kSeqReserve = uint64_t{1} << 20;

  static constexpr uint16_t kNoSa = Dir24_8::kNoRoute;
  static constexpr size_t kMaxSas = Dir24_8::kMaxNextHop + 1;

  static Result<std::shared_ptr<SaTable>> load(const std::string& path);
  static Result<std::shared_ptr<SaTable>> build(const std::vector<SaConfig>& sas,
                                                const std::string& path);

  size_t size() const { return count_; }
  // Whether an SA has LIFE_SECONDS: the elements then read sa_clock_ns() per batch.
  bool timed() const { return timed_; }
  SecurityAssociation& at(size_t i) const { return sas_[i]; }
  // Up to this many outbound SAs of a family are matched by a scan (longest selector first)
  // instead of the DIR-24-8 table (IPv4; its 32 MiB first level costs cache and TLB misses) or
  // the Ip6Table (IPv6).
  static constexpr size_t kMaxScannedSelectors = 8;

  // The outbound SA whose IPv4 selector matches `dst` (host byte order), or kNoSa.
  uint16_t lookup_out(uint32_t dst) const {
    if (selectors_) return selectors_->lookup(dst);
    for (const Selector& s : scanned_)
      if ((dst & s.mask) == s.prefix) return s.sa;
    return kNoSa;
  }
  // The outbound SA whose IPv6 selector matches `dst` (16 bytes, network order), or kNoSa:
  // a scan of up to kMaxScannedSelectors, longest first, or an Ip6Table (lib/ip6_table.hh).
  uint16_t lookup_out6(const uint8_t* dst) const {
    const Addr6 a = Addr6::from_bytes(dst);
    if (selectors6_) {
      const uint16_t hop = selectors6_->lookup(a);
      return hop == Ip6Table::kNoRoute ? kNoSa : hop;
    }
    for (const Selector6& s : scanned6_)
      if ((a.hi & s.hi_mask) == s.prefix.hi && (a.lo & s.lo_mask) == s.prefix.lo) return s.sa;
    return kNoSa;
  }
  // The outbound SA with this SPI (a policy naming it), or kNoSa.
  uint16_t lookup_out_spi(uint32_t spi) const {
    auto it = outbound_spi_.find(spi);
    return it == outbound_spi_.end() ? kNoSa : it->second;
  }
  // The inbound SA with this SPI, or kNoSa.
  uint16_t lookup_in(uint32_t spi) const {
    auto it = inbound_.find(spi);
    return it == inbound_.end() ? kNoSa : it->second;
  }

  // Reload: called just before this table replaces `old`, and once `old` is out of use.
  void take_over(const SaTable& old);
  Status settle(const SaTable& old);
  // SAs carried over from the table this one replaced.
  size_t carried() const { return carried_.size(); }

 private:
  struct Carried {
    uint16_t now, before;           // indices in this table and in the old one
    uint64_t resumed_at;            // outbound: the sequence number this table went on from
    uint64_t packets_at, bytes_at;  // the old SA's lifetime counts when this table took over
  };
  bool timed_ = false;
  std::vector<Carried> carried_;
  std::unique_ptr<SecurityAssociation[]> sas_;
  size_t count_ = 0;
  struct Selector {
    uint32_t prefix;
    uint32_t mask;
    uint16_t sa;
  };
  std::vector<Selector> scanned_;  // longest prefix first; used when selectors_ is null
  std::unique_ptr<Dir24_8> selectors_;
  Status build_selectors6(const std::vector<uint16_t>& outbound6, const std::string& path);
  struct Selector6 {
    Addr6 prefix;
    uint64_t hi_mask, lo_mask;
    uint8_t len;
    uint16_t sa;
  };
  std::vector<Selector6> scanned6_;  // longest prefix first; used when selectors6_ is null
  std::unique_ptr<Ip6Table> selectors6_;
  std::unordered_map<uint32_t, uint16_t> inbound_;
  std::unordered_map<uint32_t, uint16_t> outbound_spi_;
};

// The table for `path` from shared storage (key "ipsec-sa:PATH"), or a private one when
// `shared` is null. Errors are prefixed with `where` (the element's location and name).
class SharedStorage;
Result<std::shared_ptr<const SaTable>> get_sa_table(SharedStorage* shared, const std::string& path,
                                                    const std::string& where);
// The reloadable slot holding that table (the same storage key): what the CPU IPsec elements
// read, per worker iteration (TableSlot::for_worker).
template <class T>
class TableSlot;
Result<std::shared_ptr<TableSlot<SaTable>>> get_sa_slot(SharedStorage* shared,
                                                        const std::string& path,
                                                        const std::string& where);

}  // namespace fulcrum
