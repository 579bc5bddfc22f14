// WebGateway (src/l7/nf/web_gateway.hh): AES-128-CBC with PKCS#7 against known answers (NIST
// SP 800-38A F.2.1/F.2.2 with the padding block, and a short message, both from python
// `cryptography`), round trips, the 400s, Content-Length, and its device form: the round-key table
// (FIPS-197 appendix A.1) and finish_device fed by a byte-level AES model of the ops written here
// from FIPS-197 (S-box from the GF(2^8) inverse), independent of OpenSSL.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "kernels/common/l7_ops.h"
#include "l7/flow/device_tables.hh"
#include "l7/nf/web_gateway.hh"

namespace fulcrum::l7 {
namespace {

using Bytes = std::vector<uint8_t>;

Bytes hex(const std::string& s) {
  Bytes out;
  for (size_t i = 0; i + 1 < s.size(); i += 2)
    out.push_back(static_cast<uint8_t>(std::stoi(s.substr(i, 2), nullptr, 16)));
  return out;
}

const Bytes kKey = hex("2b7e151628aed2a6abf7158809cf4f3c");
const Bytes kIv = hex("000102030405060708090a0b0c0d0e0f");
const Bytes kPlain = hex(
    "6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e5130c81c46a35ce411e5fbc1191a0a"
    "52eff69f2445df4f9b17ad2b417be66c3710");
// F.2.1's four blocks, then the PKCS#7 block (python cryptography).
const Bytes kCipher = hex(
    "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b273bed6b8e3c1743b7116e69e2222"
    "95163ff1caa1681fac09120eca307586e1a78cb82807230e1321d3fae00d18cc2012");

Bytes cat(const Bytes& a, const Bytes& b) {
  Bytes out(a.size() + b.size());
  if (!a.empty()) std::memcpy(out.data(), a.data(), a.size());
  if (!b.empty()) std::memcpy(out.data() + a.size(), b.data(), b.size());
  return out;
}

std::unique_ptr<WebGateway> gateway(bool requests = true, bool responses = true) {
  auto nf = WebGateway::create(kKey.data(), requests, responses);
  EXPECT_TRUE(nf.ok()) << (nf.ok() ? "" : nf.error());
  return std::move(nf.value());
}

Message msg(const Bytes& body, Direction dir, bool http = true) {
  Message m;
  m.dir = dir;
  m.http = http;
  m.body = body;
  m.head.headers = {{"Content-Type", "application/octet-stream"},
                    {"content-length", std::to_string(body.size())}};
  return m;
}

// ---- A byte-level AES model (FIPS-197), for the device ops.
uint8_t xtime(uint8_t b) {
  return static_cast<uint8_t>(b << 1 ^ (b & 0x80 ? 0x1b : 0));
}
uint8_t mul(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  for (; b; b >>= 1, a = xtime(a))
    if (b & 1) r ^= a;
  return r;
}
struct SBox {
  uint8_t s[256], inv[256];
  SBox() {
    for (int x = 0; x < 256; ++x) {
      uint8_t v = 0;  // the multiplicative inverse (0 for 0)
      for (int y = 1; y < 256 && x != 0; ++y)
        if (mul(static_cast<uint8_t>(x), static_cast<uint8_t>(y)) == 1) v = static_cast<uint8_t>(y);
      uint8_t r = 0x63;
      for (int i = 0; i < 5; ++i) r ^= static_cast<uint8_t>(v << i | v >> (8 - i));
      s[x] = r;
      inv[r] = static_cast<uint8_t>(x);
    }
  }
};
const SBox& sbox() {
  static const SBox b;
  return b;
}
void add_key(uint8_t* st, const uint32_t* k) {
  for (int i = 0; i < 16; ++i) st[i] ^= static_cast<uint8_t>(k[i / 4] >> (24 - 8 * (i % 4)));
}
void mix(uint8_t* st, const uint8_t m[4]) {
  for (int c = 0; c < 4; ++c) {
    uint8_t* col = st + 4 * c;
    uint8_t o[4];
    for (int r = 0; r < 4; ++r)
      o[r] = mul(m[(4 - r) % 4], col[0]) ^ mul(m[(5 - r) % 4], col[1]) ^
             mul(m[(6 - r) % 4], col[2]) ^ mul(m[(7 - r) % 4], col[3]);
    std::memcpy(col, o, 4);
  }
}
void shift(uint8_t* st, int dir) {  // dir 1: ShiftRows, -1: InvShiftRows
  uint8_t t[16];
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) t[4 * c + r] = st[4 * (((c + dir * r) % 4 + 4) % 4) + r];
  std::memcpy(st, t, 16);
}
void encrypt_block(const uint32_t* rk, uint8_t* st) {
  static const uint8_t kMix[4] = {2, 3, 1, 1};
  add_key(st, rk);
  for (int r = 1; r <= 10; ++r) {
    for (int i = 0; i < 16; ++i) st[i] = sbox().s[st[i]];
    shift(st, 1);
    if (r != 10) mix(st, kMix);
    add_key(st, rk + 4 * r);
  }
}
// The equivalent inverse cipher (FIPS-197 §5.3.5) with the table's decryption keys, which are in
// the encryption schedule's order (round 10's first).
void decrypt_block(const uint32_t* dk, uint8_t* st) {
  static const uint8_t kInvMix[4] = {14, 11, 13, 9};
  add_key(st, dk + 40);
  for (int r = 1; r <= 10; ++r) {
    for (int i = 0; i < 16; ++i) st[i] = sbox().inv[st[i]];
    shift(st, -1);
    if (r != 10) mix(st, kInvMix);
    add_key(st, dk + 4 * (10 - r));
  }
}

std::vector<uint32_t> table_words(const DeviceOp& op) {
  std::vector<uint32_t> w(op.table.size() / 4);
  std::memcpy(w.data(), op.table.data(), op.table.size());
  return w;
}

// L7_OP_AES128_CBC_DECRYPT / ENCRYPT on one message, as kernels/common/l7_ops.h documents.
std::vector<uint32_t> model_op(const DeviceOp& op, Bytes& m) {
  std::vector<uint32_t> out(L7_OUT_WORDS, 0);
  const std::vector<uint32_t> w = table_words(op);
  if (op.code == L7_OP_AES128_CBC_DECRYPT) {
    if (m.size() < 32 || m.size() % 16 != 0) {
      out[1] = 1;
      return out;
    }
    uint8_t prev[16], cur[16];
    std::memcpy(prev, m.data(), 16);
    for (size_t at = 16; at < m.size(); at += 16) {
      std::memcpy(cur, m.data() + at, 16);
      decrypt_block(w.data() + 44, m.data() + at);
      for (int i = 0; i < 16; ++i) m[at + i] ^= prev[i];
      std::memcpy(prev, cur, 16);
    }
    const uint8_t p = m.back();
    bool ok = p >= 1 && p <= 16;
    for (int i = 0; ok && i < p; ++i) ok = m[m.size() - 1 - i] == p;
    if (!ok) out[1] = 1;
    out[0] = ok ? static_cast<uint32_t>(m.size() - 16 - p) : 0;
  } else {
    for (size_t at = 16; at < m.size(); at += 16) {
      for (int i = 0; i < 16; ++i) m[at + i] ^= m[at - 16 + i];
      encrypt_block(w.data(), m.data() + at);
    }
    out[0] = static_cast<uint32_t>(m.size());
  }
  return out;
}

TEST(WebGateway, DecryptsTheNistVectorWithItsPaddingBlock) {
  auto nf = gateway();
  Message m = msg(cat(kIv, kCipher), Direction::kRequest);
  nf->process(m, {});
  EXPECT_EQ(m.verdict.action, Action::kForward);
  EXPECT_EQ(m.body, kPlain);
  EXPECT_EQ(m.head.header("Content-Length"), "64");
  Message s =
      msg(cat(hex("0f0e0d0c0b0a09080706050403020100"), hex("4402a918e79103d3decfbadef15a40f7")),
          Direction::kRequest);
  nf->process(s, {});
  EXPECT_EQ(std::string(s.body.begin(), s.body.end()), "hello gateway");
  EXPECT_EQ(nf->counters().decrypted, 2u);
}

TEST(WebGateway, EncryptsResponsesWithAFreshIvAndRoundTrips) {
  auto nf = gateway();
  Bytes last_iv;
  for (size_t len = 1; len <= 70; ++len) {
    Bytes plain(len);
    for (size_t i = 0; i < len; ++i) plain[i] = static_cast<uint8_t>(i * 7 + len);
    Message r = msg(plain, Direction::kResponse);
    nf->process(r, {});
    ASSERT_EQ(r.body.size(), 16 + (len / 16 + 1) * 16);
    EXPECT_EQ(r.head.header("content-length"), std::to_string(r.body.size()));
    Bytes iv(r.body.begin(), r.body.begin() + 16);
    EXPECT_NE(iv, last_iv);
    last_iv = iv;
    // Decrypted by the independent model, then by the NF's request path.
    Bytes copy = r.body;
    const auto out = model_op(*gateway(true, false)->device_op(), copy);
    ASSERT_EQ(out[1], 0u);
    EXPECT_EQ(Bytes(copy.begin() + 16, copy.begin() + 16 + out[0]), plain);
    Message q = msg(r.body, Direction::kRequest);
    nf->process(q, {});
    EXPECT_EQ(q.body, plain);
  }
}

TEST(WebGateway, BadLengthAndBadPaddingAreAnswered400) {
  auto nf = gateway();
  for (size_t len : {1u, 16u, 31u, 33u, 47u}) {
    Message m = msg(Bytes(len, 0xAB), Direction::kRequest);
    nf->process(m, {});
    EXPECT_EQ(m.verdict.action, Action::kRespond);
    EXPECT_EQ(m.verdict.status, 400);
    EXPECT_EQ(m.verdict.reason, "WebGateway: bad length");
  }
  // The NIST ciphertext without its padding block: the plaintext ends in one 0x10 byte, not
  // sixteen.
  Message p = msg(cat(kIv, Bytes(kCipher.begin(), kCipher.begin() + 64)), Direction::kRequest);
  nf->process(p, {});
  EXPECT_EQ(p.verdict.status, 400);
  EXPECT_EQ(p.verdict.reason, "WebGateway: bad padding");
  EXPECT_EQ(nf->counters().bad_length, 5u);
  EXPECT_EQ(nf->counters().bad_padding, 1u);
}

TEST(WebGateway, EmptyBodiesAndRawChunksPassUnchanged) {
  auto nf = gateway();
  Message e = msg({}, Direction::kRequest), r = msg({}, Direction::kResponse);
  nf->process(e, {});
  nf->process(r, {});
  EXPECT_TRUE(e.body.empty());
  EXPECT_TRUE(r.body.empty());
  Message raw = msg(Bytes(5, 1), Direction::kRequest, /*http=*/false);
  nf->process(raw, {});
  EXPECT_EQ(raw.body, Bytes(5, 1));
  EXPECT_EQ(raw.verdict.action, Action::kForward);
  EXPECT_EQ(nf->counters().passed, 3u);
}

TEST(WebGateway, RoundKeyTableIsFips197) {
  const Bytes table = aes128_cbc_table(std::span<const uint8_t, 16>(kKey.data(), 16));
  std::vector<uint32_t> k(table.size() / 4);
  std::memcpy(k.data(), table.data(), table.size());
  ASSERT_EQ(k.size(), 88u);
  EXPECT_EQ(k[0], 0x2b7e1516u);
  EXPECT_EQ(k[4], 0xa0fafe17u);   // FIPS-197 A.1
  EXPECT_EQ(k[43], 0xb6630ca6u);  // the last word of the expansion
  EXPECT_EQ(k[44], 0x2b7e1516u);  // equivalent inverse keys, same order: round 0 is the key
  EXPECT_EQ(k[87], 0xb6630ca6u);  // and round 10 the last round key, both without InvMixColumns
  // The encryption keys encrypt F.2.1's first block as the model computes it.
  uint8_t block[16];
  for (int i = 0; i < 16; ++i) block[i] = kPlain[i] ^ kIv[i];
  encrypt_block(k.data(), block);
  EXPECT_EQ(Bytes(block, block + 16), Bytes(kCipher.begin(), kCipher.begin() + 16));
}

TEST(WebGateway, DeviceDecryptFinishesAsProcess) {
  auto dev = gateway(true, false);
  const auto op = dev->device_op();
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->code, L7_OP_AES128_CBC_DECRYPT);
  EXPECT_EQ(op->table.size(), 88u * 4);
  auto cpu = gateway();
  const std::vector<Bytes> bodies = {
      cat(kIv, kCipher),
      cat(hex("0f0e0d0c0b0a09080706050403020100"), hex("4402a918e79103d3decfbadef15a40f7")),
      cat(kIv, Bytes(kCipher.begin(), kCipher.begin() + 64)),  // bad padding
      Bytes(40, 3),                                            // bad length
      {}};
  for (const Bytes& b : bodies) {
    Message want = msg(b, Direction::kRequest);
    cpu->process(want, {});
    Message got = msg(b, Direction::kRequest);
    dev->prepare_device(got);
    const auto out = model_op(*op, got.body);
    dev->finish_device(got, {}, out);
    EXPECT_EQ(got.verdict.action, want.verdict.action);
    EXPECT_EQ(got.verdict.reason, want.verdict.reason);
    if (want.verdict.action == Action::kForward) {
      EXPECT_EQ(got.body, want.body);
      EXPECT_EQ(got.head.header("Content-Length"), want.head.header("Content-Length"));
    }
  }
}

TEST(WebGateway, DeviceEncryptIsPreparedAndDecryptsBack) {
  auto dev = gateway(false, true);
  const auto op = dev->device_op();
  ASSERT_TRUE(op.has_value());
  EXPECT_EQ(op->code, L7_OP_AES128_CBC_ENCRYPT);
  auto cpu = gateway();
  for (size_t len : {1u, 15u, 16u, 17u, 100u}) {
    const Bytes plain(len, static_cast<uint8_t>(len));
    Message m = msg(plain, Direction::kResponse);
    dev->prepare_device(m);
    ASSERT_EQ(m.body.size(), 16 + (len / 16 + 1) * 16);
    const auto out = model_op(*op, m.body);
    dev->finish_device(m, {}, out);
    EXPECT_EQ(m.verdict.action, Action::kForward);
    EXPECT_EQ(m.head.header("content-length"), std::to_string(m.body.size()));
    Message back = msg(m.body, Direction::kRequest);
    cpu->process(back, {});
    EXPECT_EQ(back.body, plain);
  }
  Message raw = msg(Bytes(20, 1), Direction::kResponse, /*http=*/false);
  dev->prepare_device(raw);
  dev->finish_device(raw, {}, std::vector<uint32_t>(L7_OUT_WORDS, 0));
  EXPECT_EQ(raw.verdict.action, Action::kClose);
}

TEST(WebGateway, BothDirectionsAreOneGatewayOpEachDirectionItsOwn) {
  const auto both = gateway()->device_op();
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->code, L7_OP_AES128_CBC_GATEWAY);
  EXPECT_EQ(both->directions, L7_ON_REQUESTS | L7_ON_RESPONSES);
  EXPECT_EQ(gateway(true, false)->device_op()->directions, L7_ON_REQUESTS);
  EXPECT_EQ(gateway(false, true)->device_op()->directions, L7_ON_RESPONSES);
}

TEST(WebGateway, IsRegisteredAndReadsItsKeyFile) {
  const NfFactory* f = NfRegistry::instance().find("WebGateway");
  ASSERT_NE(f, nullptr);
  const std::string path = ::testing::TempDir() + "web_gateway_test.key";
  std::FILE* file = std::fopen(path.c_str(), "w");
  ASSERT_NE(file, nullptr);
  std::fputs("2b7e1516 28aed2a6 abf71588 09cf4f3c\n", file);
  std::fclose(file);
  Args a({path, "RESPONSES false"}, SourceLoc{}, "gw", "WebGateway");
  Result<std::unique_ptr<FlowNf>> nf = (*f)(a);
  ASSERT_TRUE(nf.ok()) << nf.error();
  EXPECT_EQ(nf.value()->device_op()->code, L7_OP_AES128_CBC_DECRYPT);
  Message m = msg(cat(kIv, kCipher), Direction::kRequest);
  nf.value()->process(m, {});
  EXPECT_EQ(m.body, kPlain);
  file = std::fopen(path.c_str(), "w");
  std::fputs("2b7e1516\n", file);
  std::fclose(file);
  Args short_key({path}, SourceLoc{}, "gw", "WebGateway");
  EXPECT_FALSE((*f)(short_key).ok());
}

}  // namespace
}  // namespace fulcrum::l7
