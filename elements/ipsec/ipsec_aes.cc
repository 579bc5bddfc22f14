#include "elements/ipsec/ipsec_aes.hh"

#include <cstring>

#include "lib/esp.hh"

namespace fulcrum {

void IPsecAES::process_batch(PacketBatch& batch) {
  using namespace esp;
  alignas(16) uint8_t ivs[kMaxBatch][kCtrNonceIvLen + kAlign];
  alignas(16) uint8_t aads[kMaxBatch][kAadSlotLen];
  table_ = slot_->for_worker(worker_);
  const size_t sas = table_->size();
  batch.for_each([&](uint32_t i, Packet* p) {
    const uint32_t sa_index = anno(p).flow_id;
    if (sa_index >= sas) return batch.set_result(i, Verdict::drop(kDropReasons["no-sa"]));
    const uint32_t off = esp_offset(p);
    if (off == 0) return batch.set_result(i, Verdict::drop(kDropReasons["truncated"]));
    const SecurityAssociation& sa = table_->at(sa_index);
    uint8_t* e = data(p) + off;
    const uint32_t start = off + kHdrLen + sa.cfg.iv_len();
    const uint32_t end = length(p) - sa.cfg.icv_len();
    if (end < start + kTrailerLen)
      return batch.set_result(i, Verdict::drop(kDropReasons["truncated"]));
    if (sa.cfg.cipher == EspCipher::kAesGcm) {
      std::memcpy(ivs[i], sa.gcm->salt, kGcmSaltLen);
      std::memcpy(ivs[i] + kGcmSaltLen, e + kHdrLen, kGcmIvLen);
      const uint32_t aad_len = gcm_aad(e, sa.cfg.esn ? data(p) + end : nullptr, aads[i]);
      crypto_->gcm(*sa.gcm, true, ivs[i], aads[i], aad_len, data(p) + start, end - start,
                   data(p) + end, i);
    } else if (sa.cfg.cipher == EspCipher::kAesCbc) {
      if (end < start + kAesBlockLen || (end - start) % kAesBlockLen != 0)
        return batch.set_result(i, Verdict::drop(kDropReasons["truncated"]));
      crypto_->cbc_encrypt(sa.aes, e + kHdrLen, data(p) + start, end - start, i);
    } else {
      std::memcpy(ivs[i], sa.aes.nonce, kCtrNonceLen);
      std::memcpy(ivs[i] + kCtrNonceLen, e + kHdrLen, kIvLen);
      crypto_->ctr(sa.aes, ivs[i], data(p) + start, end - start, i);
    }
    batch.set_result(i, Verdict::out(0));
  });
  for (uint32_t failed : crypto_->finish())
    batch.set_result(failed, Verdict::drop(kDropReasons["crypto-error"]));
}

}  // namespace fulcrum
