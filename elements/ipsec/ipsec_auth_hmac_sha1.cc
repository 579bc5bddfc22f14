#include "elements/ipsec/ipsec_auth_hmac_sha1.hh"

#include "lib/esp.hh"

namespace fulcrum {

void IPsecAuthHMACSHA1::process_batch(PacketBatch& batch) {
  using namespace esp;
  table_ = slot_->for_worker(worker_);
  const size_t sas = table_->size();
  batch.for_each([&](uint32_t i, Packet* p) {
    const uint32_t sa_index = anno(p).flow_id;
    if (sa_index >= sas) return batch.set_result(i, Verdict::drop(kDropReasons["no-sa"]));
    const uint32_t off = esp_offset(p);
    if (off == 0) return batch.set_result(i, Verdict::drop(kDropReasons["truncated"]));
    const SecurityAssociation& sa = table_->at(sa_index);
    if (!sa.cfg.hmac()) return batch.set_result(i, Verdict::out(0));
    uint8_t* d = data(p);
    const uint32_t icv = length(p) - kEspIcvLen;
    // With ESN the high 32 sequence bits, in the ICV's room, end the hashed bytes.
    const uint32_t hashed = icv - off + (sa.cfg.esn ? kSeqLen : 0);
    crypto_->hmac_sha1(sa.hmac, d + off, hashed, d + icv, kIcvLen, i);
    batch.set_result(i, Verdict::out(0));
  });
  for (uint32_t failed : crypto_->finish())
    batch.set_result(failed, Verdict::drop(kDropReasons["crypto-error"]));
}

}  // namespace fulcrum
