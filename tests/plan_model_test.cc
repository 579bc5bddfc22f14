// The performance models of src/plan/ on synthetic inputs whose optimum is computed by hand:
// paper 003's batch/prefetch model (batch_model.hh) and paper 002's placement model
// (placement_model.hh).
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "plan/batch_model.hh"
#include "plan/lookup_probe.hh"
#include "plan/placement_model.hh"
#include "plan/planner.hh"

namespace fulcrum::plan {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * kKiB;

// Caches of 4 KiB at every level and a 16 KiB working set: a quarter of the accesses hit L1,
// three quarters go to memory. Latencies: L1 4, "L2" 104 (what an evicted line costs), DRAM
// 404; misses overlap 100 deep (the issue bound stays out of the way).
MachineInfo tiny_machine() {
  MachineInfo m;
  m.cpus = 2;
  m.tsc_hz = 1e9;
  m.line_bytes = 64;
  m.l1d_bytes = 4 * kKiB;
  m.l2_bytes = 4 * kKiB;
  m.llc_bytes = 4 * kKiB;
  return m;
}

MemoryLatency tiny_latency() {
  MemoryLatency l;
  l.l1_cycles = 4;
  l.l2_cycles = 104;
  l.llc_cycles = 104;
  l.dram_cycles = 404;
  l.parallel_misses = 100;
  return l;
}

LookupProfile memory_bound_lookup() {
  LookupProfile e;
  e.compute_cycles = 10;
  e.group_cycles = 40;
  e.call_cycles = 0;
  e.levels = 1;
  e.lines_per_level = 1;
  e.working_set_bytes = 16 * kKiB;
  e.state_bytes_per_packet = 0;
  return e;
}

TEST(BatchModel, AccessCyclesWeighTheLevelsByTheirShareOfTheWorkingSet) {
  // 0.25 x 4 + 0.75 x 404 = 304.
  EXPECT_DOUBLE_EQ(access_cycles(tiny_machine(), tiny_latency(), 16 * kKiB), 304);
  const LevelShares s = level_shares(tiny_machine(), 16 * kKiB);
  EXPECT_DOUBLE_EQ(s.l1, 0.25);
  EXPECT_DOUBLE_EQ(s.dram, 0.75);
  // A working set that fits L1 is all L1.
  EXPECT_DOUBLE_EQ(access_cycles(tiny_machine(), tiny_latency(), 1 * kKiB), 4);
}

TEST(BatchModel, PredictionsMatchTheHandComputedTerms) {
  // Exposed latency L = 304 - 4 = 300. Group 16: stall (300 - 16 x 10) / 16 = 8.75, per-group
  // overhead 40 / 16 = 2.5, no pollution (2 x 16 lines = 2 KiB fit L1): 10 + 8.75 + 2.5.
  const BatchPoint p = predict_batch(tiny_machine(), tiny_latency(), memory_bound_lookup(), 64, 16);
  EXPECT_DOUBLE_EQ(p.stall, 8.75);
  EXPECT_DOUBLE_EQ(p.overhead, 2.5);
  EXPECT_DOUBLE_EQ(p.pollution, 0);
  EXPECT_DOUBLE_EQ(p.cycles_per_packet, 21.25);
  // Group 64: latency hidden (640 > 300), but 2 x 64 lines = 8 KiB in flight: half of them are
  // evicted and come back from L2 (100 more cycles each): 10 + 0 + 40/64 + 50.
  const BatchPoint q = predict_batch(tiny_machine(), tiny_latency(), memory_bound_lookup(), 64, 64);
  EXPECT_DOUBLE_EQ(q.stall, 0);
  EXPECT_DOUBLE_EQ(q.pollution, 50);
  EXPECT_DOUBLE_EQ(q.cycles_per_packet, 10 + 40.0 / 64 + 50);
}

TEST(BatchModel, TheMemoryBoundOptimumIsTheSmallestGroupThatHidesTheLatencyAndFitsL1) {
  // Group 32: 320 cycles of work hide the 300 of latency, and 2 x 32 lines = 4 KiB just fit:
  // 10 + 40/32 = 11.25, below every other group (by hand: 1 -> 340, 16 -> 21.25, 64 -> 60.6).
  const BatchPoint best =
      choose_batch(tiny_machine(), tiny_latency(), memory_bound_lookup(), {64}, group_grid());
  EXPECT_EQ(best.group, 32u);
  EXPECT_DOUBLE_EQ(best.cycles_per_packet, 11.25);
}

TEST(BatchModel, ACacheResidentTableWantsNoPrefetchDepthOnlyFewerGroupOverheads) {
  LookupProfile e = memory_bound_lookup();
  e.working_set_bytes = 1 * kKiB;  // all in L1: no stall at any group
  const BatchPoint p1 = predict_batch(tiny_machine(), tiny_latency(), e, 64, 1);
  EXPECT_DOUBLE_EQ(p1.stall, 0);
  EXPECT_DOUBLE_EQ(p1.cycles_per_packet, 10 + 40);
}

TEST(BatchModel, PerCallOverheadFavoursLargerBatchesUntilTheirStateOverflowsL1) {
  LookupProfile e = memory_bound_lookup();
  e.call_cycles = 640;
  e.state_bytes_per_packet = 16;
  // Group 16 keeps 2 KiB in flight; batches up to 128 add at most 2 KiB of state: no pollution.
  // 640/B falls with B; at 256 the state (4 KiB) pushes 6 KiB through 4 KiB of L1.
  const BatchPoint b128 = predict_batch(tiny_machine(), tiny_latency(), e, 128, 16);
  const BatchPoint b256 = predict_batch(tiny_machine(), tiny_latency(), e, 256, 16);
  const BatchPoint b32 = predict_batch(tiny_machine(), tiny_latency(), e, 32, 16);
  EXPECT_DOUBLE_EQ(b128.pollution, 0);
  EXPECT_GT(b256.pollution, 0);
  EXPECT_LT(b128.cycles_per_packet, b32.cycles_per_packet);
  EXPECT_LT(b128.cycles_per_packet, b256.cycles_per_packet);
  EXPECT_EQ(choose_batch(tiny_machine(), tiny_latency(), e, {32, 128, 256}, {16}).batch, 128u);
}

TEST(BatchModel, AMeasuredHotCostReplacesComputeAndOverheads) {
  LookupProfile e = memory_bound_lookup();
  e.call_cycles = 128;
  // Batch 64 (row 3), group 16 (column 4): 22 cycles per lookup with the data in L1, the call's
  // 2 per lookup in it. Work under the misses: 16 x 20 = 320 > 300: no stall.
  e.hot[3][4] = 22;
  const BatchPoint p = predict_batch(tiny_machine(), tiny_latency(), e, 64, 16);
  EXPECT_DOUBLE_EQ(p.compute, 22);
  EXPECT_DOUBLE_EQ(p.overhead, 0);
  EXPECT_DOUBLE_EQ(p.stall, 0);
  EXPECT_DOUBLE_EQ(p.cycles_per_packet, 22);
  // Off the grid (batch 100), or not measured (group 8): the analytic terms.
  EXPECT_DOUBLE_EQ(predict_batch(tiny_machine(), tiny_latency(), e, 64, 8).overhead, 5 + 2);
  EXPECT_DOUBLE_EQ(predict_batch(tiny_machine(), tiny_latency(), e, 100, 16).compute, 10);
}

TEST(BatchModel, GroupsAboveTheBatchAreNotCandidates) {
  const BatchPoint best =
      choose_batch(tiny_machine(), tiny_latency(), memory_bound_lookup(), {8}, group_grid());
  EXPECT_EQ(best.batch, 8u);
  EXPECT_LE(best.group, 8u);
}

// tiny_latency() with group reads measured in memory: cycles per line in groups of 1..64, a
// group ahead falling to its least at 32 (more lines in flight than the memory serves), within
// the group twice as dear.
MemoryLatency grouped_latency() {
  MemoryLatency l = tiny_latency();
  l.group_ahead_line_cycles = {40, 30, 20, 12, 8, 6, 7};
  l.group_within_line_cycles = {80, 60, 40, 24, 16, 12, 14};
  return l;
}

TEST(BatchModel, MeasuredGroupReadsReplaceTheLatencyAndOverlapTerms) {
  // The working set pays (304 - 4) / (404 - 4) = 0.75 of a memory access. Batch 64, group 16:
  // three groups of four are prefetched ahead (8 a line), the first within its group (16):
  // 0.75 x (0.25 x 16 + 0.75 x 8) = 7.5, added to the lookup's own work (10 + 40/16).
  const BatchPoint p =
      predict_batch(tiny_machine(), grouped_latency(), memory_bound_lookup(), 64, 16);
  EXPECT_DOUBLE_EQ(p.memory, 7.5);
  EXPECT_DOUBLE_EQ(p.stall, 7.5);
  EXPECT_DOUBLE_EQ(p.cycles_per_packet, 10 + 2.5 + 7.5);
  // Without them (an older calibration) the latency model stands: stall 8.75, memory unset.
  const BatchPoint q = predict_batch(tiny_machine(), tiny_latency(), memory_bound_lookup(), 64, 16);
  EXPECT_DOUBLE_EQ(q.stall, 8.75);
  EXPECT_DOUBLE_EQ(q.memory, 0);
}

TEST(BatchModel, TheGroupReadsPickTheGroupWhereTheMemoryServesLinesFastest) {
  LookupProfile e = memory_bound_lookup();
  e.group_cycles = 0;
  e.working_set_bytes = 64 * kMiB;  // beyond every cache: a whole memory access each
  MachineInfo m = tiny_machine();
  m.l1d_bytes = 1 * kMiB;  // no pollution at any point of the grid; 1/64 of the accesses hit it
  const double scale = 63.0 / 64;
  // Batch 256, group 32: 0.125 x 12 + 0.875 x 6 = 6.75 a line, the least (group 64: 0.25 x 14
  // + 0.75 x 7 = 8.75); at batch 32 every group of 32 is the call's first: 12.
  const BatchPoint best = choose_batch(m, grouped_latency(), e, batch_grid(), group_grid());
  EXPECT_EQ(best.batch, 256u);
  EXPECT_EQ(best.group, 32u);
  EXPECT_DOUBLE_EQ(best.memory, scale * 6.75);
  EXPECT_DOUBLE_EQ(predict_batch(m, grouped_latency(), e, 32, 32).memory, scale * 12);
  // The same table in L1: no memory term, and the smallest batch and group tie at the work.
  e.working_set_bytes = 1 * kKiB;
  const BatchPoint hot = choose_batch(m, grouped_latency(), e, batch_grid(), group_grid());
  EXPECT_DOUBLE_EQ(hot.memory, 0);
  EXPECT_DOUBLE_EQ(hot.cycles_per_packet, 10);
  EXPECT_EQ(hot.batch, 8u);
  EXPECT_EQ(hot.group, 1u);
}

TEST(BatchModel, LevelsPrefetchedWithinTheirGroupPayTheWithinReads) {
  LookupProfile e = memory_bound_lookup();
  e.working_set_bytes = 64 * kMiB;
  e.levels = 2;
  e.within_group_levels = 1;  // one level a group ahead, one within (a second pass)
  const double scale = 1 - 4.0 * kKiB / (64 * kMiB);  // the share of L1 hits left out
  // Batch 256, group 64: ahead 0.25 x 14 + 0.75 x 7 = 8.75, within 14.
  EXPECT_DOUBLE_EQ(predict_batch(tiny_machine(), grouped_latency(), e, 256, 64).memory,
                   scale * 22.75);
  e.within_group_levels = 2;  // a walk: both levels within (the IPv6 trie)
  EXPECT_DOUBLE_EQ(predict_batch(tiny_machine(), grouped_latency(), e, 256, 64).memory, scale * 28);
  e.within_group_levels = 5;  // no more than the levels
  EXPECT_DOUBLE_EQ(predict_batch(tiny_machine(), grouped_latency(), e, 256, 64).memory, scale * 28);
}

TEST(LookupProbe, DrawsComeFromTheFirstKeysThroughACursorThatWraps) {
  std::vector<uint64_t> keys(1000);
  for (size_t i = 0; i < keys.size(); ++i) keys[i] = i;
  ProbeDraws<uint64_t> draws(keys);
  std::set<uint64_t> seen;
  const uint64_t* first = draws.next(8);
  const uint64_t* second = draws.next(8);
  EXPECT_EQ(second, first + 8);  // consecutive calls read consecutive draws
  EXPECT_FALSE(std::equal(first, first + 8, second));
  for (size_t i = 0; i < ProbeDraws<uint64_t>::kDraws; ++i) seen.insert(first[i]);
  EXPECT_LT(*seen.rbegin(), ProbeDraws<uint64_t>::kDistinct);  // only the first 256 keys
  EXPECT_GT(seen.size(), 250u);                                // nearly all of them
  // 2048 draws: the 257th call of 8 starts again at the first.
  for (size_t i = 2; i < ProbeDraws<uint64_t>::kDraws / 8; ++i) draws.next(8);
  EXPECT_EQ(draws.next(8), first);
  // A call that would run past the end starts again at the first draw.
  draws.next(2040);
  EXPECT_EQ(draws.next(16), first);
}

// A server with 1 MiB private L2s and a 32 MiB shared LLC; an LLC hit costs 50 cycles, memory 300.
ServerProfile server() {
  ServerProfile s;
  s.machine.cpus = 2;
  s.machine.tsc_hz = 1e9;
  s.machine.l1d_bytes = 32 * kKiB;
  s.machine.l2_bytes = 1 * kMiB;
  s.machine.llc_bytes = 32 * kMiB;
  s.memory.l1_cycles = 4;
  s.memory.l2_cycles = 14;
  s.memory.llc_cycles = 50;
  s.memory.dram_cycles = 300;
  s.ring.cross_core = true;
  s.ring.enqueue_cycles_per_packet = 20;
  s.ring.dequeue_cycles_per_packet = 30;
  s.batch = 64;
  return s;
}

ChainElement element(const std::string& name, double cycles, size_t bytes, double accesses,
                     bool per_worker = false) {
  ChainElement e;
  e.name = name;
  e.class_name = "Synthetic";
  e.cycles_per_packet = cycles;
  e.memory.working_set_bytes = bytes;
  e.memory.accesses_per_packet = accesses;
  e.memory.per_worker = per_worker;
  return e;
}

std::vector<bool> all_cuts(size_t n) {
  std::vector<bool> ok(n, true);
  ok[0] = false;
  return ok;
}

TEST(PlacementModel, ContentionFollowsPaper002sMissProbabilityAtBothLevels) {
  // 1.8 MiB on one core: pi_L2 = 1 - 1/1.8; all under the LLC: pi_LLC = 0.
  const double per_access = contention_per_access(server(), 1.8 * kMiB, 1.8 * kMiB);
  EXPECT_NEAR(per_access, (1 - 1 / 1.8) * 50, 1e-9);
  // 64 MiB everywhere: pi_L2 = 1 - 1/64, pi_LLC = 1/2: (pi_L2 - pi_LLC) x 50 + pi_LLC x 300.
  const double big = contention_per_access(server(), 64.0 * kMiB, 64.0 * kMiB);
  EXPECT_NEAR(big, (1 - 1.0 / 64 - 0.5) * 50 + 0.5 * 300, 1e-9);
  EXPECT_DOUBLE_EQ(contention_per_access(server(), 0.5 * kMiB, 0.5 * kMiB), 0);
}

TEST(PlacementModel, ACutBetweenTwoTablesThatOnlyFitL2AloneBeatsCloning) {
  // Each table fits a private L2 alone, both together do not: cloned, every core misses L2 on
  // 43 % of 40 accesses (862 cycles); cut at B, each stage keeps its table in L2 and pays a
  // hand-off: stage 0 100 + 20, stage 1 100 + 30.
  const std::vector<ChainElement> chain = {element("A", 100, 900 * kKiB, 20),
                                           element("B", 100, 900 * kKiB, 20)};
  const std::vector<PlacementPrediction> all = enumerate(server(), chain, all_cuts(2), 2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(to_string(all.front().placement), "cut=B,cores=1+1");
  EXPECT_EQ(all.front().kind, "pipeline");
  EXPECT_NEAR(all.front().pps, 1e9 / 130, 1e-6);
  EXPECT_EQ(all.front().bottleneck, 1u);
  const PlacementPrediction& clone = all.back();
  EXPECT_TRUE(clone.placement.cloned());
  const double contention = 40 * (1 - 1024.0 / 1800) * 50;
  EXPECT_NEAR(clone.pps, 2 * 1e9 / (200 + contention), 1e-6);
}

TEST(PlacementModel, SmallTablesCloneBecauseHandOffsOnlyAddCycles) {
  const std::vector<ChainElement> chain = {element("A", 100, 64 * kKiB, 20),
                                           element("B", 100, 64 * kKiB, 20)};
  const std::vector<PlacementPrediction> all = enumerate(server(), chain, all_cuts(2), 2);
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all.front().placement.cloned());
  EXPECT_NEAR(all.front().pps, 2e9 / 200, 1e-6);
  EXPECT_EQ(to_string(all.front().placement), "clone");
}

TEST(PlacementModel, ImbalancedStagesLoseToCloning) {
  // Paper 002 §3.1, pipeline imbalance: stage 0 does 99 % of the work.
  const std::vector<ChainElement> chain = {element("A", 990, 900 * kKiB, 20),
                                           element("B", 10, 900 * kKiB, 20)};
  const std::vector<PlacementPrediction> all = enumerate(server(), chain, all_cuts(2), 2);
  EXPECT_TRUE(all.front().placement.cloned());
}

TEST(PlacementModel, HybridsGiveTheSpareCoresToTheBottleneckStage) {
  // Three tables that each fit L2 alone; stage work 300 / 100 / 100: with 5 cores the cut at
  // every element gets 3 + 1 + 1 (each stage then near 1e9 / 130 per core and above).
  const std::vector<ChainElement> chain = {element("A", 300, 900 * kKiB, 20),
                                           element("B", 100, 900 * kKiB, 20),
                                           element("C", 100, 900 * kKiB, 20)};
  const std::vector<PlacementPrediction> all = enumerate(server(), chain, all_cuts(3), 5);
  // Cut sets: clone, {B}, {C}, {B, C}.
  ASSERT_EQ(all.size(), 4u);
  const auto it = std::find_if(all.begin(), all.end(), [](const PlacementPrediction& p) {
    return p.placement.cuts.size() == 2;
  });
  ASSERT_NE(it, all.end());
  EXPECT_EQ(to_string(it->placement), "cut=B,cut=C,cores=3+1+1");
  EXPECT_EQ(it->kind, "hybrid");
  for (const PlacementPrediction& p : all) {
    unsigned total = 0;
    for (const StagePrediction& s : p.stages) total += s.stage.cores;
    EXPECT_EQ(total, 5u) << to_string(p.placement);
  }
}

TEST(PlacementModel, CutsOnlyWhereAllowedAndNeverMoreStagesThanCores) {
  const std::vector<ChainElement> chain = {element("in", 10, 0, 0), element("A", 100, 0, 0),
                                           element("B", 100, 0, 0), element("out", 10, 0, 0)};
  std::vector<bool> ok = {false, true, true, false};
  const std::vector<PlacementPrediction> two = enumerate(server(), chain, ok, 2);
  EXPECT_EQ(two.size(), 3u);  // clone, cut=A, cut=B
  for (const PlacementPrediction& p : two)
    for (const std::string& c : p.placement.cuts) EXPECT_TRUE(c == "A" || c == "B");
  EXPECT_EQ(enumerate(server(), chain, ok, 3).size(), 4u);  // and cut=A,cut=B
  EXPECT_EQ(enumerate(server(), chain, ok, 1).size(), 1u);  // clone only
}

TEST(PlacementModel, PerWorkerTablesGrowWithTheCoresThatCloneThem) {
  // A per-worker 20 MiB table: on one core it fits the 32 MiB LLC; cloned on 4 cores the copies
  // (80 MiB) do not, so memory misses appear.
  const std::vector<ChainElement> chain = {element("Switch", 100, 20 * kMiB, 3, true)};
  const PlacementPrediction one = predict(server(), chain, {Stage{0, 0, 1}});
  const PlacementPrediction four = predict(server(), chain, {Stage{0, 0, 4}});
  EXPECT_DOUBLE_EQ(one.stages[0].pi_llc, 0);
  EXPECT_NEAR(four.stages[0].pi_llc, 1 - 32.0 / 80, 1e-9);
  EXPECT_GT(four.stages[0].cycles_per_packet, one.stages[0].cycles_per_packet);
}

TEST(PlacementModel, IsolationTakesTheMeasuredContentionOutOnce) {
  const std::vector<ChainElement> measured = {element("A", 1000, 900 * kKiB, 20),
                                              element("B", 1000, 900 * kKiB, 20)};
  const std::vector<ChainElement> iso = isolate(server(), measured, 1);
  const double contention = 20 * (1 - 1024.0 / 1800) * 50;
  EXPECT_NEAR(iso[0].cycles_per_packet, 1000 - contention, 1e-9);
  // Predicting the measured configuration gives the measurement back.
  const PlacementPrediction again = predict(server(), iso, {Stage{0, 1, 1}});
  EXPECT_NEAR(again.stages[0].cycles_per_packet, 2000, 1e-9);
  EXPECT_DOUBLE_EQ(iso[0].exposed, 1);
  // Never below the floor share of what was measured; the contention the model would put on it
  // is scaled to what the measurement leaves (9 of 10 cycles), so the measured configuration is
  // predicted as measured.
  const std::vector<ChainElement> tiny = isolate(server(), {element("A", 10, 64 * kMiB, 50)}, 1);
  EXPECT_DOUBLE_EQ(tiny[0].cycles_per_packet, 1);
  EXPECT_NEAR(predict(server(), tiny, {Stage{0, 0, 1}}).stages[0].cycles_per_packet, 10, 1e-9);
  // In a configuration with less contention (its table alone on an idle socket is the same
  // here, so take a larger LLC), it pays that share of the smaller contention.
  ServerProfile big = server();
  big.machine.llc_bytes = 128 * kMiB;
  const double share = tiny[0].exposed;
  EXPECT_GT(share, 0);
  EXPECT_LT(share, 1);
  EXPECT_NEAR(predict(big, tiny, {Stage{0, 0, 1}}).stages[0].contention,
              share * 50 * contention_per_access(big, 64.0 * kMiB, 64.0 * kMiB), 1e-9);
}

TEST(PlacementModel, TheExplanationNamesTheBottleneckStageAndItsLargestTerm) {
  const std::vector<ChainElement> chain = {element("A", 100, 900 * kKiB, 20),
                                           element("B", 100, 900 * kKiB, 20)};
  const PlacementPrediction clone = predict(server(), chain, {Stage{0, 1, 2}});
  const std::string why = explain(clone, chain);
  EXPECT_NE(why.find("stage 0 (A -> B)"), std::string::npos) << why;
  EXPECT_NE(why.find("cache contention"), std::string::npos) << why;
}

// A pipeline FromInput -> A -> B -> ToOutput with B's output 1 to a Counter C (off the path).
PipelineConfig branched_pipeline() {
  PipelineConfig c;
  c.file = "p.click";
  for (const auto& [name, cls] :
       std::vector<std::pair<std::string, std::string>>{{"in", "FromInput"},
                                                        {"A", "Synthetic"},
                                                        {"B", "Synthetic"},
                                                        {"out", "ToOutput"},
                                                        {"C", "Counter"}})
    c.elements.push_back(ConfigElement{name, cls, {}, {}, false});
  c.connections = {{0, 0, 1, 0, {}}, {1, 0, 2, 0, {}}, {2, 0, 3, 0, {}}, {2, 1, 4, 0, {}}};
  return c;
}

Calibration branched_calibration() {
  Calibration cal;
  cal.machine = server().machine;
  cal.memory = server().memory;
  cal.ring = server().ring;
  cal.pipeline.file = "p.click";
  cal.pipeline.workers = 1;
  cal.pipeline.batch = 64;
  for (const auto& [name, cycles, share] : std::vector<std::tuple<std::string, double, double>>{
           {"in", 0, 1}, {"A", 100, 1}, {"B", 50, 1}, {"out", 20, 0.5}, {"C", 40, 0.5}}) {
    ElementMeasure e;
    e.name = name;
    e.cycles_per_packet = cycles;
    e.packet_share = share;
    cal.pipeline.elements.push_back(e);
  }
  return cal;
}

TEST(Planner, TheChainFollowsOutputZeroAndFoldsBranchesIntoTheirElement) {
  Result<Chain> chain = chain_of(branched_pipeline(), branched_calibration());
  ASSERT_TRUE(chain) << chain.error();
  std::vector<std::string> names;
  for (const ChainElement& e : chain.value().measured) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"in", "A", "B", "out"}));
  // C (40 cycles for half the packets) is folded into B; ToOutput counts half the packets too.
  EXPECT_DOUBLE_EQ(chain.value().measured[2].cycles_per_packet, 50 + 20);
  EXPECT_DOUBLE_EQ(chain.value().measured[3].cycles_per_packet, 10);
  EXPECT_EQ(chain.value().folded, (std::vector<std::string>{"C (into B)"}));
  EXPECT_EQ(chain.value().cut_ok, (std::vector<bool>{false, true, true, false}));
  EXPECT_TRUE(calibration_matches(branched_calibration(), branched_pipeline()));
}

TEST(Planner, EachChainElementReadsWhatItsClassDeclares) {
  // A is a payload scanner (IDSMatch: the whole frame, asking ahead); C, folded into B, a cipher
  // (IPsecAES: the whole frame, each line as it comes): B's stage then reads the whole frame
  // too. The others read headers.
  PipelineConfig config = branched_pipeline();
  config.elements[1].class_name = "IDSMatch";
  Result<Chain> chain = chain_of(config, branched_calibration());
  ASSERT_TRUE(chain) << chain.error();
  const std::vector<ChainElement>& m = chain.value().measured;
  EXPECT_EQ(m[0].reads, PacketReads::kHeaders);
  EXPECT_EQ(m[1].reads, PacketReads::kWholeFrameAhead);
  EXPECT_EQ(m[2].reads, PacketReads::kHeaders);
  EXPECT_EQ(chain.value().isolated[1].reads, PacketReads::kWholeFrameAhead);
  config.elements[4].class_name = "IPsecAES";
  chain = chain_of(config, branched_calibration());
  ASSERT_TRUE(chain) << chain.error();
  EXPECT_EQ(chain.value().measured[2].reads, PacketReads::kWholeFrame);
  EXPECT_EQ(chain.value().measured[3].reads, PacketReads::kHeaders);
  // The cipher reads the annotation line; folded into B, B reads it.
  EXPECT_EQ(chain.value().measured[2].anno, kAnnoReads);
  EXPECT_EQ(chain.value().measured[1].anno, 0);
  // B itself a scanner that asks ahead, C folded into it a cipher: the costlier of the two.
  config.elements[2].class_name = "IDSMatch";
  chain = chain_of(config, branched_calibration());
  ASSERT_TRUE(chain) << chain.error();
  EXPECT_EQ(chain.value().measured[2].reads, PacketReads::kWholeFrame);
}

TEST(Planner, APlanListsEveryPlacementAndScalingPredictions) {
  Result<Chain> chain = chain_of(branched_pipeline(), branched_calibration());
  ASSERT_TRUE(chain) << chain.error();
  const Plan p = make_plan(branched_calibration(), chain.value(), 2);
  ASSERT_EQ(p.placements.size(), 3u);  // clone, cut=A, cut=B
  EXPECT_EQ(p.scaling.size(), 7u);
  EXPECT_EQ(p.scaling.back().cores, 64u);
  const std::string text = plan_text(p);
  for (const char* want : {"clone", "cut=A,cores=1+1", "cut=B,cores=1+1", "PREDICTIONS",
                           "bottleneck", "folded: C (into B)"})
    EXPECT_NE(text.find(want), std::string::npos) << want;
}

TEST(Planner, ACalibrationWithoutTheElementIsAnError) {
  Calibration cal = branched_calibration();
  cal.pipeline.elements.erase(cal.pipeline.elements.begin() + 1);  // A
  Result<Chain> chain = chain_of(branched_pipeline(), cal);
  ASSERT_FALSE(chain);
  EXPECT_NE(chain.error().find("no measurement of element A"), std::string::npos);
  EXPECT_FALSE(calibration_matches(cal, branched_pipeline()));
}

}  // namespace
}  // namespace fulcrum::plan
