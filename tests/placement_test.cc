// Placements (runtime/placement.hh), the stage plan of a cut pipeline (runtime/stages.hh) and
// the Pipeliner's ring handoff between worker replicas (elements/standard/pipeliner.hh).
#include "runtime/placement.hh"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <thread>
#include <vector>

#include "core/flow_hash.hh"
#include "core/graph.hh"
#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "elements/standard/pipeliner.hh"
#include "runtime/stages.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

TEST(Placement, CloneAndAutoParse) {
  Result<Placement> c = parse_placement("clone");
  ASSERT_TRUE(c.ok()) << c.error();
  EXPECT_TRUE(c.value().cloned());
  EXPECT_EQ(c.value().stages(), 1u);
  Result<Placement> a = parse_placement("auto");
  ASSERT_TRUE(a.ok()) << a.error();
  EXPECT_TRUE(a.value().automatic);
  EXPECT_FALSE(a.value().cloned());
  EXPECT_EQ(to_string(c.value()), "clone");
  EXPECT_EQ(to_string(a.value()), "auto");
}

TEST(Placement, CutsAndCoresParseAndRoundTrip) {
  Result<Placement> p = parse_placement("cut=rt,cut=IPLookup@3,cores=1+2+1");
  ASSERT_TRUE(p.ok()) << p.error();
  EXPECT_EQ(p.value().cuts, (std::vector<std::string>{"rt", "IPLookup@3"}));
  EXPECT_EQ(p.value().cores, (std::vector<unsigned>{1, 2, 1}));
  EXPECT_EQ(p.value().stages(), 3u);
  EXPECT_FALSE(p.value().cloned());
  const std::string text = to_string(p.value());
  EXPECT_EQ(text, "cut=rt,cut=IPLookup@3,cores=1+2+1");
  Result<Placement> again = parse_placement(text);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again.value().cuts, p.value().cuts);
  EXPECT_EQ(again.value().cores, p.value().cores);
  // cores= may come first.
  Result<Placement> first = parse_placement("cores=2+1,cut=x");
  ASSERT_TRUE(first.ok()) << first.error();
  EXPECT_EQ(to_string(first.value()), "cut=x,cores=2+1");
}

TEST(Placement, MalformedSpecsNameTheProblem) {
  const std::map<std::string, std::string> cases = {
      {"", "empty"},
      {"cut=a", "no cores="},
      {"cores=1+1", "no cut="},
      {"cut=a,cores=1+0", "stage 1 has no cores"},
      {"cut=a,cores=1+x", "'x' is not a number of cores"},
      {"cut=a,cores=1++1", "'' is not a number of cores"},
      {"cut=a,cores=1+1+1", "1 cut make 2 stages but cores= names 3"},
      {"cut=a,cut=a,cores=1+1+1", "cut=a given twice"},
      {"cut=,cores=1+1", "cut= names no element"},
      {"cut=a,cores=1+1,cores=1+1", "cores= given twice"},
      {"clones", "'clones' is not clone, auto, cut= or cores="},
      {"cut=a,cores=1+1,workers=2", "'workers=2' is not"},
  };
  for (const auto& [spec, want] : cases) {
    Result<Placement> p = parse_placement(spec);
    ASSERT_FALSE(p.ok()) << spec;
    EXPECT_NE(p.error().find(want), std::string::npos) << spec << ": " << p.error();
    EXPECT_EQ(p.error().rfind("--placement: ", 0), 0u) << p.error();
  }
}

bool is_class(std::string_view n) {
  return Registry::instance().find(n) != nullptr;
}

PipelineConfig parse(const std::string& text) {
  Result<PipelineConfig> c = parse_pipeline(text, "test.click", is_class);
  EXPECT_TRUE(c.ok()) << c.error();
  return c.ok() ? c.value() : PipelineConfig{};
}

Placement placement(const std::string& spec) {
  Result<Placement> p = parse_placement(spec);
  EXPECT_TRUE(p.ok()) << p.error();
  return p.ok() ? p.value() : Placement{};
}

size_t index_of(const PipelineConfig& c, const std::string& name) {
  for (size_t i = 0; i < c.elements.size(); ++i)
    if (c.elements[i].name == name) return i;
  ADD_FAILURE() << "no element " << name;
  return 0;
}

constexpr const char* kChain = "FromInput -> a :: NoOp -> b :: Counter -> c :: NoOp -> ToOutput;";

TEST(StagePlan, CutInsertsAPipelinerOnTheEdgeAndSplitsTheStages) {
  PipelineConfig c = parse(kChain);
  const size_t before = c.elements.size();
  Result<StagePlan> plan = plan_stages(c, placement("cut=b,cores=1+2"), 3);
  ASSERT_TRUE(plan.ok()) << plan.error();
  ASSERT_EQ(c.elements.size(), before + 1);
  const size_t ring = index_of(c, "b/ring");
  EXPECT_EQ(c.elements[ring].class_name, "Pipeliner");
  // a -> b/ring -> b
  bool into_ring = false, out_of_ring = false;
  for (const ConfigConnection& e : c.connections) {
    into_ring |= e.from == index_of(c, "a") && e.to == ring;
    out_of_ring |= e.from == ring && e.to == index_of(c, "b");
    EXPECT_FALSE(e.from == index_of(c, "a") && e.to == index_of(c, "b"));
  }
  EXPECT_TRUE(into_ring && out_of_ring);
  const StagePlan& p = plan.value();
  EXPECT_EQ(p.stages, 2u);
  EXPECT_EQ(p.worker_stage, (std::vector<unsigned>{0, 1, 1}));
  EXPECT_EQ(p.workers_of(1), (std::vector<int>{1, 2}));
  EXPECT_EQ(p.element_stage[index_of(c, "a")], 0u);
  EXPECT_EQ(p.element_stage[ring], 1u);
  EXPECT_EQ(p.element_stage[index_of(c, "c")], 1u);
  EXPECT_FALSE(p.reach[1][index_of(c, "a")]);
  EXPECT_FALSE(p.reach[0][index_of(c, "b")]);
  ASSERT_EQ(p.links.size(), 1u);
  EXPECT_EQ(p.links[0].element, ring);
  EXPECT_EQ(p.links[0].from, (std::vector<unsigned>{0}));
  EXPECT_EQ(p.links[0].to, 1u);
}

TEST(StagePlan, CloneLeavesTheConfigurationAlone) {
  PipelineConfig c = parse(kChain);
  const size_t before = c.elements.size();
  Result<StagePlan> plan = plan_stages(c, Placement{}, 2);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_FALSE(plan.value().pipelined());
  EXPECT_EQ(c.elements.size(), before);
}

TEST(StagePlan, ACutMayNameAClassThePipelineHasOnceOrAPipelinerOfTheConfiguration) {
  PipelineConfig c = parse(kChain);
  Result<StagePlan> by_class = plan_stages(c, placement("cut=Counter,cores=1+1"), 2);
  ASSERT_TRUE(by_class.ok()) << by_class.error();
  EXPECT_EQ(c.elements[by_class.value().links[0].element].name, "b/ring");

  PipelineConfig d = parse("FromInput -> a :: NoOp -> p :: Pipeliner -> ToOutput;");
  const size_t before = d.elements.size();
  Result<StagePlan> own = plan_stages(d, placement("cut=p,cores=1+1"), 2);
  ASSERT_TRUE(own.ok()) << own.error();
  EXPECT_EQ(d.elements.size(), before);  // the configuration's Pipeliner is the boundary
  EXPECT_EQ(own.value().links[0].element, index_of(d, "p"));
}

TEST(StagePlan, ThreeStagesInPacketOrder) {
  PipelineConfig c = parse(kChain);
  Result<StagePlan> plan = plan_stages(c, placement("cut=b,cut=c,cores=1+1+1"), 3);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_EQ(plan.value().element_stage[index_of(c, "c")], 2u);
  EXPECT_EQ(plan.value().links[1].from, (std::vector<unsigned>{1}));
}

TEST(StagePlan, ErrorsNameTheCutTheElementAndWhere) {
  struct Case {
    std::string spec;
    int workers;
    std::string want;
  };
  const std::vector<Case> cases = {
      {"cut=bb,cores=1+1", 2, "has no element 'bb' (did you mean 'b'?)"},
      {"cut=NoOp,cores=1+1", 2, "has 2 NoOp elements; name one: a, c"},
      {"cut=b,cores=1+1", 3, "cores=1+1 adds up to 2 workers but the run has 3 (--workers)"},
      {"cut=FromInput@1,cores=1+1", 2, "has no input connection"},
      {"cut=c,cut=b,cores=1+1+1", 3, "list the cuts in the order packets reach them"},
      {"cut=b,cut=b/ring,cores=1+1+1", 3, "has no element 'b/ring'"},
  };
  for (const Case& k : cases) {
    PipelineConfig c = parse(kChain);
    Result<StagePlan> plan = plan_stages(c, placement(k.spec), k.workers);
    ASSERT_FALSE(plan.ok()) << k.spec;
    EXPECT_NE(plan.error().find(k.want), std::string::npos) << k.spec << ": " << plan.error();
  }
  PipelineConfig c = parse(kChain);
  Result<StagePlan> order = plan_stages(c, placement("cut=c,cut=b,cores=1+1+1"), 3);
  ASSERT_FALSE(order.ok());
  EXPECT_EQ(order.error().rfind("test.click:1:", 0), 0u) << order.error();
  Placement none_for_stage;
  none_for_stage.cuts = {"b"};
  none_for_stage.cores = {2, 0};
  EXPECT_NE(plan_stages(c, none_for_stage, 2).error().find("stage 1 has no cores"),
            std::string::npos);
}

TEST(StagePlan, AnElementAfterAMergeRunsInBothStages) {
  PipelineConfig c = parse(
      "FromInput -> cl :: Classifier(12/0800, -);"
      "cl[0] -> a :: NoOp -> out :: ToOutput; cl[1] -> out;");
  Result<StagePlan> plan = plan_stages(c, placement("cut=a,cores=1+1"), 2);
  ASSERT_TRUE(plan.ok()) << plan.error();
  EXPECT_TRUE(plan.value().reach[0][index_of(c, "out")]);
  EXPECT_TRUE(plan.value().reach[1][index_of(c, "out")]);
  EXPECT_FALSE(plan.value().reach[0][index_of(c, "a")]);
}

// Collects what ToOutput transmits: (flow, sequence) from the in_port and flow_hash annotations.
class CollectingSink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    batch.for_each([&](uint32_t, Packet* p) {
      got.emplace_back(anno_flow_hash(p), anno(p).user[0]);
      rte_pktmbuf_free(p);
    });
    batch.set_count(0);
  }
  std::vector<std::pair<uint32_t, uint64_t>> got;
};

// A run's workers, built by hand: the config cut, the rings, one replica per worker.
struct Staged {
  Staged(const std::string& text, const std::string& spec, int workers,
         unsigned ring = kStageRingSize)
      : sinks(static_cast<size_t>(workers)) {
    config = parse(text);
    Result<StagePlan> p = plan_stages(config, placement(spec), workers);
    EXPECT_TRUE(p.ok()) << p.error();
    plan = p.value();
    Result<std::shared_ptr<StageLinks>> l = StageLinks::create(plan, config, ring);
    EXPECT_TRUE(l.ok()) << l.error();
    links = l.value();
    Result<std::shared_ptr<const StageLinks>> stored = shared.get_or_build<StageLinks>(
        StageLinks::kSharedKey, [&]() -> Result<std::shared_ptr<StageLinks>> { return links; });
    EXPECT_TRUE(stored.ok());
    for (int w = 0; w < workers; ++w) {
      InitContext ctx;
      ctx.worker = w;
      ctx.workers = workers;
      ctx.ports = 4;
      ctx.shared = &shared;
      ctx.sink = &sinks[static_cast<size_t>(w)];
      ctx.pool = testing::test_pool();
      Result<std::unique_ptr<Pipeline>> pipe = Pipeline::build(config, ctx);
      EXPECT_TRUE(pipe.ok()) << pipe.error();
      std::vector<bool> runs = plan.reach[plan.worker_stage[static_cast<size_t>(w)]];
      for (const StagePlan::Link& k : plan.links)
        runs[k.element] = k.to == plan.worker_stage[static_cast<size_t>(w)];
      pipe.value()->keep_entry_points(runs);
      pipes.push_back(std::move(pipe.value()));
    }
  }

  PipelineConfig config;
  StagePlan plan;
  std::shared_ptr<StageLinks> links;
  SharedStorage shared;
  std::vector<CollectingSink> sinks;
  std::vector<std::unique_ptr<Pipeline>> pipes;
};

// `n` packets of `flows` flows, round robin; flow f has flow hash f * 2654435761 + 1 (never 0),
// its sequence number in user[0].
std::vector<Packet*> flow_packets(int n, int flows) {
  std::vector<Packet*> out;
  std::vector<uint64_t> seq(static_cast<size_t>(flows), 0);
  for (int i = 0; i < n; ++i) {
    const int f = i % flows;
    Packet* m = testing::make_packet(testing::ipv4_udp_frame(0x0A000001, 0x0A000002));
    set_anno_flow_hash(m, static_cast<uint32_t>(f) * 2654435761U + 1);
    anno(m).user[0] = seq[static_cast<size_t>(f)]++;
    out.push_back(m);
  }
  return out;
}

void inject(Pipeline& p, const std::vector<Packet*>& pkts, size_t from, size_t n) {
  PacketBatch b;
  for (size_t i = from; i < from + n; ++i) b.push(pkts[i]);
  p.inject(b);
}

// Per flow, the sequence numbers arrive 0, 1, 2, ... at one worker only.
void expect_flows_in_order(const std::vector<CollectingSink>& sinks, size_t total) {
  std::map<uint32_t, uint64_t> next;
  std::map<uint32_t, size_t> where;
  size_t seen = 0;
  for (size_t w = 0; w < sinks.size(); ++w) {
    for (const auto& [flow, seq] : sinks[w].got) {
      EXPECT_EQ(seq, next[flow]++) << "flow " << flow << " out of order at worker " << w;
      auto [it, fresh] = where.emplace(flow, w);
      EXPECT_EQ(it->second, w) << "flow " << flow << " left by two workers";
      ++seen;
    }
  }
  EXPECT_EQ(seen, total);
}

TEST(StageRings, APipelinedCutHandsEveryPacketOnInOrder) {
  Staged s("FromInput -> a :: NoOp -> b :: Counter -> ToOutput;", "cut=b,cores=1+1", 2);
  std::vector<Packet*> pkts = flow_packets(200, 7);
  inject(*s.pipes[0], pkts, 0, 64);
  inject(*s.pipes[0], pkts, 64, 136);
  // Nothing left stage 0; the ring holds it all.
  EXPECT_TRUE(s.sinks[0].got.empty());
  EXPECT_EQ(s.pipes[1]->held(), 200u);
  EXPECT_EQ(s.pipes[0]->held(), 0u);  // the producer side polls nothing
  for (uint64_t now = 1; s.pipes[1]->held() > 0; ++now) s.pipes[1]->poll_deferred(now);
  ASSERT_EQ(s.sinks[1].got.size(), 200u);
  expect_flows_in_order(s.sinks, 200);
  ASSERT_EQ(s.links->rings().size(), 1u);
  const StageRing& r = *s.links->rings()[0];
  EXPECT_EQ(r.enqueued.get(), 200u);
  EXPECT_EQ(r.dequeued.get(), 200u);
  EXPECT_GT(r.dequeue_cycles.get(), 0u);
  EXPECT_EQ(r.back_pressure.get(), 0u);
  EXPECT_EQ(r.max_occupancy.get(), 200u);
  EXPECT_EQ(testing::counter(s.pipes[1]->element(index_of(s.config, "b")), "count"), 200u);
  EXPECT_EQ(testing::counter(s.pipes[0]->element(index_of(s.config, "b")), "count"), 0u);
}

TEST(StageRings, AHybridStageSpreadsFlowsByHashAndKeepsEachInOrder) {
  Staged s("FromInput -> a :: NoOp -> b :: NoOp -> ToOutput;", "cut=b,cores=1+2", 3);
  constexpr int kPackets = 600, kFlows = 50;
  std::vector<Packet*> pkts = flow_packets(kPackets, kFlows);
  for (size_t i = 0; i < pkts.size(); i += 60) inject(*s.pipes[0], pkts, i, 60);
  EXPECT_EQ(s.pipes[1]->held() + s.pipes[2]->held(), static_cast<uint64_t>(kPackets));
  uint64_t now = 1;
  while (s.pipes[1]->held() + s.pipes[2]->held() > 0) {
    s.pipes[1]->poll_deferred(now);
    s.pipes[2]->poll_deferred(now++);
  }
  EXPECT_FALSE(s.sinks[1].got.empty());
  EXPECT_FALSE(s.sinks[2].got.empty());
  expect_flows_in_order(s.sinks, kPackets);
  ASSERT_EQ(s.links->rings().size(), 2u);
  EXPECT_EQ(s.links->rings()[0]->producer, 0);
  EXPECT_EQ(s.links->rings()[0]->consumer, 1);
  EXPECT_EQ(s.links->rings()[1]->consumer, 2);
}

TEST(StageRings, AFullRingHoldsTheProducerUntilTheConsumerTakesNothingIsLost) {
  constexpr unsigned kSmallRing = 64;
  Staged s("FromInput -> a :: NoOp -> b :: NoOp -> ToOutput;", "cut=b,cores=1+1", 2, kSmallRing);
  constexpr int kPackets = 2000;
  std::vector<Packet*> pkts = flow_packets(kPackets, 3);
  std::atomic<bool> produced{false};
  std::thread consumer([&] {
    uint64_t now = 1;
    while (!produced.load() || s.pipes[1]->held() > 0) s.pipes[1]->poll_deferred(now++);
  });
  for (size_t i = 0; i < pkts.size(); i += 200) inject(*s.pipes[0], pkts, i, 200);
  produced.store(true);
  consumer.join();
  expect_flows_in_order(s.sinks, kPackets);
  const StageRing& r = *s.links->rings()[0];
  EXPECT_GT(r.back_pressure.get(), 0u);  // 200 packets never fit a ring of 63
  EXPECT_LE(r.max_occupancy.get(), r.capacity);
  EXPECT_EQ(r.enqueued.get(), static_cast<uint64_t>(kPackets));
  EXPECT_EQ(r.dequeued.get(), static_cast<uint64_t>(kPackets));
}

TEST(StageRings, AConsumerHandsOnAFewBatchesPerLoopSoTheWorkerStillTransmits) {
  Staged s("FromInput -> b :: NoOp -> ToOutput;", "cut=b,cores=1+1", 2);
  std::vector<Packet*> pkts = flow_packets(1000, 5);
  for (size_t i = 0; i < pkts.size(); i += 100) inject(*s.pipes[0], pkts, i, 100);
  s.pipes[1]->poll_deferred(42);
  EXPECT_EQ(s.sinks[1].got.size(), size_t{Pipeliner::kBatchesPerPoll} * kDefaultBatch);
  s.pipes[1]->poll_deferred(42);  // the same loop: nothing more
  EXPECT_EQ(s.sinks[1].got.size(), size_t{Pipeliner::kBatchesPerPoll} * kDefaultBatch);
  for (uint64_t now = 43; s.pipes[1]->held() > 0; ++now) s.pipes[1]->poll_deferred(now);
  expect_flows_in_order(s.sinks, 1000);
}

TEST(Pipeliner, WithoutAPlacementItPassesPacketsThrough) {
  CollectingSink sink;
  SharedStorage shared;
  PipelineConfig c = parse("FromInput -> p :: Pipeliner -> ToOutput;");
  InitContext ctx;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = testing::test_pool();
  Result<std::unique_ptr<Pipeline>> pipe = Pipeline::build(c, ctx);
  ASSERT_TRUE(pipe.ok()) << pipe.error();
  std::vector<Packet*> pkts = flow_packets(10, 2);
  inject(*pipe.value(), pkts, 0, 10);
  EXPECT_EQ(sink.got.size(), 10u);
  EXPECT_EQ(pipe.value()->held(), 0u);
}

TEST(Pipeliner, FlowHashWithoutAnnotationComesFromTheHeaders) {
  auto frame = [](uint32_t src, uint16_t id) {
    std::vector<uint8_t> f = testing::ipv4_udp_frame(src, 0x0A000002);
    f[18] = static_cast<uint8_t>(id >> 8);  // IP identification differs packet to packet
    f[19] = static_cast<uint8_t>(id);
    return f;
  };
  Packet* a = testing::make_packet(frame(0x0A000001, 1));
  Packet* b = testing::make_packet(frame(0x0A000001, 2));
  Packet* c = testing::make_packet(frame(0x0A000003, 1));
  for (Packet* m : {a, b, c}) set_anno_flow_hash(m, 0);
  EXPECT_EQ(flow_hash(a), flow_hash(b));
  EXPECT_NE(flow_hash(a), flow_hash(c));
  // Without its Ethernet header the same packet hashes alike.
  Packet* stripped = testing::make_packet(frame(0x0A000001, 3));
  set_anno_flow_hash(stripped, 0);
  rte_pktmbuf_adj(stripped, 14);
  EXPECT_EQ(flow_hash(stripped), flow_hash(a));
  set_anno_flow_hash(c, 77);
  EXPECT_EQ(flow_hash(c), 77u);
  for (Packet* m : {a, b, c, stripped}) rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace fulcrum

namespace fulcrum {
namespace {

TEST(StageRun, StagesStopInOrderOnceEveryWorkerBeforeThemHasFinished) {
  PipelineConfig c = parse(kChain);
  SharedStorage shared;
  Result<std::unique_ptr<StageRun>> made =
      StageRun::create(c, placement("cut=b,cut=c,cores=2+1+1"), 4, shared);
  ASSERT_TRUE(made.ok()) << made.error();
  StageRun& run = *made.value();
  ASSERT_TRUE(run.pipelined());
  EXPECT_EQ(run.receivers(), (std::vector<int>{0, 1}));
  std::atomic<bool> run_stop{false};
  EXPECT_EQ(run.stop_flag(0, run_stop), &run_stop);
  EXPECT_EQ(run.stop_flag(1, run_stop), &run_stop);
  const std::atomic<bool>* s1 = run.stop_flag(2, run_stop);
  const std::atomic<bool>* s2 = run.stop_flag(3, run_stop);
  ASSERT_NE(s1, &run_stop);
  ASSERT_NE(s1, s2);
  std::vector<bool> finished(4, false);
  auto done = [&](size_t w) { return static_cast<bool>(finished[w]); };
  run.advance(done);
  EXPECT_FALSE(s1->load() || s2->load());
  finished[0] = true;  // one of stage 0's two workers
  run.advance(done);
  EXPECT_FALSE(s1->load() || s2->load());
  finished[1] = true;
  run.advance(done);
  EXPECT_TRUE(s1->load());
  EXPECT_FALSE(s2->load());
  finished[2] = true;
  run.advance(done);
  EXPECT_TRUE(s2->load());
  // The rings are in the shared storage, where the Pipeliner replicas find them.
  const auto links = shared.find<StageLinks>(StageLinks::kSharedKey);
  ASSERT_NE(links, nullptr);
  EXPECT_EQ(links->rings().size(), 2u + 1u);  // 2 producers x 1 consumer, then 1 x 1
}

TEST(StageRun, ACloneRunReceivesOnEveryWorkerAndMakesNoRings) {
  PipelineConfig c = parse(kChain);
  SharedStorage shared;
  Result<std::unique_ptr<StageRun>> made = StageRun::create(c, Placement{}, 3, shared);
  ASSERT_TRUE(made.ok()) << made.error();
  EXPECT_FALSE(made.value()->pipelined());
  EXPECT_EQ(made.value()->receivers(), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(shared.find<StageLinks>(StageLinks::kSharedKey), nullptr);
  RunReport r;
  r.per_worker.resize(3);
  r.per_worker[1].rx_packets = 5;
  made.value()->report(Placement{}, r);
  EXPECT_EQ(r.placement, "clone");
  EXPECT_TRUE(r.rings.empty());
  EXPECT_EQ(r.per_worker[1].stage_packets, 5u);
}

}  // namespace
}  // namespace fulcrum
