#include "core/graph.hh"

#include <gtest/gtest.h>
#include <rte_cycles.h>

#include <algorithm>
#include <map>
#include <vector>

#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

// Collects what ToOutput transmits, in order, with the output port each packet would take.
class CollectingSink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    const TxSummary* sum = batch.tx_summary();
    summaries.push_back(sum != nullptr ? *sum : TxSummary{});
    rx_tscs.push_back(batch.anno().rx_tsc);
    batch.for_each([&](uint32_t, Packet* p) {
      sent.push_back(in_port(p));
      ports.push_back(effective_out_port(p));
      rte_pktmbuf_free(p);
    });
    batch.set_count(0);
  }
  std::vector<uint16_t> sent;  // the in_port tag of each transmitted packet
  std::vector<uint16_t> ports;
  std::vector<TxSummary> summaries;  // per batch transmitted; count 0: none came with it
  std::vector<uint64_t> rx_tscs;     // per batch transmitted: BatchAnno::rx_tsc
};

bool is_class(std::string_view n) {
  return Registry::instance().find(n) != nullptr;
}

Result<std::unique_ptr<Pipeline>> build(const std::string& text, CollectingSink& sink,
                                        BranchMode mode = BranchMode::kReuse) {
  static SharedStorage shared;
  Result<PipelineConfig> cfg = parse_pipeline(text, "test.click", is_class);
  if (!cfg) return make_error(cfg.error());
  InitContext ctx;
  ctx.ports = 4;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = testing::test_pool();
  return Pipeline::build(cfg.value(), ctx, mode);
}

// A batch of n IPv4 frames; packet i is tagged with in_port = i so order can be checked.
void fill(PacketBatch& b, int n) {
  b.clear();
  for (int i = 0; i < n; ++i)
    b.push(testing::make_packet(testing::ipv4_udp_frame(0x0A000001, 0x0A000002),
                                static_cast<uint16_t>(i)));
}

const NodeStats& stats_of(const Pipeline& p, const std::string& name) {
  for (const Node& n : p.nodes())
    if (n.element->name() == name) return n.stats;
  ADD_FAILURE() << "no element " << name;
  static NodeStats none;
  return none;
}

TEST(Graph, LinearPipelineForwardsEveryPacketInOrder) {
  CollectingSink sink;
  auto p = build("FromInput -> NoOp -> EtherMirror -> ToOutput;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  PacketBatch b;
  fill(b, 64);
  p.value()->inject(b);
  ASSERT_EQ(sink.sent.size(), 64u);
  for (uint16_t i = 0; i < 64; ++i) EXPECT_EQ(sink.sent[i], i);
  EXPECT_EQ(p.value()->dropped(), 0u);
}

// The element before ToOutput learns what the transmit path needs (bytes, one port or several)
// in its own pass; an element whose output 0 goes elsewhere does not, nor does a batch that lost
// slots on the way.
TEST(Graph, TheElementBeforeToOutputLearnsTheTransmitSummary) {
  CollectingSink sink;
  auto p = build("FromInput -> a :: NoOp -> b :: EtherMirror -> ToOutput;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_FALSE(p.value()->element(1).feeds_sink());
  EXPECT_TRUE(p.value()->element(2).feeds_sink());
  PacketBatch b;
  fill(b, 64);
  uint64_t bytes = 0;
  for (Packet* m : b.packets()) bytes += m->pkt_len;
  for (uint32_t i = 0; i < 64; ++i) set_out_port(b.at(i), i == 63 ? 1 : 2);
  p.value()->inject(b);
  ASSERT_EQ(sink.summaries.size(), 1u);
  EXPECT_EQ(sink.summaries[0].count, 64u);
  EXPECT_EQ(sink.summaries[0].bytes, bytes);
  EXPECT_FALSE(sink.summaries[0].one_port()) << "packet 63 leaves by port 1";

  fill(b, 64);
  for (uint32_t i = 0; i < 64; ++i) set_out_port(b.at(i), 2);
  p.value()->inject(b);
  ASSERT_EQ(sink.summaries.size(), 2u);
  EXPECT_TRUE(sink.summaries[1].one_port());
  EXPECT_EQ(sink.summaries[1].port_or, 2u);

  CollectingSink split_sink;
  auto q = build("FromInput -> s :: RandomSplit(0.5, SEED 4); s[0] -> ToOutput; s[1] -> ToOutput;",
                 split_sink);
  ASSERT_TRUE(q.ok()) << q.error();
  fill(b, 64);
  q.value()->inject(b);
  ASSERT_EQ(split_sink.sent.size(), 64u);
  for (const TxSummary& sum : split_sink.summaries)
    EXPECT_EQ(sum.count, 0u) << "RandomSplit's batches lost slots or are new";
}

// A batch enters with the clock read that starts its first element's cycles as its RX time,
// unless the worker stamped one (latency measurement).
TEST(Graph, InjectGivesTheBatchItsRxTimeUnlessItHasOne) {
  CollectingSink sink;
  auto p = build("FromInput -> NoOp -> ToOutput;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  PacketBatch b;
  fill(b, 8);
  const uint64_t before = rte_rdtsc();
  p.value()->inject(b);
  fill(b, 8);
  b.anno().rx_tsc = 12345;
  p.value()->inject(b);
  ASSERT_EQ(sink.rx_tscs.size(), 2u);
  EXPECT_GE(sink.rx_tscs[0], before);
  EXPECT_EQ(sink.rx_tscs[1], 12345u);
}

// A batch kept for a branch's predicted output other than 0 carries that output's verdicts into
// the next element, which writes its own: where it drops a packet (here EtherMirror, a frame too
// short), the others must leave by its output 0, not by a stale output 1 it does not have.
TEST(Graph, ABatchKeptForOutputOneReachesTheNextElementAtOutputZero) {
  CollectingSink sink;
  auto p = build(
      "FromInput -> s :: RandomSplit(0.9, SEED 5); s[0] -> a :: EtherMirror -> ToOutput; s[1] -> "
      "b :: EtherMirror -> ToOutput;",
      sink);
  ASSERT_TRUE(p.ok()) << p.error();
  PacketBatch batch;
  for (int round = 0; round < 20; ++round) {
    fill(batch, 64);
    for (uint32_t i = 0; i < 64; i += 8) {
      rte_pktmbuf_free(batch.at(i));
      batch.data()[i] = testing::make_packet(std::vector<uint8_t>(10, 0), static_cast<uint16_t>(i));
    }
    p.value()->inject(batch);
  }
  const NodeStats& a = stats_of(*p.value(), "a");
  const NodeStats& b = stats_of(*p.value(), "b");
  EXPECT_GT(b.in_packets, a.in_packets);
  EXPECT_EQ(b.unconnected_drops, 0u);
  EXPECT_EQ(a.drops[0] + b.drops[0], 20u * 8u) << "the short frames, as truncated";
  EXPECT_EQ(sink.sent.size(), 20u * 56u);
}

// Each element's frame sizes are sampled, one packet a batch: what a placement model needs to know
// of the frame at a cut (an element after an encapsulation receives larger frames).
TEST(Graph, EachElementSamplesTheSizeOfTheFramesItReceives) {
  CollectingSink sink;
  auto p = build("FromInput -> n :: NoOp -> ToOutput;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  PacketBatch b;
  fill(b, 64);
  const uint32_t bytes = b.at(0)->pkt_len;
  p.value()->inject(b);
  b.clear();
  b.push(testing::make_packet(std::vector<uint8_t>(200, 0), 0));
  p.value()->inject(b);
  const NodeStats& noop = stats_of(*p.value(), "n");
  EXPECT_EQ(noop.byte_samples, 2u);
  EXPECT_EQ(noop.sampled_bytes, bytes + 200u);
}

// The graph runs batches on its own work stack, not the machine's: a chain far longer than any
// thread's stack allows for one frame per element (the release build crashed at 400k) loads,
// is checked for cycles and forwards every packet in order.
TEST(Graph, VeryLongChainRunsInConstantStack) {
  constexpr int kChain = 400000;
  std::string text = "FromInput";
  for (int i = 0; i < kChain; ++i) text += " -> NoOp";
  text += " -> RandomSplit(0.5)[1] -> ToOutput;";
  CollectingSink sink;
  auto p = build(text, sink);
  ASSERT_TRUE(p.ok()) << p.error();
  PacketBatch b;
  fill(b, 64);
  p.value()->inject(b);
  const NodeStats& last = p.value()->nodes()[kChain + 1].stats;
  EXPECT_EQ(last.in_packets, 64u);
  EXPECT_EQ(sink.sent.size() + last.unconnected_drops, 64u);
  EXPECT_TRUE(std::is_sorted(sink.sent.begin(), sink.sent.end()));
}

TEST(Graph, DropsAreFreedAndCountedByReason) {
  CollectingSink sink;
  auto p =
      build("FromInput -> s :: RandomSplit(0.5); s[0] -> ToOutput; s[1] -> d :: Discard;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  const unsigned before = rte_mempool_avail_count(testing::test_pool());
  PacketBatch b;
  for (int round = 0; round < 100; ++round) {
    fill(b, 64);
    p.value()->inject(b);
  }
  const NodeStats& d = stats_of(*p.value(), "d");
  EXPECT_EQ(d.drops[0] + sink.sent.size(), 6400u);
  EXPECT_EQ(d.drops[0], stats_of(*p.value(), "s").out_packets[1]);
  EXPECT_GT(d.drops[0], 2500u);
  EXPECT_LT(d.drops[0], 3900u);
  EXPECT_EQ(rte_mempool_avail_count(testing::test_pool()), before) << "a buffer leaked";
}

// Both branch modes deliver the same packets to the same outputs; only the batching differs.
TEST(Graph, ReuseAndSplitModesDeliverTheSamePackets) {
  const std::string text =
      "FromInput -> s :: RandomSplit(0.1, SEED 9); s[0] -> a :: Counter -> ToOutput;"
      "s[1] -> b :: Counter -> ToOutput;";
  std::map<BranchMode, std::vector<uint16_t>> seen;
  for (BranchMode mode : {BranchMode::kReuse, BranchMode::kSplit}) {
    CollectingSink sink;
    auto p = build(text, sink, mode);
    ASSERT_TRUE(p.ok()) << p.error();
    PacketBatch batch;
    for (int round = 0; round < 50; ++round) {
      fill(batch, 64);
      p.value()->inject(batch);
    }
    seen[mode] = sink.sent;
    EXPECT_EQ(sink.sent.size(), 3200u);
  }
  std::sort(seen[BranchMode::kReuse].begin(), seen[BranchMode::kReuse].end());
  std::sort(seen[BranchMode::kSplit].begin(), seen[BranchMode::kSplit].end());
  EXPECT_EQ(seen[BranchMode::kReuse], seen[BranchMode::kSplit]);
}

// The majority keeps the original batch (masked slots); the minority gets a new batch.
TEST(Graph, ReuseModeKeepsTheBatchForTheMajorityOutput) {
  CollectingSink sink;
  auto p = build(
      "FromInput -> s :: RandomSplit(0.05); s[0] -> big :: NoOp -> ToOutput; s[1] -> small :: NoOp "
      "-> ToOutput;",
      sink);
  ASSERT_TRUE(p.ok()) << p.error();
  PacketBatch b;
  fill(b, 64);
  p.value()->inject(b);
  EXPECT_EQ(stats_of(*p.value(), "big").batches, 1u);
  const uint64_t minority = stats_of(*p.value(), "s").out_packets[1];
  EXPECT_EQ(stats_of(*p.value(), "small").in_packets, minority);
  EXPECT_EQ(b.count(), 0u) << "ToOutput took every packet of the reused batch";
  EXPECT_EQ(sink.sent.size(), 64u);
}

TEST(Graph, UnconnectedOutputDropsWithReason) {
  CollectingSink sink;
  auto p = build("FromInput -> s :: RandomSplit(1.0); s[0] -> ToOutput;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  PacketBatch b;
  fill(b, 10);
  p.value()->inject(b);
  EXPECT_EQ(stats_of(*p.value(), "s").unconnected_drops, 10u);
  EXPECT_TRUE(sink.sent.empty());
}

TEST(Graph, ListsUnconnectedOutputsButNotOptionalOnes) {
  CollectingSink sink;
  auto p = build(
      "FromInput -> s :: RandomSplit(0.5); s[0] -> CheckIPHeader -> t :: DecIPTTL -> ToOutput;",
      sink);
  ASSERT_TRUE(p.ok()) << p.error();
  const std::vector<std::string> u = p.value()->unconnected_outputs();
  ASSERT_EQ(u.size(), 1u);  // DecIPTTL's output 1 is optional: it drops expired packets itself
  EXPECT_NE(u[0].find(":1:14: output 1 of 's' (RandomSplit) is not connected"), std::string::npos)
      << u[0];
  auto whole =
      build("FromInput -> s :: RandomSplit(0.5); s[0] -> ToOutput; s[1] -> Discard;", sink);
  ASSERT_TRUE(whole.ok()) << whole.error();
  EXPECT_TRUE(whole.value()->unconnected_outputs().empty());
}

TEST(Graph, TimedSourceRunsOnItsTimerUpToItsLimit) {
  CollectingSink sink;
  auto p = build(
      "TimedSource(INTERVAL_US 10, BURST 3, LIMIT 7, PORT 2) -> CheckIPHeader -> ToOutput;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.value()->has_tasks());
  EXPECT_FALSE(p.value()->has_input());
  p.value()->run_tasks(1000);
  EXPECT_EQ(sink.sent.size(), 3u);
  p.value()->run_tasks(1005);  // before the next expiry (1000 + 10 us)
  EXPECT_EQ(sink.sent.size(), 3u);
  p.value()->run_tasks(11000);
  p.value()->run_tasks(22000);
  p.value()->run_tasks(33000);
  EXPECT_EQ(sink.sent.size(), 7u);
  EXPECT_EQ(p.value()->created(), 7u);
  for (uint16_t port : sink.ports) EXPECT_EQ(port, 2);
}

// A deferring element for the test below: takes the odd slots of each batch and hands them back
// (to output 1 if the packet's in_port tag is a multiple of 3, else output 0) on the next poll.
class DeferOdd final : public ElementBase<DeferOdd> {
 public:
  static constexpr ElementTraits kTraits{"TestDeferOdd", 1, 2, {}};
  Status configure(Args& args) override { return args.finish(); }
  bool defers() const override { return true; }
  uint64_t held() const override { return held_.size(); }
  void process_batch(PacketBatch& batch) override {
    batch.for_each([&](uint32_t i, Packet* p) {
      if (i % 2 == 0) return;
      held_.push_back(p);
      batch.exclude(i);
    });
  }
  void poll_deferred(uint64_t, PacketBatch& out) override {
    for (; !held_.empty() && !out.full(); held_.erase(held_.begin())) {
      out.push(held_.front());
      out.set_result(out.count() - 1, Verdict::out(in_port(held_.front()) % 3 == 0 ? 1 : 0));
    }
  }

 private:
  std::vector<Packet*> held_;
};
FULCRUM_REGISTER_ELEMENT(DeferOdd);

TEST(Graph, DeferredPacketsLeaveByTheirOutputsWhenPolled) {
  CollectingSink sink;
  auto p =
      build("FromInput -> d :: TestDeferOdd -> a :: Counter -> ToOutput; d[1] -> Discard;", sink);
  ASSERT_TRUE(p.ok()) << p.error();
  ASSERT_TRUE(p.value()->has_deferring());
  const unsigned before = rte_mempool_avail_count(testing::test_pool());
  PacketBatch b;
  fill(b, 10);
  p.value()->inject(b);
  EXPECT_EQ(sink.sent, (std::vector<uint16_t>{0, 2, 4, 6, 8}));
  EXPECT_EQ(p.value()->held(), 5u);
  EXPECT_EQ(p.value()->poll_deferred(0), 5u);
  EXPECT_EQ(p.value()->held(), 0u);
  // 1, 5 and 7 to output 0; 3 and 9 to output 1 (dropped by Discard).
  EXPECT_EQ(sink.sent, (std::vector<uint16_t>{0, 2, 4, 6, 8, 1, 5, 7}));
  EXPECT_EQ(stats_of(*p.value(), "d").out_packets[0], 8u);
  EXPECT_EQ(stats_of(*p.value(), "d").out_packets[1], 2u);
  EXPECT_EQ(p.value()->dropped(), 2u);
  EXPECT_EQ(p.value()->poll_deferred(0), 0u);
  EXPECT_EQ(rte_mempool_avail_count(testing::test_pool()), before) << "a buffer leaked";
}

TEST(Graph, ErrorsNameTheLocation) {
  CollectingSink sink;
  struct Case {
    const char* text;
    const char* error;
  } cases[] = {
      {"FromInput -> c :: Classifier(12/0800);\nc[3] -> Discard;",
       "test.click:2:6: output port 3 of 'c' (Classifier) out of range: Classifier has 1 output"},
      {"FromInput -> [1]Discard;",
       "test.click:1:11: input port 1 of 'Discard@2' (Discard) out of range: Discard has 1 input"},
      {"a :: NoOp; FromInput -> a -> b :: NoOp -> a;", "closes a cycle"},
      {"s :: RandomSplit(0.5); FromInput -> s; s[0] -> Discard; s[0] -> ToOutput;",
       "output port 0 of 's' (RandomSplit) is already connected to 'Discard@"},
      {"FromInput -> RandomSplit(3) -> ToOutput;",
       "test.click:1:14: RandomSplit@2 :: RandomSplit: FRACTION must be between 0 and 1"},
      {"FromInput -> Discard; FromInput -> Discard;", "a second FromInput"},
      {"NoOp -> Discard;", "pipeline has no FromInput and no source element"},
  };
  for (const Case& c : cases) {
    auto p = build(c.text, sink);
    ASSERT_FALSE(p.ok()) << c.text;
    EXPECT_NE(p.error().find(c.error), std::string::npos) << "got: " << p.error();
  }
}

}  // namespace
}  // namespace fulcrum
