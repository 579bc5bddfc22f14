// WebGateway: the Web Security Gateway NF (paper 004): clients send request bodies encrypted
// with AES-128-CBC, the gateway decrypts them before they reach the backend, and encrypts the
// backend's response bodies to the client.
//
// Arguments:
//   KEY        file     the AES-128 key: 32 hex digits (blanks and a trailing newline allowed)
//   REQUESTS   boolean  decrypt request bodies (default true)
//   RESPONSES  boolean  encrypt response bodies (default true)
// Wire format (both ways): body = IV (16 bytes) || AES-128-CBC(plaintext || PKCS#7 padding).
// Requests: a body whose length is not 16 + a positive multiple of 16 is answered 400 (kRespond,
// reason "WebGateway: bad length"), one whose padding is wrong 400 "WebGateway: bad padding";
// otherwise the body becomes the plaintext. Responses: a fresh IV from a CSPRNG (IvSource: an
// AES-CTR DRBG seeded by OpenSSL's RAND_bytes) and the padded plaintext encrypted. Empty bodies
// pass unchanged both ways (GET requests, 204/304 and HEAD responses have none); so do raw
// (non-HTTP) chunks on the CPU, whose boundaries are arbitrary reads, not messages.
// Length: the body changes length; a Content-Length header in m.head is rewritten to the new
// length (the proxy frames the message it sends from the body's size in any case).
// Counters: counters(). Crypto: OpenSSL EVP (AES-NI), one context per instance, the key
// schedule computed once; not reentrant (one instance per thread).
//
// Device form (kernels/common/l7_ops.h): table = l7/flow/device_tables.hh's aes128_cbc_table
// (44 encryption round-key words, then the equivalent inverse cipher's 44 in the same order). The
// op is L7_OP_AES128_CBC_DECRYPT when only REQUESTS is on and L7_OP_AES128_CBC_ENCRYPT when only
// RESPONSES is on; with both, the NF has no device form (the contract gives an NF one op code;
// finish_device handles both directions should the kernel pick the op by direction). prepare_device
// writes IV || plaintext || padding for ENCRYPT; finish_device truncates decrypted bodies to out[0]
// or rejects them (out[1]), and closes a raw chunk that went through the device (its bytes were
// transformed as if it were a body).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/args.hh"
#include "l7/nf/nf.hh"
#include "lib/iv_source.hh"

struct evp_cipher_ctx_st;

namespace fulcrum::l7 {

inline constexpr size_t kGatewayBlock = 16;

class WebGateway final : public FlowNf {
 public:
  struct Counters {
    uint64_t decrypted = 0;
    uint64_t encrypted = 0;
    uint64_t bad_length = 0;
    uint64_t bad_padding = 0;
    uint64_t passed = 0;         // empty bodies and raw chunks, unchanged
    uint64_t device_raw = 0;     // raw chunks that reached finish_device: closed
    uint64_t crypto_errors = 0;  // OpenSSL or IV source failures (none expected): 500
  };

  static Result<std::unique_ptr<WebGateway>> create(const uint8_t key[kGatewayBlock], bool requests,
                                                    bool responses);
  static Result<std::unique_ptr<FlowNf>> from_args(Args& a);
  ~WebGateway() override;

  std::string_view name() const override { return "WebGateway"; }
  void process(Message& m, std::span<uint8_t> state) override;
  std::optional<DeviceOp> device_op() const override;
  void prepare_device(Message& m) override;
  void finish_device(Message& m, std::span<uint8_t> state, std::span<const uint32_t> out) override;

  const Counters& counters() const { return counters_; }

 private:
  WebGateway(bool requests, bool responses) : requests_(requests), responses_(responses) {}
  bool applies(const Message& m) const {
    return m.dir == Direction::kRequest ? requests_ : responses_;
  }
  void decrypt(Message& m);
  void encrypt(Message& m);
  void reject(Message& m, uint16_t status, const char* why);
  static void set_length(Message& m);

  bool requests_, responses_;
  uint8_t key_[kGatewayBlock] = {};
  evp_cipher_ctx_st* dec_ = nullptr;
  evp_cipher_ctx_st* enc_ = nullptr;
  std::unique_ptr<IvSource> ivs_;
  std::vector<uint8_t> scratch_;
  Counters counters_;
};

}  // namespace fulcrum::l7
