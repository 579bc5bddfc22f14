#include "l7/nf/web_gateway.hh"

#include <openssl/evp.h>

#include <cctype>
#include <cstring>

#include "kernels/common/l7_ops.h"
#include "l7/flow/device_tables.hh"
#include "lib/table_file.hh"

namespace fulcrum::l7 {
namespace {

constexpr uint16_t kBadRequest = 400;
constexpr uint16_t kServerError = 500;
int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Whether plain[0, len) ends in valid PKCS#7 padding; its length into `pad`.
bool pkcs7_pad(const uint8_t* plain, size_t len, size_t& pad) {
  if (len == 0) return false;
  const uint8_t p = plain[len - 1];
  if (p == 0 || p > kGatewayBlock || p > len) return false;
  uint8_t diff = 0;
  for (size_t i = 0; i < p; ++i) diff |= static_cast<uint8_t>(plain[len - 1 - i] ^ p);
  pad = p;
  return diff == 0;
}

bool length_ok(size_t n) {
  return n >= 2 * kGatewayBlock && n % kGatewayBlock == 0;
}

}  // namespace

Result<std::unique_ptr<WebGateway>> WebGateway::create(const uint8_t key[kGatewayBlock],
                                                       bool requests, bool responses) {
  std::unique_ptr<WebGateway> nf(new WebGateway(requests, responses));
  std::memcpy(nf->key_, key, kGatewayBlock);
  const uint8_t zero[kGatewayBlock] = {};
  nf->dec_ = EVP_CIPHER_CTX_new();
  nf->enc_ = EVP_CIPHER_CTX_new();
  if (nf->dec_ == nullptr || nf->enc_ == nullptr ||
      EVP_DecryptInit_ex(nf->dec_, EVP_aes_128_cbc(), nullptr, key, zero) != 1 ||
      EVP_CIPHER_CTX_set_padding(nf->dec_, 0) != 1 ||
      EVP_EncryptInit_ex(nf->enc_, EVP_aes_128_cbc(), nullptr, key, zero) != 1 ||
      EVP_CIPHER_CTX_set_padding(nf->enc_, 0) != 1)
    return make_error("WebGateway: OpenSSL: cannot set up AES-128-CBC");
  Result<std::unique_ptr<IvSource>> ivs = IvSource::create();
  if (!ivs) return make_error("WebGateway: " + ivs.error());
  nf->ivs_ = std::move(ivs.value());
  return nf;
}

WebGateway::~WebGateway() {
  EVP_CIPHER_CTX_free(dec_);
  EVP_CIPHER_CTX_free(enc_);
}

Result<std::unique_ptr<FlowNf>> WebGateway::from_args(Args& a) {
  std::string file;
  bool requests = true, responses = true;
  a.positional_file("KEY", file, "the AES-128 key file: 32 hex digits")
      .key("REQUESTS", requests, "decrypt request bodies (IV || AES-128-CBC, PKCS#7)")
      .key("RESPONSES", responses, "encrypt response bodies with a fresh IV");
  if (Status s = a.finish(); !s) return make_error(s.error());
  Result<std::string> text = read_table_file(file, "key file");
  if (!text) return make_error(text.error());
  uint8_t key[kGatewayBlock];
  size_t digits = 0;
  for (char c : text.value()) {
    if (std::isspace(static_cast<unsigned char>(c))) continue;
    const int d = hex_digit(c);
    if (d < 0 || digits >= 2 * kGatewayBlock)
      return make_error(file + ": the key must be 32 hex digits");
    key[digits / 2] = static_cast<uint8_t>(digits % 2 ? key[digits / 2] | d : d << 4);
    ++digits;
  }
  if (digits != 2 * kGatewayBlock) return make_error(file + ": the key must be 32 hex digits");
  Result<std::unique_ptr<WebGateway>> nf = create(key, requests, responses);
  if (!nf) return make_error(nf.error());
  return std::unique_ptr<FlowNf>(std::move(nf.value()));
}

void WebGateway::set_length(Message& m) {
  for (auto& [name, value] : m.head.headers) {
    if (name.size() != 14) continue;
    bool same = true;
    for (size_t i = 0; i < name.size() && same; ++i)
      same = std::tolower(static_cast<unsigned char>(name[i])) == "content-length"[i];
    if (same) value = std::to_string(m.body.size());
  }
}

void WebGateway::reject(Message& m, uint16_t status, const char* why) {
  m.verdict.action = Action::kRespond;
  m.verdict.status = status;
  m.verdict.reason = std::string("WebGateway: ") + why;
}

void WebGateway::decrypt(Message& m) {
  std::vector<uint8_t>& b = m.body;
  if (!length_ok(b.size())) {
    ++counters_.bad_length;
    return reject(m, kBadRequest, "bad length");
  }
  const size_t n = b.size() - kGatewayBlock;
  int out = 0;
  if (EVP_DecryptInit_ex(dec_, nullptr, nullptr, nullptr, b.data()) != 1 ||
      EVP_DecryptUpdate(dec_, b.data() + kGatewayBlock, &out, b.data() + kGatewayBlock,
                        static_cast<int>(n)) != 1 ||
      static_cast<size_t>(out) != n) {
    ++counters_.crypto_errors;
    return reject(m, kServerError, "decryption failed");
  }
  size_t pad = 0;
  if (!pkcs7_pad(b.data() + kGatewayBlock, n, pad)) {
    ++counters_.bad_padding;
    return reject(m, kBadRequest, "bad padding");
  }
  std::memmove(b.data(), b.data() + kGatewayBlock, n - pad);
  b.resize(n - pad);
  ++counters_.decrypted;
  set_length(m);
}

void WebGateway::prepare_device(Message& m) {
  if (m.dir != Direction::kResponse || !responses_ || !m.http || m.body.empty()) return;
  std::vector<uint8_t>& b = m.body;
  const size_t len = b.size();
  const size_t pad = kGatewayBlock - len % kGatewayBlock;
  b.resize(kGatewayBlock + len + pad);
  std::memmove(b.data() + kGatewayBlock, b.data(), len);
  std::memset(b.data() + kGatewayBlock + len, static_cast<int>(pad), pad);
  if (!ivs_->fill(b.data(), kGatewayBlock)) {
    ++counters_.crypto_errors;
    reject(m, kServerError, "no IV");
  }
}

void WebGateway::encrypt(Message& m) {
  prepare_device(m);
  if (m.verdict.action != Action::kForward) return;
  std::vector<uint8_t>& b = m.body;
  const size_t n = b.size() - kGatewayBlock;
  int out = 0;
  if (EVP_EncryptInit_ex(enc_, nullptr, nullptr, nullptr, b.data()) != 1 ||
      EVP_EncryptUpdate(enc_, b.data() + kGatewayBlock, &out, b.data() + kGatewayBlock,
                        static_cast<int>(n)) != 1 ||
      static_cast<size_t>(out) != n) {
    ++counters_.crypto_errors;
    return reject(m, kServerError, "encryption failed");
  }
  ++counters_.encrypted;
  set_length(m);
}

void WebGateway::process(Message& m, std::span<uint8_t>) {
  if (!applies(m)) return;
  if (!m.http || m.body.empty()) {
    ++counters_.passed;
    return;
  }
  if (m.dir == Direction::kRequest)
    decrypt(m);
  else
    encrypt(m);
}

std::optional<DeviceOp> WebGateway::device_op() const {
  if (!requests_ && !responses_) return std::nullopt;
  DeviceOp op;
  op.code = requests_ && responses_ ? L7_OP_AES128_CBC_GATEWAY
            : requests_             ? L7_OP_AES128_CBC_DECRYPT
                                    : L7_OP_AES128_CBC_ENCRYPT;
  op.directions = (requests_ ? L7_ON_REQUESTS : 0u) | (responses_ ? L7_ON_RESPONSES : 0u);
  op.table = aes128_cbc_table(std::span<const uint8_t, kGatewayBlock>(key_, kGatewayBlock));
  return op;
}

void WebGateway::finish_device(Message& m, std::span<uint8_t>, std::span<const uint32_t> out) {
  if (!applies(m) || m.verdict.action != Action::kForward) return;
  if (!m.http) {
    ++counters_.device_raw;
    m.verdict.action = Action::kClose;
    m.verdict.reason = "WebGateway: a raw chunk went through the device form";
    return;
  }
  if (m.body.empty()) {
    ++counters_.passed;
    return;
  }
  std::vector<uint8_t>& b = m.body;
  if (m.dir == Direction::kRequest) {
    if (!length_ok(b.size())) {
      ++counters_.bad_length;
      return reject(m, kBadRequest, "bad length");
    }
    if (out.size() < 2 || out[1] != 0 || out[0] >= b.size() - kGatewayBlock) {
      ++counters_.bad_padding;
      return reject(m, kBadRequest, "bad padding");
    }
    std::memmove(b.data(), b.data() + kGatewayBlock, out[0]);
    b.resize(out[0]);
    ++counters_.decrypted;
  } else {
    if (out.empty() || out[0] != b.size()) {
      ++counters_.crypto_errors;
      return reject(m, kServerError, "device encryption length");
    }
    ++counters_.encrypted;
  }
  set_length(m);
}

FULCRUM_REGISTER_NF(WebGateway, WebGateway::from_args);

}  // namespace fulcrum::l7
