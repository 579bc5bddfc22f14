#include "elements/ipsec/ipsec_esp_decap.hh"

#include <openssl/crypto.h>
#include <rte_ip.h>

#include <algorithm>
#include <cstring>

#include "lib/esp.hh"
#include "lib/ip6_ext.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kTosOffset = 1;
constexpr uint32_t kTotalLengthOffset = 2;
constexpr uint32_t kFragOffset = 6;
constexpr uint16_t kFragMask = 0x3FFF;  // more fragments, fragment offset
constexpr uint32_t kProtoOffset = 9;
constexpr uint32_t kChecksumOffset = 10;

}  // namespace

bool decapsulate_ecn(uint8_t outer_tos, uint8_t* inner) {
  constexpr uint8_t kEcnMask = 0x03, kNotEct = 0, kEct1 = 1, kEct0 = 2, kCe = 3;
  constexpr uint32_t kIpv6EcnShift = 4;  // IPv6: the ECN bits are bits 4..5 of byte 1
  const bool v6 = (inner[0] >> esp::kVersionShift) == esp::kIpv6Version;
  const uint8_t outer = outer_tos & kEcnMask;
  const uint8_t was = (v6 ? esp::ipv6_traffic_class(inner) : inner[kTosOffset]) & kEcnMask;
  uint8_t now = was;
  if (outer == kCe) {
    if (was == kNotEct) return false;  // RFC 6040 §4.2: drop (the congestion cannot be signalled)
    now = kCe;
  } else if (outer == kEct1 && was == kEct0) {
    now = kEct1;
  }
  if (now == was) return true;
  if (v6) {
    inner[1] =
        static_cast<uint8_t>((inner[1] & ~(kEcnMask << kIpv6EcnShift)) | now << kIpv6EcnShift);
    return true;  // IPv6 has no header checksum
  }
  inner[kTosOffset] = static_cast<uint8_t>((inner[kTosOffset] & ~kEcnMask) | now);
  std::memset(inner + kChecksumOffset, 0, sizeof(uint16_t));
  const uint16_t cksum = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(inner));
  std::memcpy(inner + kChecksumOffset, &cksum, sizeof cksum);
  return true;
}

Status IPsecESPDecap::configure(Args& args) {
  loc_ = args.loc();
  return args.positional_file("SA_FILE", file_, kSaFileHelp).finish();
}

Status IPsecESPDecap::initialize(const InitContext& ctx) {
  const std::string where =
      loc_.str() + ": " + name() + " :: " + std::string(kTraits.class_name) + ": ";
  auto t = get_sa_slot(ctx.shared, file_, where);
  if (!t) return make_error(t.error());
  slot_ = t.value();
  worker_ = ctx.worker;
  table_ = slot_->current();
  auto c = MbCrypto::create();
  if (!c) return make_error(where + c.error());
  crypto_ = std::move(c.value());
  return {};
}

// An outer IPv6 header (EtherType 0x86DD expected at `ip`'s frame): the bytes before the ESP
// header (40, or more behind hop-by-hop, destination options and routing headers with no
// segments left) and the packet's length; a drop otherwise.
Verdict IPsecESPDecap::outer_ipv6(const uint8_t* ip, uint32_t len, uint32_t& hdr,
                                  uint32_t& total) const {
  using namespace esp;
  if (load_be16(ip - kEtherHdrLen + kEtherTypeOffset) != kEtherTypeIpv6 ||
      len < kEtherHdrLen + kIpv6HdrLen || (ip[0] >> kVersionShift) != kIpv6Version)
    return Verdict::drop(kDropReasons["not-esp"]);
  const uint32_t payload = load_be16(ip + kIpv6PayloadLenOffset);
  total = kIpv6HdrLen + payload;
  hdr = kIpv6HdrLen;
  if (ip[kIpv6NextHeaderOffset] == kIpProtoEsp) [[likely]]
    return Verdict::out(0);
  if (total > len - kEtherHdrLen) return Verdict::drop(kDropReasons["truncated"]);
  Ip6Upper upper;
  if (!walk_ip6(ip, payload, upper)) return Verdict::drop(kDropReasons["not-esp"]);
  if (upper.fragment) return Verdict::drop(kDropReasons["fragment"]);
  if (upper.proto != kIpProtoEsp || upper.routing_left)
    return Verdict::drop(kDropReasons["not-esp"]);
  hdr = upper.offset;
  return Verdict::out(0);
}

Verdict IPsecESPDecap::submit(uint32_t i, Packet* p) {
  Slot& slot = slots_[i];
  Scratch& x = scratch_[i];
  using namespace esp;
  const uint32_t len = length(p);
  uint8_t* d = data(p);
  const uint16_t type = load_be16(d + kEtherTypeOffset);
  const uint8_t* ip = d + kEtherHdrLen;
  uint32_t hdr = 0, total = 0;  // the outer headers before ESP; the outer packet's length
  if (len < kEtherHdrLen + kIpv4HdrLen) return Verdict::drop(kDropReasons["not-esp"]);
  if (type == kEtherTypeIpv4) [[likely]] {
    hdr = (ip[0] & 0x0F) * kIpv4WordBytes;
    if ((ip[0] >> kVersionShift) != kIpv4Version || hdr < kIpv4HdrLen ||
        ip[kProtoOffset] != kIpProtoEsp)
      return Verdict::drop(kDropReasons["not-esp"]);
    if ((load_be16(ip + kFragOffset) & kFragMask) != 0)
      return Verdict::drop(kDropReasons["fragment"]);
    total = load_be16(ip + kTotalLengthOffset);
  } else if (const Verdict v = outer_ipv6(ip, len, hdr, total); v.is_drop()) {
    return v;
  }
  if (total > len - kEtherHdrLen || total < hdr + kMinEspLen || !rte_pktmbuf_is_contiguous(p))
    return Verdict::drop(kDropReasons["truncated"]);
  if (total < len - kEtherHdrLen)
    rte_pktmbuf_trim(p, static_cast<uint16_t>(len - kEtherHdrLen - total));
  uint8_t* e = d + kEtherHdrLen + hdr;
  const uint16_t sa_index = table_->lookup_in(load_be32(e));
  if (sa_index == SaTable::kNoSa) return Verdict::drop(kDropReasons["unknown-spi"]);
  SecurityAssociation& sa = table_->at(sa_index);
  if (sa.expired(now_ns_)) {
    note_life(sa.expire(), sa);
    return Verdict::drop(kDropReasons["sa-expired"]);
  }
  const uint32_t low = load_be32(e + kSpiLen);
  uint64_t seq, top;
  bool fresh = check_window(sa, low, seq, top);
  // ESN: when the packets of this batch still being checked would move the window far enough to
  // infer another high half, they are completed first (near 2^32 boundaries only).
  if (sa.cfg.esn) {
    const uint64_t pending = pending_top(sa_index);
    if (pending > top && sa.replay.infer_from(pending, low) != seq) {
      flush();
      fresh = check_window(sa, low, seq, top);
    }
  }
  if (!fresh) return Verdict::drop(kDropReasons["replayed"]);
  const uint32_t iv_len = sa.cfg.iv_len();
  const uint32_t icv_len = sa.cfg.icv_len();
  const uint32_t esp_len = total - hdr;
  if (esp_len < kHdrLen + iv_len + kTrailerLen + icv_len)
    return Verdict::drop(kDropReasons["truncated"]);
  const uint32_t cipher_len = esp_len - kHdrLen - iv_len - icv_len;
  uint8_t* cipher = e + kHdrLen + iv_len;
  uint8_t* icv = e + esp_len - icv_len;
  std::memcpy(x.received, icv, icv_len);
  slot = Slot{sa_index, static_cast<uint16_t>(kEtherHdrLen + hdr), seq, iv_len, icv_len};
  submitted_[submitted_count_++] = i;
  if (sa.cfg.esn) note_pending(sa_index, seq);
  uint8_t seq_hi[kSeqLen];
  store_be32(seq_hi, static_cast<uint32_t>(seq >> 32));
  if (sa.cfg.cipher == EspCipher::kAesGcm) {
    std::memcpy(x.nonce, sa.gcm->salt, kGcmSaltLen);
    std::memcpy(x.nonce + kGcmSaltLen, e + kHdrLen, kGcmIvLen);
    const uint32_t aad_len = gcm_aad(e, sa.cfg.esn ? seq_hi : nullptr, x.aad);
    crypto_->gcm(*sa.gcm, false, x.nonce, x.aad, aad_len, cipher, cipher_len, x.icv, i);
    return Verdict::out(0);
  }
  // With ESN the ICV covers the high sequence bits after the trailer, where the ICV was.
  uint32_t auth_len = esp_len - icv_len;
  if (sa.cfg.esn) {
    std::memcpy(icv, seq_hi, kSeqLen);
    auth_len += kSeqLen;
  }
  if (sa.cfg.cipher == EspCipher::kAesCbc) {
    if (cipher_len % kAesBlockLen != 0) return Verdict::drop(kDropReasons["truncated"]);
    crypto_->hmac_then_cbc_decrypt(sa.hmac, e, auth_len, x.icv, sa.aes, e + kHdrLen, cipher,
                                   cipher_len, i);
  } else {
    std::memcpy(x.nonce, sa.aes.nonce, kCtrNonceLen);
    std::memcpy(x.nonce + kCtrNonceLen, e + kHdrLen, kIvLen);
    crypto_->hmac_then_ctr_decrypt(sa.hmac, e, auth_len, x.icv, sa.aes, x.nonce, cipher, cipher_len,
                                   i);
  }
  return Verdict::out(0);
}

Verdict IPsecESPDecap::complete(Packet* p, const Slot& slot, const Scratch& x) {
  using namespace esp;
  uint8_t* d = data(p);
  const uint32_t len = length(p);
  if (CRYPTO_memcmp(x.icv, x.received, slot.icv_len) != 0)
    return Verdict::drop(kDropReasons["bad-icv"]);
  SecurityAssociation& sa = table_->at(slot.sa);
  rte_spinlock_lock(&sa.replay_lock);
  const bool fresh = sa.replay.update(slot.seq);
  rte_spinlock_unlock(&sa.replay_lock);
  if (!fresh) return Verdict::drop(kDropReasons["replayed"]);
  const uint32_t payload = slot.esp + kHdrLen + slot.iv_len;
  const uint32_t trailer = len - slot.icv_len - kTrailerLen;
  const uint32_t pad = d[trailer];
  const uint8_t next_header = d[trailer + 1];
  if (next_header != kNextHeaderIpv4 && next_header != kNextHeaderIpv6)
    return Verdict::drop(kDropReasons["bad-inner"]);
  if (pad > trailer - payload) return Verdict::drop(kDropReasons["bad-padding"]);
  for (uint32_t k = 0; k < pad; ++k)
    if (d[trailer - pad + k] != k + 1) return Verdict::drop(kDropReasons["bad-padding"]);
  const uint32_t inner_room = trailer - pad - payload;
  uint8_t* inner = d + payload;
  uint32_t inner_len = 0;
  if (next_header == kNextHeaderIpv4) [[likely]] {
    if (inner_room < kIpv4HdrLen || (inner[0] >> kVersionShift) != kIpv4Version)
      return Verdict::drop(kDropReasons["bad-inner"]);
    inner_len = load_be16(inner + kTotalLengthOffset);
    const uint32_t inner_ihl = (inner[0] & 0x0F) * kIpv4WordBytes;
    if (inner_len < kIpv4HdrLen || inner_len > inner_room || inner_ihl < kIpv4HdrLen ||
        inner_ihl > inner_len)
      return Verdict::drop(kDropReasons["bad-inner"]);
  } else {
    if (inner_room < kIpv6HdrLen || (inner[0] >> kVersionShift) != kIpv6Version)
      return Verdict::drop(kDropReasons["bad-inner"]);
    inner_len = kIpv6HdrLen + load_be16(inner + kIpv6PayloadLenOffset);
    if (inner_len > inner_room) return Verdict::drop(kDropReasons["bad-inner"]);
  }
  const uint8_t* outer = d + kEtherHdrLen;
  const uint8_t outer_tc =
      (outer[0] >> kVersionShift) == kIpv6Version ? ipv6_traffic_class(outer) : outer[kTosOffset];
  if (!decapsulate_ecn(outer_tc, inner)) return Verdict::drop(kDropReasons["ecn-not-ect"]);
  if (const SaLife life = sa.count(inner_len, now_ns_); life != SaLife::kLive) {
    note_life(life, sa);
    if (life != SaLife::kSoftNow) return Verdict::drop(kDropReasons["sa-expired"]);
  }
  const uint32_t strip = payload - kEtherHdrLen;
  std::memmove(d + strip, d, kEtherHdrLen);
  store_be16(d + strip + kEtherTypeOffset,
             next_header == kNextHeaderIpv4 ? kEtherTypeIpv4 : kEtherTypeIpv6);
  rte_pktmbuf_adj(p, static_cast<uint16_t>(strip));
  rte_pktmbuf_trim(p, static_cast<uint16_t>(len - payload - inner_len));
  anno(p).flow_id = slot.sa;
  return Verdict::out(0);
}

// Under the window's lock, once: the number `low` stands for, the window's top, and whether the
// number is new.
bool IPsecESPDecap::check_window(SecurityAssociation& sa, uint32_t low, uint64_t& seq,
                                 uint64_t& top) {
  rte_spinlock_lock(&sa.replay_lock);
  seq = sa.replay.infer(low);
  top = sa.replay.top();
  const bool fresh = sa.replay.check(seq);
  rte_spinlock_unlock(&sa.replay_lock);
  return fresh;
}

uint64_t IPsecESPDecap::pending_top(uint16_t sa) const {
  for (uint32_t k = 0; k < pending_count_; ++k)
    if (pending_[k].sa == sa) return pending_[k].top;
  return 0;
}

void IPsecESPDecap::note_pending(uint16_t sa, uint64_t seq) {
  for (uint32_t k = 0; k < pending_count_; ++k) {
    if (pending_[k].sa == sa) {
      pending_[k].top = std::max(pending_[k].top, seq);
      return;
    }
  }
  pending_[pending_count_++] = Pending{sa, seq};
}

void IPsecESPDecap::flush() {
  PacketBatch& batch = *batch_;
  for (uint32_t failed : crypto_->finish())
    batch.set_result(failed, Verdict::drop(kDropReasons["crypto-error"]));
  for (uint32_t k = completed_count_; k < submitted_count_; ++k) {
    const uint32_t i = submitted_[k];
    if (!batch.result(i).is_drop())
      batch.set_result(i, complete(batch.at(i), slots_[i], scratch_[i]));
  }
  completed_count_ = submitted_count_;
  pending_count_ = 0;
}

void IPsecESPDecap::note_life(SaLife event, const SecurityAssociation& sa) {
  if (event != SaLife::kSoftNow && event != SaLife::kExpiredNow) return;
  ++(event == SaLife::kSoftNow ? soft_expired_ : hard_expired_);
  sa.report(event, name() + " :: " + std::string(kTraits.class_name), now_ns_);
}

void IPsecESPDecap::process_batch(PacketBatch& batch) {
  table_ = slot_->for_worker(worker_);
  if (table_->timed()) now_ns_ = sa_clock_ns();
  batch_ = &batch;
  submitted_count_ = completed_count_ = pending_count_ = 0;
  batch.for_each([&](uint32_t i, Packet* p) { batch.set_result(i, submit(i, p)); });
  flush();
}

}  // namespace fulcrum
