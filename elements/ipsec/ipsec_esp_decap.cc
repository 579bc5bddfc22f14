#include "elements/ipsec/ipsec_esp_decap.hh"

#include <openssl/crypto.h>

#include <cstring>

#include "lib/esp.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kTotalLengthOffset = 2;
constexpr uint32_t kProtoOffset = 9;
constexpr uint32_t kIvSlotLen = 16;

}  // namespace

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

Verdict IPsecESPDecap::submit(uint32_t i, Packet* p, Slot& slot, uint8_t* nonce_iv, uint8_t* icv) {
  using namespace esp;
  const uint32_t len = length(p);
  uint8_t* d = data(p);
  if (len < kEtherHdrLen + kIpv4HdrLen || load_be16(d + kEtherTypeOffset) != kEtherTypeIpv4)
    return Verdict::drop(kDropReasons["not-esp"]);
  const uint8_t* ip = d + kEtherHdrLen;
  const uint32_t ihl = (ip[0] & 0x0F) * kIpv4WordBytes;
  if ((ip[0] >> 4) != kIpv4Version || ihl < kIpv4HdrLen || ip[kProtoOffset] != kIpProtoEsp)
    return Verdict::drop(kDropReasons["not-esp"]);
  const uint32_t total = load_be16(ip + kTotalLengthOffset);
  if (total > len - kEtherHdrLen || total < ihl + kMinEspLen || !rte_pktmbuf_is_contiguous(p))
    return Verdict::drop(kDropReasons["truncated"]);
  if (total < len - kEtherHdrLen)
    rte_pktmbuf_trim(p, static_cast<uint16_t>(len - kEtherHdrLen - total));
  uint8_t* e = d + kEtherHdrLen + ihl;
  const uint16_t sa_index = table_->lookup_in(load_be32(e));
  if (sa_index == SaTable::kNoSa) return Verdict::drop(kDropReasons["unknown-spi"]);
  SecurityAssociation& sa = table_->at(sa_index);
  const uint32_t seq = load_be32(e + kSpiLen);
  rte_spinlock_lock(&sa.replay_lock);
  const bool fresh = sa.replay.check(seq);
  rte_spinlock_unlock(&sa.replay_lock);
  if (!fresh) return Verdict::drop(kDropReasons["replayed"]);
  const uint32_t iv_len = sa.cfg.iv_len();
  const uint32_t esp_len = total - ihl;
  if (esp_len < kHdrLen + iv_len + kTrailerLen + kEspIcvLen)
    return Verdict::drop(kDropReasons["truncated"]);
  const uint32_t cipher_len = esp_len - kHdrLen - iv_len - kEspIcvLen;
  slot = Slot{sa_index, static_cast<uint16_t>(kEtherHdrLen + ihl), seq, iv_len};
  if (sa.cfg.cipher == EspCipher::kAesCbc) {
    if (cipher_len % kAesBlockLen != 0) return Verdict::drop(kDropReasons["truncated"]);
    crypto_->hmac_then_cbc_decrypt(sa.hmac, e, esp_len - kEspIcvLen, icv, sa.aes, e + kHdrLen,
                                   e + kHdrLen + iv_len, cipher_len, i);
  } else {
    std::memcpy(nonce_iv, sa.aes.nonce, kCtrNonceLen);
    std::memcpy(nonce_iv + kCtrNonceLen, e + kHdrLen, kIvLen);
    crypto_->hmac_then_ctr_decrypt(sa.hmac, e, esp_len - kEspIcvLen, icv, sa.aes, nonce_iv,
                                   e + kHdrLen + iv_len, cipher_len, i);
  }
  return Verdict::out(0);
}

Verdict IPsecESPDecap::complete(Packet* p, const Slot& slot, const uint8_t* icv) {
  using namespace esp;
  uint8_t* d = data(p);
  const uint32_t len = length(p);
  if (CRYPTO_memcmp(icv, d + len - kEspIcvLen, kEspIcvLen) != 0)
    return Verdict::drop(kDropReasons["bad-icv"]);
  SecurityAssociation& sa = table_->at(slot.sa);
  rte_spinlock_lock(&sa.replay_lock);
  const bool fresh = sa.replay.update(slot.seq);
  rte_spinlock_unlock(&sa.replay_lock);
  if (!fresh) return Verdict::drop(kDropReasons["replayed"]);
  const uint32_t payload = slot.esp + kHdrLen + slot.iv_len;
  const uint32_t trailer = len - kEspIcvLen - kTrailerLen;
  const uint32_t pad = d[trailer];
  if (d[trailer + 1] != kNextHeaderIpv4) return Verdict::drop(kDropReasons["not-ipv4"]);
  if (pad > trailer - payload) return Verdict::drop(kDropReasons["bad-padding"]);
  for (uint32_t k = 0; k < pad; ++k)
    if (d[trailer - pad + k] != k + 1) return Verdict::drop(kDropReasons["bad-padding"]);
  const uint32_t inner_room = trailer - pad - payload;
  const uint8_t* inner = d + payload;
  if (inner_room < kIpv4HdrLen || (inner[0] >> 4) != kIpv4Version)
    return Verdict::drop(kDropReasons["not-ipv4"]);
  const uint32_t inner_len = load_be16(inner + kTotalLengthOffset);
  if (inner_len < kIpv4HdrLen || inner_len > inner_room)
    return Verdict::drop(kDropReasons["not-ipv4"]);
  const uint32_t strip = payload - kEtherHdrLen;
  std::memmove(d + strip, d, kEtherHdrLen);
  rte_pktmbuf_adj(p, static_cast<uint16_t>(strip));
  rte_pktmbuf_trim(p, static_cast<uint16_t>(len - payload - inner_len));
  anno(p).flow_id = slot.sa;
  return Verdict::out(0);
}

void IPsecESPDecap::process_batch(PacketBatch& batch) {
  table_ = slot_->for_worker(worker_);
  alignas(16) uint8_t ivs[kMaxBatch][kIvSlotLen];
  alignas(16) uint8_t icvs[kMaxBatch][kIvSlotLen];
  Slot slots[kMaxBatch];
  batch.for_each(
      [&](uint32_t i, Packet* p) { batch.set_result(i, submit(i, p, slots[i], ivs[i], icvs[i])); });
  for (uint32_t failed : crypto_->finish())
    batch.set_result(failed, Verdict::drop(kDropReasons["crypto-error"]));
  batch.for_each([&](uint32_t i, Packet* p) {
    if (!batch.result(i).is_drop()) batch.set_result(i, complete(p, slots[i], icvs[i]));
  });
}

}  // namespace fulcrum
