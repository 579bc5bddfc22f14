// The NFs' device forms through the real fused kernel (kernels/l7_chain.cl) under BatchProcessor,
// against the same chain under InlineProcessor (the CPU forms), on the emulated device and PoCL:
//   StreamIDS alone (L7_OP_IDS_AC, the DFA state carried across messages and batches, flows
//   moving between CPU and device between rounds): the same alerts and verdicts on the same
//   messages, in MODE block the same 403s;
//   WebGateway (requests) -> StreamIDS (one fused launch: DECRYPT then IDS_AC on the plaintext):
//   the same plaintext bodies, alerts and 403s, bad padding answered 400 by both;
//   WebGateway (responses, ENCRYPT, prepared by FlowNf::prepare_device): bodies that OpenSSL
//   decrypts back to the plaintext, each with its own IV.
#include <gtest/gtest.h>
#include <openssl/evp.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "l7/flow/batch_processor.hh"
#include "l7/flow/processor.hh"
#include "l7/nf/chain.hh"
#include "l7/nf/stream_ids.hh"
#include "l7/nf/web_gateway.hh"
#include "lib/ids/rule_parser.hh"
#include "offload/discovery.hh"
#include "offload_testing.hh"

namespace fulcrum::l7 {
namespace {

using fulcrum::testing::first_device;
using Bytes = std::vector<uint8_t>;

constexpr uint8_t kKey[kGatewayBlock] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 11, 12, 13, 14, 15, 16};

const char* const kRules =
    "alert tcp any any -> any any (msg:\"attack\"; content:\"attack\"; sid:1;)\n"
    "alert tcp any any -> any any (msg:\"evil\"; content:\"EVIL\"; nocase; sid:2;)\n"
    "alert tcp any any -> any any (msg:\"two\"; content:\"abc\"; content:\"xyz\"; sid:3;)\n"
    "alert tcp any any -> any any (msg:\"shell\"; content:\"/bin/sh\"; sid:4;)\n"
    "alert tcp any any -> any any (msg:\"long\"; content:\"0123456789abcdef\"; sid:5;)\n";

std::shared_ptr<const StreamRules> rules() {
  static std::shared_ptr<const StreamRules> r = [] {
    Result<ids::RuleFile> file = ids::parse_rule_file(kRules, "t.rules", false);
    EXPECT_TRUE(file.ok());
    Result<std::shared_ptr<const StreamRules>> c = StreamRules::compile(std::move(*file));
    EXPECT_TRUE(c.ok());
    return c.value();
  }();
  return r;
}

std::unique_ptr<FlowNf> ids(StreamIds::Mode mode) {
  auto nf = StreamIds::create(rules(), mode, StreamIds::kScanRequests | StreamIds::kScanResponses);
  EXPECT_TRUE(nf.ok());
  return std::move(nf.value());
}

std::unique_ptr<WebGateway> gateway(bool requests, bool responses) {
  auto gw = WebGateway::create(kKey, requests, responses);
  EXPECT_TRUE(gw.ok());
  return std::move(gw.value());
}

Bytes cbc(bool enc, const uint8_t* iv, const uint8_t* in, size_t n) {
  EVP_CIPHER_CTX* ctx = EVP_CIPHER_CTX_new();
  Bytes out(n + 16);
  int len = 0, fin = 0;
  EXPECT_EQ(EVP_CipherInit_ex(ctx, EVP_aes_128_cbc(), nullptr, kKey, iv, enc ? 1 : 0), 1);
  const bool ok = EVP_CipherUpdate(ctx, out.data(), &len, in, static_cast<int>(n)) == 1 &&
                  EVP_CipherFinal_ex(ctx, out.data() + len, &fin) == 1;
  EVP_CIPHER_CTX_free(ctx);
  if (!ok) return {};
  out.resize(static_cast<size_t>(len + fin));
  return out;
}

// `flows` flows, each a random text stream with the rules' patterns planted at random places
// (some across the cuts), cut into 1..6 messages, interleaved; sealed: each message's body is
// IV || AES-128-CBC(plain) as a client of the gateway sends it (every 23rd with a broken pad).
std::vector<Message> traffic(uint32_t seed, size_t flows, Direction dir, bool sealed) {
  static const char* const kPlant[] = {"attack", "eViL",    "abc",
                                       "xyz",    "/bin/sh", "0123456789abcdef"};
  std::mt19937 rng(seed);
  std::vector<std::vector<Message>> per_flow(flows);
  for (size_t f = 0; f < flows; ++f) {
    std::string s;
    const size_t len = 20 + rng() % (f % 11 == 0 ? 6000 : 400);
    while (s.size() < len) {
      if (rng() % 40 == 0)
        s += kPlant[rng() % 6];
      else
        s += static_cast<char>('a' + rng() % 26);
    }
    size_t at = 0;
    const size_t n = 1 + rng() % 6;
    for (size_t k = 0; k < n && at < s.size(); ++k) {
      const size_t piece = k + 1 == n ? s.size() - at : 1 + rng() % (s.size() - at);
      Message m;
      m.flow = f + 1;
      m.dir = dir;
      m.seq = k;
      m.body.assign(s.begin() + static_cast<long>(at), s.begin() + static_cast<long>(at + piece));
      at += piece;
      if (sealed) {
        uint8_t iv[16];
        for (uint8_t& b : iv) b = static_cast<uint8_t>(rng());
        Bytes c = cbc(true, iv, m.body.data(), m.body.size());
        if (rng() % 23 == 0) c.back() ^= 0x5a;
        Bytes body(iv, iv + 16);
        body.insert(body.end(), c.begin(), c.end());
        m.body = std::move(body);
      }
      per_flow[f].push_back(std::move(m));
    }
  }
  std::vector<Message> out;
  std::vector<size_t> next(flows, 0);
  for (size_t left = 0;;) {
    left = 0;
    for (size_t f = 0; f < flows; ++f) left += per_flow[f].size() - next[f];
    if (left == 0) break;
    size_t pick = rng() % left;
    for (size_t f = 0; f < flows; ++f) {
      const size_t here = per_flow[f].size() - next[f];
      if (pick < here) {
        out.push_back(std::move(per_flow[f][next[f]++]));
        break;
      }
      pick -= here;
    }
  }
  return out;
}

using PerFlow = std::map<FlowId, std::vector<Message>>;

PerFlow run(Processor& proc, const std::vector<Message>& input) {
  std::vector<Message> out;
  std::map<FlowId, bool> opened;
  uint64_t now = 1;
  for (const Message& m : input) {
    if (!opened[m.flow]) proc.open_flow(m.flow);
    opened[m.flow] = true;
    Message copy = m;
    copy.arrival_ns = now;
    proc.submit(std::move(copy));
    now += 1000;
    proc.poll(now, out);
  }
  if (auto* b = dynamic_cast<BatchProcessor*>(&proc)) b->flush(out);
  proc.poll(now, out);
  PerFlow per;
  for (Message& m : out) per[m.flow].push_back(std::move(m));
  return per;
}

// The same messages in the same order per flow with the same verdicts (and bodies, unless
// `bodies` is false); returns the number of alerts and of answered messages.
std::pair<uint64_t, uint64_t> expect_same(const PerFlow& want, const PerFlow& got, bool bodies) {
  uint64_t alerts = 0, answered = 0;
  EXPECT_EQ(want.size(), got.size());
  for (const auto& [id, msgs] : want) {
    const auto it = got.find(id);
    if (it == got.end() || it->second.size() != msgs.size()) {
      ADD_FAILURE() << "flow " << id << ": messages missing";
      continue;
    }
    for (size_t k = 0; k < msgs.size(); ++k) {
      const Message& a = msgs[k];
      const Message& b = it->second[k];
      EXPECT_EQ(b.seq, a.seq);
      EXPECT_EQ(b.verdict.action, a.verdict.action) << "flow " << id << " seq " << a.seq;
      EXPECT_EQ(b.verdict.status, a.verdict.status) << "flow " << id << " seq " << a.seq;
      EXPECT_EQ(b.verdict.alerts, a.verdict.alerts) << "flow " << id << " seq " << a.seq;
      if (bodies && a.verdict.action == Action::kForward) {
        EXPECT_TRUE(b.body == a.body) << "flow " << id << " seq " << a.seq;
      }
      alerts += a.verdict.alerts;
      answered += a.verdict.action != Action::kForward;
    }
  }
  return {alerts, answered};
}

BatchOptions options(const char* policy) {
  BatchOptions opt;
  EXPECT_TRUE(opt.set_policy(policy).ok());
  EXPECT_TRUE(opt.set_threshold("48").ok());
  return opt;
}

void stream_ids_on(std::shared_ptr<offload::Device> dev) {
  ASSERT_NE(dev, nullptr);
  for (StreamIds::Mode mode : {StreamIds::Mode::kDetect, StreamIds::Mode::kBlock}) {
    const std::vector<Message> input = traffic(3, 240, Direction::kRequest, false);
    auto ref_chain = std::make_shared<Chain>();
    ref_chain->add(ids(mode));
    InlineProcessor ref(ref_chain);
    const PerFlow want = run(ref, input);
    for (const char* policy : {"device", "round-robin", "flowshader"}) {
      SCOPED_TRACE(policy);
      auto chain = std::make_shared<Chain>();
      chain->add(ids(mode));
      ASSERT_TRUE(chain->offloadable());
      BatchProcessor proc(chain, dev, options(policy));
      ASSERT_EQ(proc.cpu_only_reason(), "");
      const PerFlow got = run(proc, input);
      const auto [alerts, answered] = expect_same(want, got, true);
      EXPECT_GT(alerts, 100u);  // the test can fail: planted patterns raise alerts
      if (mode == StreamIds::Mode::kBlock) {
        EXPECT_GT(answered, 50u);
      }
      EXPECT_GT(proc.stats().messages_device, 0u);
      EXPECT_EQ(proc.stats().fallback_messages, 0u);
    }
  }
}

void gateway_then_ids_on(std::shared_ptr<offload::Device> dev) {
  ASSERT_NE(dev, nullptr);
  const std::vector<Message> input = traffic(4, 200, Direction::kRequest, true);
  auto make = [] {
    auto c = std::make_shared<Chain>();
    c->add(gateway(true, false));
    c->add(ids(StreamIds::Mode::kBlock));
    return c;
  };
  InlineProcessor ref(make());
  const PerFlow want = run(ref, input);
  uint64_t bad = 0;
  for (const auto& [id, msgs] : want)
    for (const Message& m : msgs) bad += m.verdict.status == 400;
  EXPECT_GT(bad, 0u);
  for (const char* policy : {"device", "round-robin"}) {
    SCOPED_TRACE(policy);
    auto chain = make();
    ASSERT_TRUE(chain->offloadable());
    BatchProcessor proc(chain, dev, options(policy));
    const PerFlow got = run(proc, input);
    const auto [alerts, answered] = expect_same(want, got, true);
    EXPECT_GT(alerts, 50u);
    EXPECT_GT(answered, bad);
    EXPECT_GT(proc.stats().messages_device, 0u);
  }
}

void gateway_encrypts_on(std::shared_ptr<offload::Device> dev) {
  ASSERT_NE(dev, nullptr);
  const std::vector<Message> input = traffic(5, 150, Direction::kResponse, false);
  auto chain = std::make_shared<Chain>();
  chain->add(gateway(false, true));
  ASSERT_TRUE(chain->offloadable());
  BatchProcessor proc(chain, dev, options("device"));
  const PerFlow got = run(proc, input);
  std::map<FlowId, std::vector<const Message*>> sent;
  for (const Message& m : input) sent[m.flow].push_back(&m);
  size_t checked = 0;
  Bytes last_iv;
  for (const auto& [id, msgs] : got) {
    ASSERT_EQ(msgs.size(), sent[id].size());
    for (size_t k = 0; k < msgs.size(); ++k) {
      const Message& m = msgs[k];
      ASSERT_EQ(m.verdict.action, Action::kForward);
      ASSERT_GE(m.body.size(), 32u);
      const Bytes plain = cbc(false, m.body.data(), m.body.data() + 16, m.body.size() - 16);
      EXPECT_TRUE(plain == sent[id][k]->body) << "flow " << id << " seq " << k;
      const Bytes iv(m.body.begin(), m.body.begin() + 16);
      EXPECT_NE(iv, last_iv);
      last_iv = iv;
      ++checked;
    }
  }
  EXPECT_EQ(checked, input.size());
  EXPECT_EQ(proc.stats().messages_device, input.size());
}

TEST(L7NfsDevice, StreamIdsOnTheEmulatedDeviceRaisesTheCpuAlerts) {
  WITH_EMULATED_DEVICE();
  stream_ids_on(first_device(offload::Backend::kEmu));
}

TEST(L7NfsDevice, StreamIdsOnPoclRaisesTheCpuAlerts) {
  REQUIRE_OPENCL_DEVICES();
  stream_ids_on(first_device(offload::Backend::kOpenCL));
}

TEST(L7NfsDevice, GatewayThenIdsFusedOnTheEmulatedDeviceEqualsTheCpu) {
  WITH_EMULATED_DEVICE();
  gateway_then_ids_on(first_device(offload::Backend::kEmu));
}

TEST(L7NfsDevice, GatewayThenIdsFusedOnPoclEqualsTheCpu) {
  REQUIRE_OPENCL_DEVICES();
  gateway_then_ids_on(first_device(offload::Backend::kOpenCL));
}

TEST(L7NfsDevice, GatewayEncryptsResponsesOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  gateway_encrypts_on(first_device(offload::Backend::kEmu));
}

TEST(L7NfsDevice, GatewayEncryptsResponsesOnPocl) {
  REQUIRE_OPENCL_DEVICES();
  gateway_encrypts_on(first_device(offload::Backend::kOpenCL));
}

}  // namespace
}  // namespace fulcrum::l7
