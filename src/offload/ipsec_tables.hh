// IPsec ESP outbound crypto on a device (NBA §4 IPsec gateway; FlowShader §III-E fusion): the SA
// table uploaded once per device (IpsecTables), and the three kernels that use it
// (kernels/ipsec.cl):
//
//   ipsec_aes(bytes, regions, items, sa_table, count)                     "bbbbu"
//   ipsec_hmac_sha1(bytes, regions, items, sa_table, icv_out, count)      "bbbbbu"
//   ipsec_aes_hmac_fused(bytes, regions, items, sa_table, icv_out, count) "bbbbbu"
//
// One work item per packet. items: a uint32 SA index per packet. regions: per packet a uint32
// offset into `bytes` (a multiple of 16) and a uint32 length; the region is the ESP part of the
// frame from the SPI through the ICV's room (12 bytes, 16 for GCM SAs), so region[8, 16) is the
// IV and the ciphertext runs from 16 to the ICV's room. ipsec_aes encrypts it in place per the
// SA: AES-128/256-CTR (RFC 3686: counter block = nonce | IV | counter from 1), or
// AES-128/256-GCM (RFC 4106: salt | IV | counter from 2, AAD = SPI | sequence number or, with
// ESN, SPI | high half | low half) with the 16-byte tag written into the ICV's room. icv_out:
// 12 bytes per packet, HMAC-SHA1-96 (RFC 2404) over the region up to the ICV's room after
// encryption, with ESN followed by the 4 bytes that start the ICV's room (the high half of the
// sequence number, put there by IPsecESPEncap); zero for GCM SAs, which the HMAC leaves alone.
// The fused kernel encrypts and hashes in one pass over each packet. CBC SAs are left alone
// (the elements keep them on the CPU), and so is a packet whose SA index is not below the
// table's SA count (it gets a zero ICV).
//
// Device SA table: kernels/common/sa_record.h, shared with the kernel (a header record with the
// SA count, then one IpsecSaRecord per SA: round keys, nonce or salt, HMAC ipad/opad states,
// cipher, rounds, ESN, GCM hash key and its GHASH table). The round keys, chaining states and
// GHASH table are computed here with our own FIPS-197 key expansion, the FIPS 180-4 SHA-1
// compression function of kernels/common/sha1.h (the kernels' own) and Shoup's table
// construction; H = E(K, 0^128) comes from OpenSSL; all independent of intel-ipsec-mb.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>
#include <vector>

#include "core/result.hh"
#include "kernels/common/sa_record.h"
#include "lib/ipsec_sa.hh"
#include "offload/device.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

inline constexpr const char* kIpsecAesKernel = "ipsec_aes";
inline constexpr const char* kIpsecHmacSha1Kernel = "ipsec_hmac_sha1";
inline constexpr const char* kIpsecFusedKernel = "ipsec_aes_hmac_fused";

// Word numbers within a record (kernels/common/sa_record.h), checked against the layout the
// header documents.
inline constexpr uint32_t kIpsecRecordWords = IPSEC_RECORD_WORDS;
inline constexpr uint32_t kIpsecRoundKeyWords = IPSEC_ROUND_KEY_WORDS;
inline constexpr uint32_t kIpsecNonceWord = offsetof(IpsecSaRecord, nonce) / sizeof(uint32_t);
inline constexpr uint32_t kIpsecIpadWord = offsetof(IpsecSaRecord, ipad_state) / sizeof(uint32_t);
inline constexpr uint32_t kIpsecOpadWord = offsetof(IpsecSaRecord, opad_state) / sizeof(uint32_t);
inline constexpr uint32_t kIpsecModeWord = offsetof(IpsecSaRecord, mode) / sizeof(uint32_t);
inline constexpr uint32_t kIpsecRoundsWord = offsetof(IpsecSaRecord, rounds) / sizeof(uint32_t);
inline constexpr uint32_t kIpsecEsnWord = offsetof(IpsecSaRecord, esn) / sizeof(uint32_t);
inline constexpr uint32_t kIpsecHashKeyWord = offsetof(IpsecSaRecord, hash_key) / sizeof(uint32_t);
inline constexpr uint32_t kIpsecGhashTableWord =
    offsetof(IpsecSaRecord, ghash_table) / sizeof(uint32_t);
inline constexpr uint32_t kSha1StateWords = IPSEC_HMAC_STATE_WORDS;
static_assert(sizeof(IpsecSaRecord) == kIpsecRecordWords * sizeof(uint32_t));
static_assert(offsetof(IpsecSaRecord, round_keys) == 0);
static_assert(kIpsecNonceWord == 60 && kIpsecIpadWord == 61 && kIpsecOpadWord == 66 &&
              kIpsecModeWord == 71 && kIpsecRoundsWord == 72 && kIpsecEsnWord == 73 &&
              kIpsecHashKeyWord == 74 && kIpsecGhashTableWord == 80);
static_assert(kIpsecGhashTableWord % IPSEC_GCM_BLOCK_WORDS == 0);
static_assert(kIpsecGhashTableWord + IPSEC_GHASH_TABLE_WORDS == kIpsecRecordWords);
static_assert(kIpsecNonceWord == kIpsecRoundKeyWords);
static_assert(kIpsecOpadWord - kIpsecIpadWord == IPSEC_HMAC_STATE_WORDS);
static_assert(std::is_standard_layout_v<IpsecSaRecord> &&
              std::is_trivially_copyable_v<IpsecSaRecord>);
// Regions start at multiples of this in the bytes buffer (so the ciphertext is block-aligned).
inline constexpr uint32_t kIpsecRegionAlign = 16;
// Where the ciphertext starts within a region: SPI, sequence number, IV.
inline constexpr uint32_t kIpsecCipherOffset = 16;
inline constexpr uint32_t kIpsecItemBytes = sizeof(uint32_t);
inline constexpr uint32_t kIpsecIcvBytes = 12;
inline constexpr uint32_t kIpsecGcmIcvBytes = 16;

using AesRoundKeys = std::array<uint32_t, kIpsecRoundKeyWords>;
using Sha1State = std::array<uint32_t, kSha1StateWords>;
using GhashTable = std::array<uint32_t, IPSEC_GHASH_TABLE_WORDS>;

// FIPS-197 §5.2 key expansion of a 16-byte (AES-128: words 0..43, the rest zero) or 32-byte
// (AES-256: words 0..59) key.
AesRoundKeys aes_expand_key(const uint8_t* key, size_t key_len);
// The GCM hash key H = E(K, 0^128) (SP 800-38D §6.4), by OpenSSL, as four big-endian words.
Result<std::array<uint32_t, IPSEC_GCM_BLOCK_WORDS>> gcm_hash_key(const uint8_t* key,
                                                                 size_t key_len);
// The 4-bit GHASH table of H (kernels/common/sa_record.h: entry 8 is H).
GhashTable ghash_table(const std::array<uint32_t, IPSEC_GCM_BLOCK_WORDS>& h);
// One SHA-1 compression (FIPS 180-4 §6.1.2) of a 64-byte block into `state`.
void sha1_compress(Sha1State& state, const uint8_t* block);
// The HMAC-SHA1 chaining states after key ^ ipad and key ^ opad (a 20-byte key, RFC 2104).
void hmac_sha1_states(const uint8_t* key, Sha1State& inner, Sha1State& outer);

// The device table's words for `table` (header record, then one record per SA).
Result<std::vector<uint32_t>> ipsec_sa_records(const SaTable& table);

// The records of one SaTable on one device.
class IpsecTables {
 public:
  static Result<std::unique_ptr<IpsecTables>> upload(Device& device, const SaTable& table);

  Device& device() const { return device_; }
  const DeviceBuffer& sa_table() const { return *table_; }
  uint32_t sas() const { return sas_; }
  // The kernels' arguments in a whole-packet task (offload/task.hh layout): ipsec_aes's, and
  // ipsec_hmac_sha1's (the same with the ICVs in kResultsOutput; the fused kernel takes those).
  std::vector<TaskArg> aes_args() const;
  std::vector<TaskArg> hmac_args() const;

 private:
  IpsecTables(Device& d, std::unique_ptr<DeviceBuffer> t, uint32_t sas)
      : device_(d), table_(std::move(t)), sas_(sas) {}

  Device& device_;
  std::unique_ptr<DeviceBuffer> table_;
  uint32_t sas_;
};

}  // namespace fulcrum::offload
