// IPsecAuthHMACSHA1 — writes the ESP ICV of outbound packets: HMAC-SHA1-96 (RFC 2404).
//
// Ports:     input 0: frames from IPsecAES. output 0: the same frames with the last 12 bytes
//            (reserved by IPsecESPEncap) set to the first 96 bits of HMAC-SHA1 over the ESP
//            header, IV and encrypted payload and trailer, keyed with the SA's AUTH_KEY.
//            Drops: no-sa (flow_id is not an SA of the file), truncated (no room for an ESP
//            header, IV, trailer and ICV), crypto-error (the intel-ipsec-mb job failed).
// Config:    SA_FILE (positional): the SA table IPsecESPEncap uses (shared storage key
//            "ipsec-sa:SA_FILE").
// Uses:      flow_id (SA index, set by IPsecESPEncap).  Sets: nothing.
// Counters:  none.
// Offload:   CPU: one intel-ipsec-mb job per packet (IMB_AUTH_HMAC_SHA_1 with the ipad/opad
//            states precomputed per SA), the batch submitted through the burst API at once;
//            the library hashes several packets together (SIMD lanes or SHA-NI).
#pragma once

#include <array>
#include <memory>
#include <string>
#include <string_view>

#include "core/element.hh"
#include "lib/ipsec_crypto.hh"
#include "lib/ipsec_sa.hh"

namespace fulcrum {

class IPsecAuthHMACSHA1 final : public ElementBase<IPsecAuthHMACSHA1> {
 public:
  enum DropReason : int { kDropNoSa, kDropTruncated, kDropCryptoError };
  static constexpr std::array<std::string_view, 3> kDropReasons{"no-sa", "truncated",
                                                                "crypto-error"};
  static constexpr ElementTraits kTraits{"IPsecAuthHMACSHA1", 1, 1, kDropReasons};

  Status configure(Args& args) override;
  Status initialize(const InitContext& ctx) override;
  void process_batch(PacketBatch& batch) override;

 private:
  std::string file_;
  SourceLoc loc_;
  std::shared_ptr<const SaTable> table_;
  std::unique_ptr<MbCrypto> crypto_;
};

}  // namespace fulcrum
