// BatchProcessor (FlowShader's flow manager + batch manager + scheduler + device execution)
// against InlineProcessor with the same chain: the same verdicts, bodies and flow states, each
// flow's messages in order, with messages arriving interleaved across many flows, for every
// policy, on the emulated device and on PoCL; a device that fails mid-run falls back to the CPU
// with nothing lost; the timeout dispatches a round below the threshold; closed flows expire.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "l7/flow/batch_processor.hh"
#include "l7/flow/processor.hh"
#include "l7/nf/chain.hh"
#include "l7/nf/touch.hh"
#include "offload/discovery.hh"
#include "offload/failure_injection.hh"
#include "offload_testing.hh"

namespace fulcrum::l7 {
namespace {

using fulcrum::testing::first_device;
using Bytes = std::vector<uint8_t>;

struct Outcome {
  std::map<FlowId, std::vector<Message>> per_flow;  // in the order they came back
  std::map<FlowId, Bytes> states;
  size_t count = 0;
};

// Traffic: `flows` flows with 0..max_msgs messages of 0..max_len bytes (every 17th flow up to
// 20 * max_len: a heavy tail for the scheduler), interleaved at random, each flow's in order.
std::vector<Message> traffic(uint32_t seed, size_t flows, size_t max_msgs, size_t max_len) {
  std::mt19937 rng(seed);
  std::vector<FlowId> order;
  for (FlowId f = 1; f <= flows; ++f)
    for (size_t k = 0, n = rng() % (max_msgs + 1); k < n; ++k) order.push_back(f);
  std::shuffle(order.begin(), order.end(), rng);
  std::map<FlowId, uint64_t> next;
  std::vector<Message> out;
  for (FlowId f : order) {
    Message m;
    m.flow = f;
    m.seq = next[f]++;
    m.http = false;
    m.body.resize(rng() % ((f % 17 == 0 ? 20 * max_len : max_len) + 1));
    for (uint8_t& b : m.body) b = static_cast<uint8_t>(rng());
    out.push_back(std::move(m));
  }
  return out;
}

std::shared_ptr<Chain> touch_chain(size_t n, uint32_t respond_mod) {
  auto c = std::make_shared<Chain>();
  for (size_t i = 0; i < n; ++i) c->add(std::make_unique<Touch>(respond_mod));
  return c;
}

template <class P>
Outcome run(P& proc, const std::vector<Message>& input) {
  Outcome o;
  std::vector<Message> out;
  std::map<FlowId, bool> opened;
  uint64_t now = 1;
  for (const Message& m : input) {
    if (!opened[m.flow]) {
      proc.open_flow(m.flow);
      opened[m.flow] = true;
    }
    Message copy = m;
    copy.arrival_ns = now;
    proc.submit(std::move(copy));
    now += 1000;  // 1 µs apart: the 100 ms timeout never fires in these runs
    proc.poll(now, out);
  }
  if constexpr (std::is_same_v<P, BatchProcessor>)
    proc.flush(out);
  else
    proc.poll(now, out);
  for (Message& m : out) {
    ++o.count;
    o.per_flow[m.flow].push_back(std::move(m));
  }
  for (const auto& [id, _] : opened) o.states[id] = *proc.state(id);
  return o;
}

// Returns how many messages were answered (not forwarded).
size_t expect_same(const Outcome& want, const Outcome& got) {
  EXPECT_EQ(got.count, want.count);
  EXPECT_EQ(got.per_flow.size(), want.per_flow.size());
  size_t responded = 0;
  for (const auto& [id, msgs] : want.per_flow) {
    const auto it = got.per_flow.find(id);
    if (it == got.per_flow.end() || it->second.size() != msgs.size()) {
      ADD_FAILURE() << "flow " << id << ": messages missing";
      return responded;
    }
    for (size_t k = 0; k < msgs.size(); ++k) {
      const Message& a = msgs[k];
      const Message& b = it->second[k];
      const bool same =
          b.seq == k && a.seq == k && b.body == a.body && b.verdict.action == a.verdict.action &&
          b.verdict.status == a.verdict.status && b.verdict.reason == a.verdict.reason;
      if (!same) {
        ADD_FAILURE() << "flow " << id << " message " << k << " (seq " << b.seq
                      << "): differs from InlineProcessor's";
        return responded;
      }
      responded += a.verdict.action == Action::kRespond;
    }
  }
  EXPECT_TRUE(got.states == want.states);
  return responded;
}

Outcome inline_outcome(const std::vector<Message>& input, size_t ops, uint32_t respond_mod) {
  InlineProcessor ref(touch_chain(ops, respond_mod));
  return run(ref, input);
}

void expect_policies_match_inline(std::shared_ptr<offload::Device> dev) {
  const std::vector<Message> input = traffic(5, 400, 8, 1500);
  struct Case {
    size_t ops;
    uint32_t respond_mod;
  };
  for (const Case c : {Case{1, 7}, Case{3, 0}}) {
    const Outcome want = inline_outcome(input, c.ops, c.respond_mod);
    for (const char* policy : {"flowshader", "device", "round-robin", "fixed:20", "cpu"}) {
      SCOPED_TRACE(std::string(policy) + " ops=" + std::to_string(c.ops));
      BatchOptions opt;
      ASSERT_TRUE(opt.set_policy(policy).ok());
      ASSERT_TRUE(opt.set_threshold("96").ok());
      BatchProcessor proc(touch_chain(c.ops, c.respond_mod), dev, opt);
      if (std::string(policy) != "cpu") {
        EXPECT_EQ(proc.cpu_only_reason(), "");
      }
      const Outcome got = run(proc, input);
      const size_t responded = expect_same(want, got);
      if (c.respond_mod != 0) {
        EXPECT_GT(responded, 20u);
      }
      const BatchStats& s = proc.stats();
      EXPECT_EQ(s.messages_cpu + s.messages_device, input.size());
      EXPECT_EQ(s.fallback_messages, 0u);
      if (std::string(policy) == "device") {
        EXPECT_EQ(s.messages_cpu, 0u);
      }
      if (std::string(policy) == "cpu") {
        EXPECT_EQ(s.messages_device, 0u);
      }
      if (std::string(policy) == "round-robin" || std::string(policy) == "fixed:20") {
        EXPECT_GT(s.messages_cpu, 0u);
        EXPECT_GT(s.messages_device, 0u);
      }
      // More than one round (how many depends on how long the device takes: messages that
      // arrive while a round is in flight go into the next one).
      EXPECT_GE(s.rounds, 2u);
    }
  }
}

TEST(L7BatchProcessor, MatchesInlineProcessorForEveryPolicyOnTheEmulatedDevice) {
  WITH_EMULATED_DEVICE();
  expect_policies_match_inline(first_device(offload::Backend::kEmu));
}

TEST(L7BatchProcessor, MatchesInlineProcessorForEveryPolicyOnPocl) {
  REQUIRE_OPENCL_DEVICES();
  expect_policies_match_inline(first_device(offload::Backend::kOpenCL));
}

TEST(L7BatchProcessor, WithoutADeviceEverythingRunsOnTheCpu) {
  const std::vector<Message> input = traffic(8, 100, 5, 300);
  const Outcome want = inline_outcome(input, 2, 5);
  BatchProcessor proc(touch_chain(2, 5), nullptr);
  EXPECT_EQ(proc.cpu_only_reason(), "no device");
  expect_same(want, run(proc, input));
  EXPECT_EQ(proc.stats().messages_device, 0u);
}

// An NF with no device form makes the whole chain run on the CPU.
class CpuOnly final : public FlowNf {
 public:
  std::string_view name() const override { return "CpuOnly"; }
  void process(Message& m, std::span<uint8_t>) override { m.verdict.alerts += 1; }
};

TEST(L7BatchProcessor, AChainThatIsNotOffloadableRunsOnTheCpu) {
  WITH_EMULATED_DEVICE();
  auto chain = std::make_shared<Chain>();
  chain->add(std::make_unique<Touch>());
  chain->add(std::make_unique<CpuOnly>());
  BatchProcessor proc(chain, first_device(offload::Backend::kEmu));
  EXPECT_EQ(proc.cpu_only_reason(), "an NF of the chain has no device form");
  const Outcome got = run(proc, traffic(2, 50, 4, 100));
  for (const auto& [id, msgs] : got.per_flow)
    for (const Message& m : msgs) EXPECT_EQ(m.verdict.alerts, 1u);
  EXPECT_EQ(proc.stats().messages_device, 0u);
}

TEST(L7BatchProcessor, ADeviceThatFailsFallsBackWithNothingLost) {
  WITH_EMULATED_DEVICE();
  const std::vector<Message> input = traffic(13, 300, 8, 800);
  const Outcome want = inline_outcome(input, 1, 11);
  offload::DiscoverOptions only;
  only.only = offload::Backend::kEmu;
  auto devs = offload::discover_devices(only);
  ASSERT_EQ(devs.size(), 1u);
  // Two launches succeed, then every call fails.
  std::shared_ptr<offload::Device> dev = offload::make_failing_device(std::move(devs[0]), 2);
  BatchOptions opt;
  ASSERT_TRUE(opt.set_policy("device").ok());
  ASSERT_TRUE(opt.set_threshold("64").ok());
  BatchProcessor proc(touch_chain(1, 11), dev, opt);
  const Outcome got = run(proc, input);
  expect_same(want, got);
  const BatchStats& s = proc.stats();
  EXPECT_FALSE(dev->is_up());
  EXPECT_EQ(proc.cpu_only_reason(), "the device failed");
  EXPECT_EQ(s.fallback_rounds, 1u);
  EXPECT_GT(s.fallback_messages, 0u);
  EXPECT_GT(s.messages_device, 0u);  // the two rounds before the failure
  EXPECT_EQ(s.messages_cpu + s.messages_device, input.size());
}

TEST(L7BatchProcessor, TheTimeoutDispatchesARoundBelowTheThreshold) {
  BatchOptions opt;
  ASSERT_TRUE(opt.set_threshold("1000").ok());
  ASSERT_TRUE(opt.set_timeout("100ms").ok());
  BatchProcessor proc(touch_chain(1, 0), nullptr, opt);
  const uint64_t t0 = 5'000'000'000;
  for (uint64_t k = 0; k < 5; ++k) {
    Message m;
    m.flow = 1 + k % 2;
    m.seq = k / 2;
    m.arrival_ns = t0 + k;
    m.body = {1, 2, 3};
    proc.submit(std::move(m));
  }
  std::vector<Message> out;
  EXPECT_EQ(proc.poll(t0 + 50 * kNsPerMs, out), t0 + 100 * kNsPerMs);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(proc.poll(t0 + 100 * kNsPerMs, out), kNoDeadline);
  EXPECT_EQ(out.size(), 5u);
  EXPECT_EQ(proc.stats().rounds_on_timeout, 1u);
}

TEST(L7BatchProcessor, AClosedFlowExpiresOnceItsMessagesAreOut) {
  BatchOptions opt;
  ASSERT_TRUE(opt.set_threshold("4").ok());
  BatchProcessor proc(touch_chain(1, 0), nullptr, opt);
  proc.open_flow(9);
  Message m;
  m.flow = 9;
  m.body = {7};
  proc.submit(std::move(m));
  proc.close_flow(9);
  ASSERT_NE(proc.state(9), nullptr);  // still held: its message is queued
  std::vector<Message> out;
  proc.flush(out);
  EXPECT_EQ(out.size(), 1u);
  EXPECT_EQ(proc.state(9), nullptr);
}

TEST(L7BatchProcessor, OptionsParse) {
  BatchOptions o;
  EXPECT_TRUE(o.set_threshold("auto").ok());
  EXPECT_TRUE(o.dynamic_threshold);
  EXPECT_TRUE(o.set_threshold("512").ok());
  EXPECT_FALSE(o.dynamic_threshold);
  EXPECT_EQ(o.threshold, 512u);
  EXPECT_FALSE(o.set_threshold("0").ok());
  EXPECT_FALSE(o.set_threshold("many").ok());
  EXPECT_TRUE(o.set_timeout("250us").ok());
  EXPECT_EQ(o.timeout_ns, 250000u);
  EXPECT_FALSE(o.set_timeout("5 parsecs").ok());
  EXPECT_TRUE(o.set_policy("fixed:10").ok());
  EXPECT_EQ(o.policy.kind, PolicyKind::kFixed);
  EXPECT_FALSE(o.set_policy("fixed:x").ok());
  EXPECT_EQ(BatchOptions{}.timeout_ns, 100 * kNsPerMs);
}

}  // namespace
}  // namespace fulcrum::l7
