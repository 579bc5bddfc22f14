// The IPsec kernels' host-native form for the emulated device (emu_spec.hh `native`): the
// result of kernels/ipsec.cl's ipsec_aes, ipsec_hmac_sha1 and ipsec_aes_hmac_fused computed with
// intel-ipsec-mb (lib/ipsec_crypto.hh, the CPU path's code) from the same buffers: AES-CTR
// (RFC 3686) of region[16, cipher_end) in place, HMAC-SHA1-96 of region[0, hash_end) after it
// into icv_out. The SA table's records (kernels/common/sa_record.h) give the key (the first Nk
// round-key words are the key itself), the nonce and the HMAC chaining states. CBC SAs get only
// the HMAC, as in the kernel; a packet whose SA index is past the table, or whose region cannot
// hold the ICV, a zero ICV. A launch with a GCM SA runs the portable kernel (kPortable).
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <vector>

#include "kernels/common/sa_record.h"
#include "lib/ipsec_crypto.hh"
#include "offload/emu/emu_kernels.hh"

namespace fulcrum::offload {
namespace {

constexpr uint32_t kRegionWords = 2;
constexpr uint32_t kSeqHiBytes = 4;
constexpr uint32_t kIvAt = 8;

uint32_t bswap(uint32_t v) {
  return __builtin_bswap32(v);
}

// One SA's keys in intel-ipsec-mb's form, and the record they came from (a table re-uploaded
// with other keys is noticed by comparing it).
struct NativeSa {
  IpsecSaRecord record;
  AesKey aes;
  HmacSha1Key hmac;
};

struct NativeState {
  std::unique_ptr<MbCrypto> mb;
  std::vector<std::unique_ptr<NativeSa>> sas;
  std::vector<uint32_t> checked;  // the launch in which each SA's record was last compared
  uint32_t launch = 0;
  std::vector<std::array<uint8_t, kCtrNonceIvLen>> nonce_iv;  // per packet, until finish()
};

// The SA's keys, expanded again when its record differs from the one cached.
const NativeSa& native_sa(NativeState& st, const IpsecSaRecord& rec, uint32_t index) {
  if (index >= st.sas.size()) {
    st.sas.resize(index + 1);
    st.checked.resize(index + 1, 0);
  }
  std::unique_ptr<NativeSa>& sa = st.sas[index];
  if (st.checked[index] == st.launch && sa) return *sa;
  st.checked[index] = st.launch;
  if (sa && std::memcmp(&sa->record, &rec, sizeof(rec)) == 0) return *sa;
  if (!sa) sa = std::make_unique<NativeSa>();
  std::memcpy(&sa->record, &rec, sizeof(rec));
  const size_t key_len = rec.rounds == IPSEC_AES256_ROUNDS ? kAes256KeyLen : kAesKeyLen;
  uint32_t key[kAes256KeyLen / 4];
  for (size_t w = 0; w < key_len / 4; ++w) key[w] = bswap(rec.round_keys[w]);
  const uint32_t nonce = bswap(rec.nonce);
  st.mb->expand_aes(reinterpret_cast<const uint8_t*>(key), key_len,
                    reinterpret_cast<const uint8_t*>(&nonce), sa->aes);
  // intel-ipsec-mb keeps the chaining states H0..H4 as host-order words, padded to a block.
  std::memset(&sa->hmac, 0, sizeof(sa->hmac));
  std::memcpy(sa->hmac.ipad, rec.ipad_state, sizeof(rec.ipad_state));
  std::memcpy(sa->hmac.opad, rec.opad_state, sizeof(rec.opad_state));
  return *sa;
}

template <bool kAes, bool kSha>
EmuNativeRun native_ipsec(const EmuArg* args, uint32_t items) {
  thread_local NativeState st;
  if (!st.mb) {
    Result<std::unique_ptr<MbCrypto>> mb = MbCrypto::create();
    if (!mb) return EmuNativeRun::kPortable;
    st.mb = std::move(mb.value());
  }
  auto* bytes = static_cast<uint8_t*>(args[0].ptr);
  const auto* regions = static_cast<const uint32_t*>(args[1].ptr);
  const auto* sa_index = static_cast<const uint32_t*>(args[2].ptr);
  const auto* table = static_cast<const uint32_t*>(args[3].ptr);
  auto* icv_out = kSha ? static_cast<uint8_t*>(args[4].ptr) : nullptr;
  const uint32_t count = std::min(items, args[kSha ? 5 : 4].value);
  const uint32_t sa_count = table[IPSEC_SA_COUNT_WORD];
  const auto* records = reinterpret_cast<const IpsecSaRecord*>(table) + 1;
  for (uint32_t i = 0; i < count; ++i)
    if (sa_index[i] < sa_count && records[sa_index[i]].mode == IPSEC_MODE_GCM)
      return EmuNativeRun::kPortable;
  ++st.launch;
  if (st.nonce_iv.size() < count) st.nonce_iv.resize(count);
  for (uint32_t i = 0; i < count; ++i) {
    if (kSha) std::memset(icv_out + size_t{i} * kIcvLen, 0, kIcvLen);
    const uint32_t index = sa_index[i];
    const uint32_t len = regions[kRegionWords * i + 1];
    if (index >= sa_count || len < kIcvLen) continue;
    const IpsecSaRecord& rec = records[index];
    const NativeSa& sa = native_sa(st, rec, index);
    uint8_t* r = bytes + regions[kRegionWords * i];
    const uint32_t cipher_end = len - kIcvLen;
    if (kAes && rec.mode == IPSEC_MODE_CTR && cipher_end > kAesBlockLen) {
      uint8_t* nonce_iv = st.nonce_iv[i].data();
      std::memcpy(nonce_iv, sa.aes.nonce, kCtrNonceLen);
      std::memcpy(nonce_iv + kCtrNonceLen, r + kIvAt, kCtrIvLen);
      st.mb->ctr(sa.aes, nonce_iv, r + kAesBlockLen, cipher_end - kAesBlockLen, i);
    }
  }
  if (!st.mb->finish().empty()) return EmuNativeRun::kFailed;
  if (!kSha) return EmuNativeRun::kDone;
  for (uint32_t i = 0; i < count; ++i) {
    const uint32_t index = sa_index[i];
    const uint32_t len = regions[kRegionWords * i + 1];
    if (index >= sa_count || len < kIcvLen) continue;
    const NativeSa& sa = native_sa(st, records[index], index);
    const uint32_t hash_end = len - kIcvLen + (records[index].esn != 0 ? kSeqHiBytes : 0);
    st.mb->hmac_sha1(sa.hmac, bytes + regions[kRegionWords * i], hash_end,
                     icv_out + size_t{i} * kIcvLen, kIcvLen, i);
  }
  return st.mb->finish().empty() ? EmuNativeRun::kDone : EmuNativeRun::kFailed;
}

const EmuNativeRegistration kAes{"ipsec_aes", &native_ipsec<true, false>};
const EmuNativeRegistration kHmac{"ipsec_hmac_sha1", &native_ipsec<false, true>};
const EmuNativeRegistration kFused{"ipsec_aes_hmac_fused", &native_ipsec<true, true>};

}  // namespace
}  // namespace fulcrum::offload
