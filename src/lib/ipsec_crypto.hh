// ESP crypto through intel-ipsec-mb (1.3): AES-CTR (RFC 3686), AES-CBC (RFC 3602), both with
// 128- or 256-bit keys, HMAC-SHA1-96 (RFC 2404) and AES-GCM with a 16-byte ICV (RFC 4106).
// Elements queue one job per packet with the calls below and collect the results with
// finish(). CTR and HMAC jobs go to the library's burst API (IMB_SUBMIT_CIPHER_BURST /
// IMB_SUBMIT_HASH_BURST, up to 128 jobs a call; SHA1 of several packets at once in SIMD lanes);
// the chained inbound job and GCM go through the job API (IMB_GET_NEXT_JOB / IMB_SUBMIT_JOB /
// IMB_FLUSH_JOB).
//
//   MbCrypto& c = ...;               // one per worker replica (IMB_MGR is not thread-safe)
//   c.ctr(key, iv, data, len, i);    // in place
//   c.hmac_sha1(hkey, msg, len, icv, kIcvLen, i);
//   for (uint32_t failed : c.finish()) ...   // tags of jobs the library rejected
//
// Buffers (data, IV, tag output) must stay valid until finish() returns.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/result.hh"

struct IMB_MGR;
struct IMB_JOB;

namespace fulcrum {

inline constexpr size_t kAesKeyLen = 16;  // AES-128
inline constexpr size_t kAes256KeyLen = 32;
inline constexpr size_t kCtrNonceLen = 4;     // RFC 3686 nonce, from the key material
inline constexpr size_t kCtrIvLen = 8;        // RFC 3686 per-packet IV, carried in the packet
inline constexpr size_t kCtrNonceIvLen = 12;  // nonce | IV; the library appends counter 1
inline constexpr size_t kCbcIvLen = 16;       // RFC 3602 per-packet IV, carried in the packet
inline constexpr size_t kAesBlockLen = 16;
inline constexpr size_t kSha1BlockLen = 64;
inline constexpr size_t kSha1DigestLen = 20;
inline constexpr size_t kHmacSha1KeyLen = 20;
inline constexpr size_t kIcvLen = 12;  // HMAC-SHA1-96
inline constexpr size_t kGcmIcvLen = 16;
inline constexpr size_t kGcmSaltLen = 4;    // RFC 4106 salt, from the key material
inline constexpr size_t kGcmIvLen = 8;      // RFC 4106 per-packet IV, carried in the packet
inline constexpr size_t kGcmNonceLen = 12;  // salt | IV
inline constexpr size_t kAesRounds128 = 11;
inline constexpr size_t kAesRounds256 = 15;
inline constexpr size_t kAesRoundKeyWords = 4;
inline constexpr size_t kGcmKeyDataLen = 2048;  // >= sizeof(gcm_key_data), checked in the .cc

// An expanded AES-128 or AES-256 key (CTR uses the encryption schedule both ways; CBC decrypts
// with dec).
struct AesKey {
  alignas(16) uint32_t enc[kAesRounds256 * kAesRoundKeyWords];
  alignas(16) uint32_t dec[kAesRounds256 * kAesRoundKeyWords];
  uint8_t nonce[kCtrNonceLen];  // CTR nonce or GCM salt
  uint32_t key_len = kAesKeyLen;
};

// An AES-GCM key: intel-ipsec-mb's gcm_key_data (round keys and GHASH tables), kept opaque here.
struct GcmKey {
  alignas(64) uint8_t data[kGcmKeyDataLen];
  uint8_t salt[kGcmSaltLen];
  uint32_t key_len = kAesKeyLen;
};

// HMAC-SHA1 inner and outer states: SHA1 of (key ^ ipad) and (key ^ opad), one block each.
struct HmacSha1Key {
  alignas(16) uint8_t ipad[kSha1BlockLen];
  alignas(16) uint8_t opad[kSha1BlockLen];
};

class MbCrypto {
 public:
  // Allocates a manager and picks the code path for this CPU: init_mb_mgr_auto, except that
  // the SSE manager (SHA-NI) replaces AVX/AVX2 on CPUs with SHA extensions.
  static Result<std::unique_ptr<MbCrypto>> create();
  ~MbCrypto();
  MbCrypto(const MbCrypto&) = delete;
  MbCrypto& operator=(const MbCrypto&) = delete;

  // Key setup (not per packet). `key` is `key_len` (16 or 32) bytes, `nonce` 4.
  void expand_aes(const uint8_t* key, size_t key_len, const uint8_t* nonce, AesKey& out);
  void expand_gcm(const uint8_t* key, size_t key_len, const uint8_t* salt, GcmKey& out);
  // Any key length (keys above one block are hashed first, RFC 2104).
  void prepare_hmac_sha1(const uint8_t* key, size_t len, HmacSha1Key& out);

  // AES-CTR of `len` bytes at `data`, in place. `nonce_iv` is the 12-byte nonce | IV.
  void ctr(const AesKey& key, const uint8_t* nonce_iv, uint8_t* data, size_t len, uint32_t tag);
  // AES-CBC encryption of `len` bytes (a multiple of 16) at `data`, in place, 16-byte IV.
  void cbc_encrypt(const AesKey& key, const uint8_t* iv, uint8_t* data, size_t len, uint32_t tag);
  // HMAC-SHA1 of `len` bytes at `msg`, the first `tag_len` (12 or 20) bytes into `out`.
  void hmac_sha1(const HmacSha1Key& key, const uint8_t* msg, size_t len, uint8_t* out,
                 size_t tag_len, uint32_t tag);
  // One chained job for the inbound path: HMAC-SHA1-96 over [msg, msg + auth_len) into
  // `icv_out`, then AES-CTR decryption of [cipher, cipher + cipher_len) in place.
  void hmac_then_ctr_decrypt(const HmacSha1Key& hkey, const uint8_t* msg, size_t auth_len,
                             uint8_t* icv_out, const AesKey& key, const uint8_t* nonce_iv,
                             uint8_t* cipher, size_t cipher_len, uint32_t tag);
  // The same with AES-CBC decryption (`iv` 16 bytes, cipher_len a multiple of 16).
  void hmac_then_cbc_decrypt(const HmacSha1Key& hkey, const uint8_t* msg, size_t auth_len,
                             uint8_t* icv_out, const AesKey& key, const uint8_t* iv,
                             uint8_t* cipher, size_t cipher_len, uint32_t tag);

  // AES-GCM (RFC 4106) of `len` bytes at `data` in place, `nonce` the 12-byte salt | IV, `aad`
  // the ESP header (8 bytes, or 12 with the ESN high half); the 16-byte tag into `tag_out`.
  // Decryption writes the tag it computes: the caller compares it with the packet's.
  void gcm(const GcmKey& key, bool encrypt, const uint8_t* nonce, const uint8_t* aad,
           size_t aad_len, uint8_t* data, size_t len, uint8_t* tag_out, uint32_t tag);

  // Completes every queued job; returns the tags of jobs that failed (empty normally).
  std::span<const uint32_t> finish();

  static constexpr uint32_t kBurst = 128;  // IMB_MAX_BURST_SIZE

 private:
  explicit MbCrypto(IMB_MGR* mgr);
  void drain_completed(void* first);
  void record(void* job);
  void submit_ctr_burst();
  void submit_hmac_burst();
  void submit_cbc_burst();
  void hmac_then_decrypt(const HmacSha1Key& hkey, const uint8_t* msg, size_t auth_len,
                         uint8_t* icv_out, const AesKey& key, bool cbc, const uint8_t* iv,
                         uint8_t* cipher, size_t cipher_len, uint32_t tag);

  IMB_MGR* mgr_;
  std::unique_ptr<IMB_JOB[]> ctr_jobs_;
  std::unique_ptr<IMB_JOB[]> hmac_jobs_;
  std::unique_ptr<IMB_JOB[]> cbc_jobs_;
  uint32_t cbc_count_ = 0;
  uint32_t cbc_key_len_ = 0;  // the key length of the queued CBC jobs (one burst, one length)
  uint32_t ctr_count_ = 0;
  uint32_t ctr_key_len_ = 0;
  uint32_t hmac_count_ = 0;
  std::vector<uint32_t> failed_;
  std::vector<uint32_t> reported_;
};

}  // namespace fulcrum
