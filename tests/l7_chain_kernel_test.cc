// The L7 chain kernel (kernels/l7_chain.cl) on the emulated device, on every OpenCL device
// (PoCL in CI) and on every CUDA GPU, against independent CPU references, through the host side
// the BatchProcessor uses (l7/flow/device_batch.hh): one work item per flow, messages in order,
// state carried across messages and batches.
//   TOUCH      vs FNV-1a on the CPU (with the published FNV-1a test vectors)
//   IDS_AC     vs AhoCorasick::scan over each flow's whole stream: the carried DFA state gives
//              the matches one scan of the concatenation gives, including across message edges
//   AES-CBC    vs OpenSSL EVP aes-128-cbc, both directions, bad padding and lengths rejected
//              (and the chain stops at a rejected message)
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "kernels/common/l7_ops.h"
#include "l7/flow/device_batch.hh"
#include "l7/flow/device_tables.hh"
#include "l7/nf/chain.hh"
#include "l7/nf/touch.hh"
#include "lib/ids/aho_corasick.hh"
#include "offload/discovery.hh"
#include "offload_testing.hh"

namespace fulcrum::l7 {
namespace {

using Bytes = std::vector<uint8_t>;
using Flows = std::vector<std::vector<Bytes>>;  // per flow, its messages in order

// An NF that is only its device form (these tests run the kernel, not process()).
class OpNf final : public FlowNf {
 public:
  OpNf(uint32_t code, Bytes table, size_t state)
      : code_(code), table_(std::move(table)), state_(state) {}
  std::string_view name() const override { return "OpNf"; }
  size_t state_bytes() const override { return state_; }
  void process(Message&, std::span<uint8_t>) override { ADD_FAILURE() << "not a CPU test"; }
  std::optional<DeviceOp> device_op() const override { return DeviceOp{code_, table_}; }

 private:
  uint32_t code_;
  Bytes table_;
  size_t state_;
};

struct Run {
  std::vector<std::vector<Bytes>> bytes;  // per flow, per message
  // per flow, per message, per op: the op's output words
  std::vector<std::vector<std::vector<std::vector<uint32_t>>>> out;
  std::vector<std::vector<Bytes>> state_after;  // per flow, per message
  std::vector<Bytes> final_state;               // per flow
};

// Runs `flows` through the chain on `dev` in batches of `per_batch` messages per flow, the state
// records carried from one batch to the next.
Run run(offload::Device& dev, const Chain& chain, const Flows& flows, size_t per_batch = 1000) {
  Run r;
  auto dc = DeviceChain::create(dev, chain);
  EXPECT_TRUE(dc.ok()) << (dc ? "" : dc.error());
  auto queue = dev.create_queue();
  EXPECT_TRUE(queue.ok());
  if (!dc || !queue) return r;
  std::vector<Bytes> states(flows.size(), chain.new_state());
  r.bytes.resize(flows.size());
  r.out.resize(flows.size());
  r.state_after.resize(flows.size());
  std::vector<std::vector<Message>> msgs(flows.size());
  for (size_t f = 0; f < flows.size(); ++f)
    for (const Bytes& b : flows[f]) {
      Message m;
      m.flow = f;
      m.body = b;
      msgs[f].push_back(std::move(m));
    }
  for (size_t first = 0;; first += per_batch) {
    DeviceBatch batch(*dc.value());
    std::vector<size_t> which;
    for (size_t f = 0; f < flows.size(); ++f) {
      if (first >= msgs[f].size()) continue;
      std::vector<const Message*> ptrs;
      for (size_t k = first; k < std::min(msgs[f].size(), first + per_batch); ++k)
        ptrs.push_back(&msgs[f][k]);
      batch.add_flow(states[f], ptrs);
      which.push_back(f);
    }
    if (which.empty()) break;
    EXPECT_TRUE(batch.submit(*queue.value()).ok());
    EXPECT_TRUE(queue.value()->wait().ok());
    uint32_t k = 0;
    for (uint32_t i = 0; i < which.size(); ++i) {
      const size_t f = which[i];
      for (size_t n = first; n < std::min(msgs[f].size(), first + per_batch); ++n, ++k) {
        const auto b = batch.message_bytes(k);
        r.bytes[f].emplace_back(b.begin(), b.end());
        std::vector<std::vector<uint32_t>> outs;
        for (uint32_t op = 0; op < chain.size(); ++op) {
          const auto o = batch.output(k, op);
          outs.emplace_back(o.begin(), o.end());
        }
        r.out[f].push_back(std::move(outs));
        const auto s = batch.state_after(k);
        r.state_after[f].emplace_back(s.begin(), s.end());
      }
      const auto s = batch.final_state(i);
      states[f].assign(s.begin(), s.end());
    }
  }
  r.final_state = states;
  return r;
}

std::vector<std::unique_ptr<offload::Device>> devices(offload::Backend b) {
  offload::DiscoverOptions only;
  only.only = b;
  return offload::discover_devices(only);
}

Flows random_flows(std::mt19937& rng, size_t nflows, size_t max_msgs, size_t max_len,
                   const std::string& alphabet) {
  Flows flows(nflows);
  for (auto& f : flows) {
    f.resize(rng() % (max_msgs + 1));
    for (Bytes& m : f) {
      m.resize(rng() % (max_len + 1));
      for (uint8_t& c : m) c = static_cast<uint8_t>(alphabet[rng() % alphabet.size()]);
    }
  }
  return flows;
}

uint32_t word(const Bytes& b, size_t at = 0) {
  uint32_t v;
  std::memcpy(&v, b.data() + at, sizeof v);
  return v;
}

// ---- TOUCH ----

TEST(L7ChainKernel, Fnv1aMatchesThePublishedTestVectors) {
  const std::string a = "a", foobar = "foobar";
  EXPECT_EQ(fnv1a(kFnvOffsetBasis, {reinterpret_cast<const uint8_t*>(a.data()), a.size()}),
            0xe40c292cu);
  EXPECT_EQ(
      fnv1a(kFnvOffsetBasis, {reinterpret_cast<const uint8_t*>(foobar.data()), foobar.size()}),
      0xbf9cf968u);
}

void expect_touch(offload::Backend backend) {
  std::mt19937 rng(11);
  std::string all(256, '\0');
  for (int i = 0; i < 256; ++i) all[i] = static_cast<char>(i);
  const Flows flows = random_flows(rng, 333, 9, 2000, all);
  Chain chain;
  for (int i = 0; i < 3; ++i) chain.add(std::make_unique<Touch>());
  for (const auto& dev : devices(backend)) {
    SCOPED_TRACE(dev->label());
    const Run r = run(*dev, chain, flows, 4);  // several batches per flow: state carried
    ASSERT_EQ(r.final_state.size(), flows.size());
    for (size_t f = 0; f < flows.size(); ++f) {
      uint32_t h = kFnvOffsetBasis;
      for (size_t k = 0; k < flows[f].size(); ++k) {
        h = fnv1a(h, flows[f][k]);
        for (uint32_t op = 0; op < 3; ++op) {
          ASSERT_EQ(r.out[f][k][op][0], h) << "flow " << f << " message " << k;
          ASSERT_EQ(word(r.state_after[f][k], chain.state_offset(op)), h);
        }
        ASSERT_EQ(r.bytes[f][k], flows[f][k]);  // TOUCH does not rewrite
      }
      for (uint32_t op = 0; op < 3; ++op)
        ASSERT_EQ(word(r.final_state[f], chain.state_offset(op)), h) << "flow " << f;
    }
  }
}

TEST(L7ChainKernel, TouchMatchesFnv1aOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  expect_touch(offload::Backend::kEmu);
}
TEST(L7ChainKernel, TouchMatchesFnv1aOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  expect_touch(offload::Backend::kOpenCL);
}
TEST(L7ChainKernel, TouchMatchesFnv1aOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  expect_touch(offload::Backend::kCuda);
}

// ---- IDS_AC ----

void expect_ids(offload::Backend backend) {
  std::mt19937 rng(7);
  const std::string alphabet = "abcAB|";
  ids::AhoCorasick ac(true);
  std::vector<std::string> patterns;
  for (uint32_t id = 0; id < 40; ++id) {
    std::string p(2 + rng() % 6, 'a');
    for (char& c : p) c = alphabet[rng() % alphabet.size()];
    ac.add(p, id);
    patterns.push_back(p);
  }
  ASSERT_TRUE(ac.build().ok());
  // Short messages of a dense alphabet: many matches straddle message edges; a few long
  // messages overflow the output (the NF then rescans).
  Flows flows = random_flows(rng, 200, 12, 60, alphabet);
  const Flows long_ones = random_flows(rng, 4, 3, 2000, alphabet);
  flows.insert(flows.end(), long_ones.begin(), long_ones.end());
  Chain chain;
  chain.add(std::make_unique<OpNf>(L7_OP_IDS_AC, ids_ac_table(ac), sizeof(uint32_t)));
  for (const auto& dev : devices(backend)) {
    SCOPED_TRACE(dev->label());
    const Run r = run(*dev, chain, flows, 5);
    size_t straddling = 0, overflowed = 0;
    for (size_t f = 0; f < flows.size(); ++f) {
      Bytes stream;
      std::vector<size_t> starts;
      for (const Bytes& m : flows[f]) {
        starts.push_back(stream.size());
        stream.resize(stream.size() + m.size());
        if (!m.empty()) std::memcpy(stream.data() + starts.back(), m.data(), m.size());
      }
      std::multiset<std::pair<uint32_t, uint32_t>> cpu;  // (id, end in the stream)
      ac.scan(stream.data(), stream.size(),
              [&](uint32_t id, uint32_t end) { cpu.emplace(id, end); });
      std::multiset<std::pair<uint32_t, uint32_t>> dev_matches;
      bool complete = true;
      for (size_t k = 0; k < flows[f].size(); ++k) {
        const std::vector<uint32_t>& o = r.out[f][k][0];
        std::set<uint32_t> ends;  // the CPU's match ends within this message
        for (const auto& [id, end] : cpu)
          if (end > starts[k] && end <= starts[k] + flows[f][k].size()) ends.insert(end);
        ASSERT_EQ(o[0], ends.size()) << "flow " << f << " message " << k;
        if (o[0] > IDS_AC_MAX_MATCHES) {
          complete = false;
          ++overflowed;
          continue;
        }
        for (uint32_t n = 0; n < o[0]; ++n) {
          const uint32_t state = o[1 + 2 * n] / ac.stride();
          const uint32_t end = static_cast<uint32_t>(starts[k]) + o[2 + 2 * n];
          for (uint32_t j = ac.out_begin()[state]; j < ac.out_begin()[state + 1]; ++j) {
            const uint32_t id = ac.out_ids()[j];
            dev_matches.emplace(id, end);
            // A match that began in an earlier message: found only through the carried state.
            if (end - patterns[id].size() < starts[k]) ++straddling;
          }
        }
      }
      if (complete) {
        ASSERT_EQ(dev_matches, cpu) << "flow " << f;
      }
    }
    EXPECT_GT(straddling, 50u);
    EXPECT_GT(overflowed, 0u);
  }
}

TEST(L7ChainKernel, IdsAcCarriedStateMatchesOneScanOfTheStreamOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  expect_ids(offload::Backend::kEmu);
}
TEST(L7ChainKernel, IdsAcCarriedStateMatchesOneScanOfTheStreamOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  expect_ids(offload::Backend::kOpenCL);
}
TEST(L7ChainKernel, IdsAcCarriedStateMatchesOneScanOfTheStreamOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  expect_ids(offload::Backend::kCuda);
}

// ---- AES-128-CBC ----

// OpenSSL's aes-128-cbc: encrypt with PKCS#7 padding (nullopt never), or decrypt (nullopt when
// OpenSSL rejects the padding).
std::optional<Bytes> openssl_cbc(bool enc, const std::array<uint8_t, 16>& key, const uint8_t* iv,
                                 const Bytes& in, bool pad = true) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes out(in.size() + 32);
  int n = 0, m = 0;
  bool ok = EVP_CipherInit_ex(ctx, EVP_aes_128_cbc(), nullptr, key.data(), iv, enc ? 1 : 0) == 1 &&
            EVP_CIPHER_CTX_set_padding(ctx, pad ? 1 : 0) == 1 &&
            EVP_CipherUpdate(ctx, out.data(), &n, in.data(), static_cast<int>(in.size())) == 1;
  ok = ok && EVP_CipherFinal_ex(ctx, out.data() + n, &m) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return std::nullopt;
  out.resize(static_cast<size_t>(n + m));
  return out;
}

Bytes concat(const Bytes& a, const Bytes& b) {
  Bytes r(a.size() + b.size());
  if (!a.empty()) std::memcpy(r.data(), a.data(), a.size());
  if (!b.empty()) std::memcpy(r.data() + a.size(), b.data(), b.size());
  return r;
}

void expect_aes(offload::Backend backend) {
  std::mt19937 rng(3);
  std::array<uint8_t, 16> key;
  for (uint8_t& b : key) b = static_cast<uint8_t>(rng());
  const Bytes table = aes128_cbc_table(key);
  // Per flow: messages IV || CBC(plaintext) (valid), a few of random ciphertext (mostly bad
  // padding) and a few of bad lengths.
  Flows dec(120), enc(120);
  std::vector<std::vector<Bytes>> plain(120);
  for (size_t f = 0; f < dec.size(); ++f) {
    for (size_t k = 0, n = rng() % 6; k < n; ++k) {
      Bytes iv(16), pt(rng() % 300);
      for (uint8_t& b : iv) b = static_cast<uint8_t>(rng());
      for (uint8_t& b : pt) b = static_cast<uint8_t>(rng());
      const uint32_t kind = rng() % 8;
      Bytes msg;
      if (kind == 0) {
        msg.resize(16 * (2 + rng() % 4));
        for (uint8_t& b : msg) b = static_cast<uint8_t>(rng());
      } else if (kind == 1) {
        msg.resize(rng() % 40);
        for (uint8_t& b : msg) b = static_cast<uint8_t>(rng());
        if (msg.size() % 16 == 0 && msg.size() >= 32) msg.push_back(0);
      } else {
        msg = concat(iv, *openssl_cbc(true, key, iv.data(), pt));
      }
      dec[f].push_back(msg);
      // ENCRYPT input: IV || plaintext || PKCS#7 padding.
      Bytes padded = pt;
      const size_t pad = 16 - pt.size() % 16;
      padded.resize(pt.size() + pad, static_cast<uint8_t>(pad));
      enc[f].push_back(concat(iv, padded));
      plain[f].push_back(pt);
    }
  }
  Chain dchain;
  dchain.add(std::make_unique<OpNf>(L7_OP_AES128_CBC_DECRYPT, table, 0));
  dchain.add(std::make_unique<Touch>());  // sees the plaintext; skipped for rejected messages
  Chain echain;
  echain.add(std::make_unique<OpNf>(L7_OP_AES128_CBC_ENCRYPT, table, 0));
  for (const auto& dev : devices(backend)) {
    SCOPED_TRACE(dev->label());
    const Run d = run(*dev, dchain, dec, 3);
    size_t good = 0, bad = 0;
    for (size_t f = 0; f < dec.size(); ++f) {
      uint32_t h = kFnvOffsetBasis;
      for (size_t k = 0; k < dec[f].size(); ++k) {
        const Bytes& msg = dec[f][k];
        const std::vector<uint32_t>& o = d.out[f][k][0];
        const bool shape = msg.size() >= 32 && msg.size() % 16 == 0;
        std::optional<Bytes> want;
        if (shape) want = openssl_cbc(false, key, msg.data(), Bytes(msg.begin() + 16, msg.end()));
        ASSERT_EQ(o[1], want ? 0u : 1u) << "flow " << f << " message " << k;
        if (!want) {
          ++bad;
          ASSERT_EQ(d.out[f][k][1][0], 0u);  // the chain stopped: Touch did not run
          continue;
        }
        ++good;
        ASSERT_EQ(o[0], want->size());
        const Bytes got(d.bytes[f][k].begin() + 16, d.bytes[f][k].begin() + 16 + o[0]);
        ASSERT_EQ(got, *want);
        h = fnv1a(h, *want);
        ASSERT_EQ(d.out[f][k][1][0], h);
      }
      ASSERT_EQ(word(d.final_state[f], dchain.state_offset(1)), h);
    }
    EXPECT_GT(good, 200u);
    EXPECT_GT(bad, 30u);
    const Run e = run(*dev, echain, enc, 2);
    for (size_t f = 0; f < enc.size(); ++f)
      for (size_t k = 0; k < enc[f].size(); ++k) {
        const Bytes& msg = enc[f][k];
        ASSERT_EQ(e.out[f][k][0][0], msg.size());
        ASSERT_EQ(e.out[f][k][0][1], 0u);
        const Bytes want = concat(Bytes(msg.begin(), msg.begin() + 16),
                                  *openssl_cbc(true, key, msg.data(), plain[f][k]));
        ASSERT_EQ(e.bytes[f][k], want) << "flow " << f << " message " << k;
      }
  }
}

TEST(L7ChainKernel, AesCbcMatchesOpenSslOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  expect_aes(offload::Backend::kEmu);
}
TEST(L7ChainKernel, AesCbcMatchesOpenSslOnEveryOpenCLDevice) {
  REQUIRE_OPENCL_DEVICES();
  expect_aes(offload::Backend::kOpenCL);
}
TEST(L7ChainKernel, AesCbcMatchesOpenSslOnEveryGpu) {
  REQUIRE_CUDA_DEVICES();
  expect_aes(offload::Backend::kCuda);
}

}  // namespace
}  // namespace fulcrum::l7
