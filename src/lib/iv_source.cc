#include "lib/iv_source.hh"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstring>

namespace fulcrum {
namespace {

constexpr int kKeyLen = 16;
constexpr int kCounterLen = 16;

}  // namespace

Result<std::unique_ptr<IvSource>> IvSource::create() {
  std::unique_ptr<IvSource> s(new IvSource());
  s->ctx_ = EVP_CIPHER_CTX_new();
  if (s->ctx_ == nullptr || !s->reseed())
    return make_error("IV source: OpenSSL's RAND_bytes or AES-128-CTR failed");
  return s;
}

IvSource::~IvSource() {
  EVP_CIPHER_CTX_free(ctx_);
}

bool IvSource::reseed() {
  uint8_t key[kKeyLen + kCounterLen];
  if (RAND_bytes(key, sizeof key) != 1) return false;
  const bool ok = EVP_EncryptInit_ex(ctx_, EVP_aes_128_ctr(), nullptr, key, key + kKeyLen) == 1;
  OPENSSL_cleanse(key, sizeof key);
  refills_ = 0;
  ++reseeds_;
  return ok;
}

bool IvSource::refill() {
  if (refills_ == kRefillsPerKey && !reseed()) return false;
  // The keystream is the encryption of zeros.
  std::memset(buffer_, 0, kBufferLen);
  int out = 0;
  if (EVP_EncryptUpdate(ctx_, buffer_, &out, buffer_, static_cast<int>(kBufferLen)) != 1 ||
      out != static_cast<int>(kBufferLen))
    return false;
  ++refills_;
  used_ = 0;
  return true;
}

}  // namespace fulcrum
