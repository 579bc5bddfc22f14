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
    uint8_t* d = data(p);
    const uint32_t icv = length(p) - kEspIcvLen;
    crypto_->hmac_sha1(table_->at(sa_index).hmac, d + off, icv - off, d + icv, kIcvLen, i);
    batch.set_result(i, Verdict::out(0));
  });
  for (uint32_t failed : crypto_->finish())
    batch.set_result(failed, Verdict::drop(kDropReasons["crypto-error"]));
}

}  // namespace fulcrum
