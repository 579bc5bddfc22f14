// The runtime hand-off in paper 002's model (src/plan/measure_handoff.hh, placement_model.hh) and
// the working set bounded by the keys the traffic touched (planner.hh bound_by_keys), on
// synthetic run reports and profiles whose answers are computed by hand.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "plan/measure_handoff.hh"
#include "plan/placement_model.hh"
#include "plan/planner.hh"

namespace fulcrum::plan {
namespace {

constexpr double kHz = 1e9;

ElementReport element(const std::string& name, const std::string& cls, uint64_t cycles) {
  ElementReport e;
  e.name = name;
  e.class_name = cls;
  e.cycles = cycles;
  return e;
}

WorkerReport worker(unsigned stage, uint64_t packets, double cpu_s) {
  WorkerReport w;
  w.stage = stage;
  w.stage_packets = packets;
  w.cpu_s = cpu_s;
  return w;
}

// One second, 1M packets at 1 GHz: 1000 cycles per packet of wall-clock time per worker.
RunReport report(bool cut) {
  RunReport r;
  r.duration_s = 1;
  r.tsc_hz = kHz;
  r.batch = 64;
  r.packets_in = 1000000;
  if (!cut) {
    r.per_worker = {worker(0, r.packets_in, 0.5)};  // half the run on a CPU: 500 cycles/packet
    r.elements = {element("in", "FromInput", 0), element("check", "CheckIPHeader", 100000000),
                  element("ttl", "DecIPTTL", 60000000), element("out", "ToOutput", 80000000)};
    return r;
  }
  r.per_worker = {worker(0, r.packets_in, 1.0), worker(1, r.packets_in, 0.8)};
  r.elements = {element("in", "FromInput", 0), element("check", "CheckIPHeader", 200000000),
                element("ttl", "DecIPTTL", 100000000), element("out", "ToOutput", 100000000),
                element("check/ring", "Pipeliner", 30000000)};
  RingReport ring;
  ring.enqueued = r.packets_in;
  ring.back_pressure = r.packets_in / 64 / 4;  // a quarter of the bursts met a full ring
  r.rings = {ring};
  return r;
}

TEST(Handoff, ARunIsReducedToCpuCyclesPerPacketPerStage) {
  Result<HandoffRun> clone = reduce_handoff_run(report(false), false);
  ASSERT_TRUE(clone) << clone.error();
  EXPECT_DOUBLE_EQ(clone.value().stage_cycles[0], 500);
  // Elements' wall-clock cycles scaled by the worker's CPU share (0.5): 50 + 30 + 40.
  EXPECT_DOUBLE_EQ(clone.value().consumer_elements, 120);
  EXPECT_DOUBLE_EQ(clone.value().producer_elements, 0);
  EXPECT_FALSE(clone.value().consumer_bound);

  Result<HandoffRun> cut = reduce_handoff_run(report(true), true);
  ASSERT_TRUE(cut) << cut.error();
  EXPECT_DOUBLE_EQ(cut.value().stage_cycles[0], 1000);
  EXPECT_DOUBLE_EQ(cut.value().stage_cycles[1], 800);
  EXPECT_DOUBLE_EQ(cut.value().consumer_elements, (200 + 100 + 100) * 0.8);
  EXPECT_DOUBLE_EQ(cut.value().pipeliner, 30);
  EXPECT_DOUBLE_EQ(cut.value().producer_elements, 30);
  EXPECT_FALSE(cut.value().consumer_bound);  // a quarter < half

  RunReport full = report(true);
  full.rings[0].back_pressure = full.packets_in / 64;
  EXPECT_TRUE(reduce_handoff_run(full, true).value().consumer_bound);

  RunReport none = report(true);
  none.packets_in = 0;
  EXPECT_FALSE(reduce_handoff_run(none, true));
}

HandoffRun run_of(double stage0, double stage1, double producer, double consumer, double pipeliner,
                  bool bound) {
  HandoffRun r;
  r.stage_cycles[0] = stage0;
  r.stage_cycles[1] = stage1;
  r.producer_elements = producer;
  r.consumer_elements = consumer;
  r.pipeliner = pipeliner;
  r.consumer_bound = bound;
  return r;
}

TEST(Handoff, EachSideIsWhatTheCutAddsToTheClonedRun) {
  // Cloned: 80 cycles (the median run), 50 of them in the consumer's elements, so 30 of RX/TX
  // and the loop.
  const std::vector<HandoffRun> clone = {run_of(95, 0, 0, 60, 0, false),
                                         run_of(80, 0, 0, 50, 0, false),
                                         run_of(70, 0, 0, 45, 0, false)};
  // Cut, the producer the slower stage: its elements (the Pipeliner's 10) and 60 outside them;
  // the consumer's elements 75 (medians of the runs).
  const std::vector<HandoffRun> cut = {run_of(70, 120, 10, 75, 10, false),
                                       run_of(72, 110, 12, 80, 12, false),
                                       run_of(66, 100, 8, 70, 8, false)};
  const HandoffPoint p = handoff_point(64, clone, cut, 13, 14);
  EXPECT_EQ(p.frame_bytes, 64u);
  EXPECT_DOUBLE_EQ(p.clone_cycles_per_packet, 80);
  EXPECT_DOUBLE_EQ(p.clone_io_cycles_per_packet, 30);
  EXPECT_DOUBLE_EQ(p.consumer_elements_clone_cycles, 50);
  EXPECT_DOUBLE_EQ(p.producer_io_cycles_per_packet, 60);
  EXPECT_FALSE(p.consumer_bound);
  // Consumer: (75 - 50) + the ring's dequeue 14. Producer: 60 + the Pipeliner's 10 - 30.
  EXPECT_DOUBLE_EQ(p.consumer_cycles_per_packet, 39);
  EXPECT_DOUBLE_EQ(p.producer_cycles_per_packet, 40);

  // The consumer the slower stage: the Pipeliner waited for room, the ring's enqueue (13)
  // stands in for it.
  const std::vector<HandoffRun> bound = {run_of(300, 110, 250, 75, 250, true)};
  const HandoffPoint q = handoff_point(64, clone, bound, 13, 14);
  EXPECT_TRUE(q.consumer_bound);
  EXPECT_DOUBLE_EQ(q.producer_io_cycles_per_packet, 50);
  EXPECT_DOUBLE_EQ(q.producer_cycles_per_packet, 50 + 13 - 30);
  EXPECT_DOUBLE_EQ(q.consumer_cycles_per_packet, 39);
}

TEST(Handoff, TheConsumersBusyIterationsAndItsTimedDequeuesAreItsSide) {
  // The consumer's busy loop iterations (wall clock, scaled by its CPU share like its
  // elements): 600 cycles per packet at a share of 0.8 = 480.
  RunReport r = report(true);
  r.per_worker[1].busy_cycles = 600000000;
  r.rings[0].dequeue_cycles = 20000000;
  Result<HandoffRun> run = reduce_handoff_run(r, true);
  ASSERT_TRUE(run) << run.error();
  EXPECT_DOUBLE_EQ(run.value().consumer_busy, 480);
  EXPECT_DOUBLE_EQ(run.value().dequeue, 20 * 0.8);

  const std::vector<HandoffRun> clone = {run_of(80, 0, 0, 50, 0, false)};
  // Busy iterations timed: all of them beyond the elements' cloned 50, whatever the dequeue.
  HandoffRun timed = run_of(70, 120, 10, 75, 10, false);
  timed.consumer_busy = 110;
  timed.dequeue = 9;
  EXPECT_DOUBLE_EQ(handoff_point(64, clone, {timed}, 13, 14).consumer_cycles_per_packet, 60);
  // Only the dequeue timed: the elements' extra 25 and the dequeue 9 (not the ring's 14).
  timed.consumer_busy = 0;
  EXPECT_DOUBLE_EQ(handoff_point(64, clone, {timed}, 13, 14).consumer_cycles_per_packet, 34);
}

TEST(Handoff, TwoRingMeasurementsAreOfOneRegimeWithinAFactorOf1Point6) {
  EXPECT_TRUE(same_regime(26, 26));
  EXPECT_TRUE(same_regime(26, 40));
  EXPECT_TRUE(same_regime(40, 26));
  EXPECT_FALSE(same_regime(26, 92));  // this VM's two regimes: 13 + 13 and 47 + 45
  EXPECT_FALSE(same_regime(92, 26));
  EXPECT_FALSE(same_regime(0, 26));  // not measured
}

ServerProfile server_with_handoff() {
  ServerProfile s;
  s.machine.cpus = 4;
  s.machine.tsc_hz = kHz;
  s.machine.l1d_bytes = 32 * 1024;
  s.machine.l2_bytes = 1 << 20;
  s.machine.llc_bytes = 32 << 20;
  s.memory = {4, 14, 50, 300, 8};
  s.ring.enqueue_cycles_per_packet = 13;
  s.ring.dequeue_cycles_per_packet = 14;
  s.io_cycles_per_packet = 30;
  s.batch = 64;
  HandoffPoint small, large;
  small.frame_bytes = 64;
  small.producer_cycles_per_packet = 20;
  small.consumer_cycles_per_packet = 40;
  large.frame_bytes = 512;
  large.producer_cycles_per_packet = 55;
  large.consumer_cycles_per_packet = 110;
  s.handoff.points = {small, large};
  return s;
}

ChainElement chain_element(const std::string& name, double cycles) {
  ChainElement e;
  e.name = name;
  e.cycles_per_packet = cycles;
  return e;
}

TEST(Handoff, TheModelChargesEachCutTheRuntimeHandOffAtThePipelinesFrameSize) {
  ServerProfile s = server_with_handoff();
  s.frame_bytes = 512;
  const std::vector<ChainElement> chain = {chain_element("A", 100), chain_element("B", 100),
                                           chain_element("C", 100)};
  const PlacementPrediction two = predict(s, chain, {Stage{0, 0, 1}, Stage{1, 2, 1}});
  ASSERT_EQ(two.stages.size(), 2u);
  EXPECT_DOUBLE_EQ(two.stages[0].sync, 55);   // producer, first stage, 512 B
  EXPECT_DOUBLE_EQ(two.stages[1].sync, 110);  // consumer, 512 B
  EXPECT_DOUBLE_EQ(two.stages[0].cycles_per_packet, 100 + 55 + 30);
  EXPECT_DOUBLE_EQ(two.stages[1].cycles_per_packet, 200 + 110);
  EXPECT_EQ(two.bottleneck, 1u);
  EXPECT_DOUBLE_EQ(two.pps, kHz / 310);

  // Three stages: the middle one receives (110) and sends with the enqueue alone (13).
  const PlacementPrediction three =
      predict(s, chain, {Stage{0, 0, 1}, Stage{1, 1, 1}, Stage{2, 2, 1}});
  EXPECT_DOUBLE_EQ(three.stages[1].sync, 110 + 13);

  // 64 B frames: the small point; 288 B (5 lines) between them.
  s.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(predict(s, chain, {Stage{0, 0, 1}, Stage{1, 2, 1}}).stages[1].sync, 40);
  s.frame_bytes = 288;
  EXPECT_DOUBLE_EQ(consumer_handoff(s), 40 + 70.0 * 4 / 7);
  EXPECT_DOUBLE_EQ(producer_handoff(s, true), 20 + 35.0 * 4 / 7);

  // No runtime measurement: the ring's costs, as before.
  s.handoff.points.clear();
  const PlacementPrediction ring = predict(s, chain, {Stage{0, 0, 1}, Stage{1, 2, 1}});
  EXPECT_DOUBLE_EQ(ring.stages[0].sync, 13);
  EXPECT_DOUBLE_EQ(ring.stages[1].sync, 14);
}

TEST(Handoff, TransmitFlushesMoveToTheLastStage) {
  // Of the 30 cycles outside elements, 12 flush the transmit buffers: cloned, all 30 on the one
  // stage; cut, 18 stay with RX on the first stage and 12 go to the last, which transmits.
  ServerProfile s = server_with_handoff();
  s.frame_bytes = 64;
  s.tx_cycles_per_packet = 12;
  const std::vector<ChainElement> chain = {chain_element("A", 100), chain_element("B", 100),
                                           chain_element("C", 100)};
  const PlacementPrediction clone = predict(s, chain, {Stage{0, 2, 1}});
  EXPECT_DOUBLE_EQ(clone.stages[0].io, 30);
  const PlacementPrediction two = predict(s, chain, {Stage{0, 0, 1}, Stage{1, 2, 1}});
  EXPECT_DOUBLE_EQ(two.stages[0].io, 18);
  EXPECT_DOUBLE_EQ(two.stages[1].io, 12);
  EXPECT_DOUBLE_EQ(two.stages[1].cycles_per_packet, 200 + 40 + 12);
  const PlacementPrediction three =
      predict(s, chain, {Stage{0, 0, 1}, Stage{1, 1, 1}, Stage{2, 2, 1}});
  EXPECT_DOUBLE_EQ(three.stages[1].io, 0);
  EXPECT_DOUBLE_EQ(three.stages[2].io, 12);
}

TEST(Handoff, PacketsLeavingBySeveralPortsCostTheConsumerWhatTheSpreadReferenceAdds) {
  // The spread reference's consumer paid 52 at 64 B where the one-port reference's paid 40: a
  // pipeline whose packets leave by several ports pays 12 more on every receiving stage, at
  // any frame size; the sending side does not change.
  ServerProfile s = server_with_handoff();
  s.handoff.spread = s.handoff.points[0];
  s.handoff.spread.consumer_cycles_per_packet = 52;
  s.frame_bytes = 512;
  const std::vector<ChainElement> chain = {chain_element("A", 100), chain_element("B", 100)};
  EXPECT_DOUBLE_EQ(predict(s, chain, {Stage{0, 0, 1}, Stage{1, 1, 1}}).stages[1].sync, 110);
  s.spread = true;
  const PlacementPrediction two = predict(s, chain, {Stage{0, 0, 1}, Stage{1, 1, 1}});
  EXPECT_DOUBLE_EQ(two.stages[1].sync, 110 + 12);
  EXPECT_DOUBLE_EQ(two.stages[0].sync, 55);

  // In the other regime (the ring 3.5 times what the points saw) the one-port share follows the
  // ring; the spread's extra 12 stay as measured.
  for (HandoffPoint* p : {&s.handoff.points[0], &s.handoff.points[1], &s.handoff.spread})
    p->ring_cycles = 26;
  RingCost now;
  now.enqueue_cycles_per_packet = 45;
  now.dequeue_cycles_per_packet = 46;
  ServerProfile slow = follow_regime(s, now);
  slow.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(consumer_handoff(slow), 40 * 3.5 + 12);

  // A spread reference that paid less than the one-port one adds nothing; no spread point
  // (an older calibration) neither.
  s.handoff.spread.consumer_cycles_per_packet = 35;
  EXPECT_DOUBLE_EQ(consumer_handoff(s), 110);
  s.handoff.spread = HandoffPoint{};
  EXPECT_DOUBLE_EQ(consumer_handoff(s), 110);
}

TEST(Handoff, TheClonedRunsTransmitFlushesCountWithItsConsumerElements) {
  // 40 cycles a packet of flushes, wall clock, at a CPU share of 0.5: 20.
  RunReport r = report(false);
  r.per_worker[0].tx_flush_cycles = 40000000;
  Result<HandoffRun> run = reduce_handoff_run(r, false);
  ASSERT_TRUE(run) << run.error();
  EXPECT_DOUBLE_EQ(run.value().tx_flush, 20);
  // The model charges a pipeline's own flushes on its last stage, so the consumer's side is what
  // its busy iterations cost beyond the cloned elements and flushes: 110 - (50 + 12).
  HandoffRun clone = run_of(80, 0, 0, 50, 0, false);
  clone.tx_flush = 12;
  HandoffRun cut = run_of(70, 120, 10, 75, 10, false);
  cut.consumer_busy = 110;
  const HandoffPoint p = handoff_point(64, {clone}, {cut}, 13, 14);
  EXPECT_DOUBLE_EQ(p.consumer_elements_clone_cycles, 62);
  EXPECT_DOUBLE_EQ(p.consumer_cycles_per_packet, 48);
  // Without busy iterations: the cut's elements and flushes (75 + 3) less the cloned 62, and
  // the ring's dequeue.
  cut.consumer_busy = 0;
  cut.tx_flush = 3;
  EXPECT_DOUBLE_EQ(handoff_point(64, {clone}, {cut}, 13, 14).consumer_cycles_per_packet,
                   75 + 3 - 62 + 14);
}

// A payload scanner: reads the whole frame, asking ahead; each line at line_cycles().
ChainElement scanner(const std::string& name, double cycles) {
  ChainElement e = chain_element(name, cycles);
  e.reads = PacketReads::kWholeFrameAhead;
  return e;
}

TEST(Handoff, AStageThatReadsTheWholeFramePaysForItsLinesBeyondTheHeader) {
  // 512 B frames: 8 lines, 7 beyond the reference's header line; 10 cycles to read each from
  // the other core, 4 to write each again on the first stage once read.
  ServerProfile s = server_with_handoff();
  s.frame_bytes = 512;
  s.ring.line_read_cycles = 10;
  s.ring.line_rewrite_cycles = 4;
  const std::vector<ChainElement> chain = {chain_element("A", 100), scanner("B", 100),
                                           chain_element("C", 100)};
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 1, 2), 7);
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 2, 2), 0);

  // The whole-frame reader after the cut: 110 + 7 x 10 to receive, 55 + 7 x 4 to send.
  const PlacementPrediction scan = predict(s, chain, {Stage{0, 0, 1}, Stage{1, 2, 1}});
  EXPECT_DOUBLE_EQ(scan.stages[1].sync, 110 + 70);
  EXPECT_DOUBLE_EQ(scan.stages[1].frame_lines, 70);
  EXPECT_DOUBLE_EQ(scan.stages[0].sync, 55 + 28);
  EXPECT_DOUBLE_EQ(scan.stages[0].frame_lines, 28);
  // Before the cut: the stage after it reads the header only, as the reference.
  const PlacementPrediction head = predict(s, chain, {Stage{0, 1, 1}, Stage{2, 2, 1}});
  EXPECT_DOUBLE_EQ(head.stages[1].sync, 110);
  EXPECT_DOUBLE_EQ(head.stages[0].sync, 55);
  // Three stages: the middle one reads the lines; the last reads headers; the first writes the
  // lines again.
  const PlacementPrediction three =
      predict(s, chain, {Stage{0, 0, 1}, Stage{1, 1, 1}, Stage{2, 2, 1}});
  EXPECT_DOUBLE_EQ(three.stages[0].sync, 55 + 28);
  EXPECT_DOUBLE_EQ(three.stages[1].sync, 110 + 70 + 13);
  EXPECT_DOUBLE_EQ(three.stages[2].sync, 110);
  // Cloned: nothing crosses.
  EXPECT_DOUBLE_EQ(predict(s, chain, {Stage{0, 2, 2}}).stages[0].sync, 0);

  // A 100 B frame has 2 lines (1 beyond the header's), a 64 B frame none; an unknown size none.
  s.frame_bytes = 100;
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 1, 2), 1);
  s.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 1, 2), 0);
  s.frame_bytes = 0;
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 1, 2), 0);
}

TEST(Handoff, AStageReadsTheFrameAsItCrossesTheCut) {
  // 64 B frames received; A encapsulates them into 134 B (3 lines, 2 beyond the header's) before
  // the whole-frame reader B. A cut before B hands 134 B frames over, a cut before A 64 B ones.
  ServerProfile s = server_with_handoff();
  s.frame_bytes = 64;
  s.ring.line_read_cycles = 10;
  s.ring.line_rewrite_cycles = 4;
  std::vector<ChainElement> chain = {chain_element("in", 10), chain_element("A", 100),
                                     scanner("B", 100), chain_element("C", 100)};
  chain[2].frame_bytes = 134;
  chain[3].frame_bytes = 134;
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 2, 3), 2);
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 1, 3), 0);
  const PlacementPrediction cut = predict(s, chain, {Stage{0, 1, 1}, Stage{2, 3, 1}});
  EXPECT_DOUBLE_EQ(cut.stages[1].frame_lines, 2 * 10);
  EXPECT_DOUBLE_EQ(cut.stages[0].frame_lines, 2 * 4);
  // Not measured (a file written before): the pipeline's frame.
  chain[2].frame_bytes = 0;
  EXPECT_DOUBLE_EQ(extra_lines_read(s, chain, 2, 3), 0);
}

TEST(Handoff, TheAnnotationLineCostsTheStageThatReadsWhatAnEarlierStageWrote) {
  // W writes the private annotation line (an ESP encapsulation's SA index), R reads it (a
  // cipher): a cut between them reads the line from W's core (10) and has W's stage write it
  // again (4); a cut before W, or after R, moves no annotation line.
  ServerProfile s = server_with_handoff();
  s.ring.line_read_cycles = 10;
  s.ring.line_rewrite_cycles = 4;
  std::vector<ChainElement> chain = {chain_element("in", 10), chain_element("W", 100),
                                     chain_element("R", 100), chain_element("out", 10)};
  chain[1].anno = kAnnoWrites;
  chain[2].anno = kAnnoReads;
  const std::vector<Stage> between = {Stage{0, 1, 1}, Stage{2, 3, 1}};
  EXPECT_TRUE(receives_anno_line(chain, between, 1));
  const PlacementPrediction p = predict(s, chain, between);
  EXPECT_DOUBLE_EQ(p.stages[1].frame_lines, 10);
  EXPECT_DOUBLE_EQ(p.stages[0].frame_lines, 4);
  for (const std::vector<Stage>& none : {std::vector<Stage>{Stage{0, 0, 1}, Stage{1, 3, 1}},
                                         std::vector<Stage>{Stage{0, 2, 1}, Stage{3, 3, 1}}}) {
    EXPECT_FALSE(receives_anno_line(chain, none, 1));
    const PlacementPrediction q = predict(s, chain, none);
    EXPECT_DOUBLE_EQ(q.stages[0].frame_lines + q.stages[1].frame_lines, 0);
  }
  // Three stages, the reader last: the middle stage passes the packets on without touching the
  // line; the last reads it from the first stage's core.
  const PlacementPrediction three =
      predict(s, chain, {Stage{0, 1, 1}, Stage{2, 2, 1}, Stage{3, 3, 1}});
  EXPECT_DOUBLE_EQ(three.stages[0].frame_lines, 4);
  EXPECT_DOUBLE_EQ(three.stages[1].frame_lines, 10);
  EXPECT_DOUBLE_EQ(three.stages[2].frame_lines, 0);
}

TEST(Handoff, AScannerPaysForEachLineACipherWaitsOnceAPacket) {
  // 512 B frames, 7 lines beyond the header: a dependent read costs 10, a line scanned with the
  // lines asked for ahead 1.
  ServerProfile s = server_with_handoff();
  s.frame_bytes = 512;
  s.ring.line_read_cycles = 10;
  s.ring.line_scan_cycles = 1;
  std::vector<ChainElement> chain = {chain_element("A", 100), scanner("B", 100),
                                     chain_element("C", 100)};
  const std::vector<Stage> cut = {Stage{0, 0, 1}, Stage{1, 2, 1}};
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 1), 7);
  // One element of the stage reads each line as it comes (a cipher): a packet's lines are loads
  // that do not wait for each other, one dependent read's wait a packet.
  chain[2].reads = PacketReads::kWholeFrame;
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 1), 10);
  EXPECT_DOUBLE_EQ(predict(s, chain, cut).stages[1].frame_lines, 10);
  // The annotation line too (A wrote it, C reads it): still one wait.
  chain[0].anno = kAnnoWrites;
  chain[2].anno = kAnnoReads;
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 1), 10);
  // The scanner alone with the annotation line: its lines, and the annotation line's wait.
  chain[2].reads = PacketReads::kHeaders;
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 1), 7 + 10);
  // Headers only, no annotation line: nothing.
  chain[2].anno = 0;
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, {Stage{0, 1, 1}, Stage{2, 2, 1}}, 1), 0);
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 0), 0);
}

TEST(Handoff, AScannersLinesCostWhatTheRuntimesScanReferencePaidForThem) {
  // The scan reference's consumer paid 145 at 512 B where the header reference's paid 110: 35
  // for its 7 lines beyond the header, 5 a line, which a scanner's stage pays instead of the
  // plain ring's line scan (1); a cipher's stage still waits once a packet.
  ServerProfile s = server_with_handoff();
  s.frame_bytes = 512;
  s.ring.line_read_cycles = 10;
  s.ring.line_scan_cycles = 1;
  s.handoff.scan = s.handoff.points[1];
  s.handoff.scan.consumer_cycles_per_packet = 145;
  EXPECT_DOUBLE_EQ(handoff_scan_line_cycles(s.handoff, s.ring, 64, 64), 5);
  EXPECT_DOUBLE_EQ(scan_line_cycles(s), 5);
  std::vector<ChainElement> chain = {chain_element("A", 100), scanner("B", 100),
                                     chain_element("C", 100)};
  const std::vector<Stage> cut = {Stage{0, 0, 1}, Stage{1, 2, 1}};
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 1), 7 * 5);
  EXPECT_DOUBLE_EQ(predict(s, chain, cut).stages[1].sync, 110 + 35);
  chain[2].reads = PacketReads::kWholeFrame;
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 1), 10);
  chain[2].reads = PacketReads::kHeaders;

  // Followed into the other regime (the ring 3.5 times the points'; the line read too): the
  // header reference's share follows the ring, the scan's extra 5 a line stays as measured.
  for (HandoffPoint* p : {&s.handoff.points[0], &s.handoff.points[1], &s.handoff.scan}) {
    p->ring_cycles = 26;
    p->line_read_cycles = 10;
  }
  RingCost now;
  now.enqueue_cycles_per_packet = 45;
  now.dequeue_cycles_per_packet = 46;
  now.line_read_cycles = 35;
  now.line_scan_cycles = 1;
  EXPECT_DOUBLE_EQ(scan_line_cycles(follow_regime(s, now)), 5);

  // A scan reference that paid less than the header reference charges nothing; without one (an
  // older calibration) the plain ring's line scan stands in.
  s.handoff.scan.consumer_cycles_per_packet = 100;
  EXPECT_DOUBLE_EQ(scan_line_cycles(s), 0);
  s.handoff.scan = HandoffPoint{};
  EXPECT_DOUBLE_EQ(handoff_scan_line_cycles(s.handoff, s.ring, 64, 64), -1);
  EXPECT_DOUBLE_EQ(scan_line_cycles(s), 1);
  EXPECT_DOUBLE_EQ(received_lines_cycles(s, chain, cut, 1), 7);
}

TEST(Handoff, TheHandOffFollowsTheRegimeOfTheRingMeasuredNow) {
  // Both points measured with the ring at 26 cycles (enqueue + dequeue); the ring now at 91. Of
  // each side, the smallest point's share of the ring follows it (64 B: 3.5 times what was
  // measured); the larger frame's lines stay as measured; the frame's line costs are now's.
  ServerProfile s = server_with_handoff();
  s.handoff.points[0].ring_cycles = 26;
  s.handoff.points[1].ring_cycles = 26;
  RingCost now;
  now.enqueue_cycles_per_packet = 45;
  now.dequeue_cycles_per_packet = 46;
  now.line_read_cycles = 30;
  EXPECT_DOUBLE_EQ(ring_cycles(now), 91);
  const ServerProfile f = follow_regime(s, now);
  EXPECT_DOUBLE_EQ(f.ring_now, 91);
  EXPECT_DOUBLE_EQ(f.ring.line_read_cycles, 30);
  ServerProfile at = f;
  at.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(consumer_handoff(at), 40 * 3.5);
  EXPECT_DOUBLE_EQ(producer_handoff(at, true), 20 * 3.5);
  at.frame_bytes = 512;
  EXPECT_DOUBLE_EQ(consumer_handoff(at), 40 * 3.5 + (110 - 40));
  EXPECT_DOUBLE_EQ(producer_handoff(at, true), 20 * 3.5 + (55 - 20));
  // A later stage's sending side is the ring's enqueue, now's.
  EXPECT_DOUBLE_EQ(producer_handoff(at, false), 45);

  // Points that hold the line read of their regime (7 cycles; 42 now): the consumer's side
  // follows the ring all the same (the line read grew 6 times, the consumer as the ring did on
  // every calibration since 2026-11-26; docs/placement-model.md, "Regimes").
  s.handoff.points[0].line_read_cycles = 7;
  s.handoff.points[1].line_read_cycles = 7;
  now.line_read_cycles = 42;
  ServerProfile lines = follow_regime(s, now);
  lines.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(consumer_handoff(lines), 40 * 3.5);
  EXPECT_DOUBLE_EQ(producer_handoff(lines, true), 20 * 3.5);
  s.handoff.points[0].line_read_cycles = 0;
  s.handoff.points[1].line_read_cycles = 0;
  now.line_read_cycles = 30;

  // Points of two regimes (the machine changed between them): each carried from its own ring, so
  // the interpolation is of one regime. 288 B: 4 of the 7 lines from 64 B to 512 B.
  s.handoff.points[1].ring_cycles = 91;
  ServerProfile mixed = follow_regime(s, now);
  mixed.frame_bytes = 288;
  EXPECT_DOUBLE_EQ(consumer_handoff(mixed), 140 + (110 - 140) * 4.0 / 7);

  // Not following (ring_now 0), or a point measured without its ring: as measured.
  s.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(consumer_handoff(s), 40);
  s.handoff.points[0].ring_cycles = 0;
  ServerProfile old = follow_regime(s, now);
  old.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(consumer_handoff(old), 40);
}

TEST(Handoff, AHandOffCalibratedInTheSlowRegimeIsCarriedIntoTheFastOne) {
  // The IPv4 router's points of docs/placement-verify-2026-11-27-s15.json, measured with the ring
  // at 70 cycles; the ring now at 17, where the pipelines calibrated in the fast regime measured a
  // consumer of 11.2-11.7 at 64 B and a producer of 42-49 at 512 B.
  ServerProfile s = server_with_handoff();
  s.handoff.points[0].producer_cycles_per_packet = 63;
  s.handoff.points[0].consumer_cycles_per_packet = 46;
  s.handoff.points[1].producer_cycles_per_packet = 96;
  s.handoff.points[1].consumer_cycles_per_packet = 48;
  for (HandoffPoint& p : s.handoff.points) p.ring_cycles = 70;
  RingCost now;
  now.enqueue_cycles_per_packet = 8.5;
  now.dequeue_cycles_per_packet = 8.5;
  ServerProfile fast = follow_regime(s, now);
  fast.frame_bytes = 64;
  EXPECT_DOUBLE_EQ(consumer_handoff(fast), 46 * 17.0 / 70);
  EXPECT_DOUBLE_EQ(producer_handoff(fast, true), 63 * 17.0 / 70);
  fast.frame_bytes = 512;
  EXPECT_DOUBLE_EQ(consumer_handoff(fast), 46 * 17.0 / 70 + (48 - 46));
  EXPECT_DOUBLE_EQ(producer_handoff(fast, true), 63 * 17.0 / 70 + (96 - 63));
}

TEST(Handoff, CloningPaysNoHandOff) {
  const ServerProfile s = server_with_handoff();
  const std::vector<ChainElement> chain = {chain_element("A", 100), chain_element("B", 100)};
  const PlacementPrediction clone = predict(s, chain, {Stage{0, 1, 2}});
  EXPECT_DOUBLE_EQ(clone.stages[0].sync, 0);
  EXPECT_DOUBLE_EQ(clone.pps, 2 * kHz / 230);
}

MemoryProfile mac_table(size_t allocated) {
  MemoryProfile m;
  m.working_set_bytes = allocated;
  m.accesses_per_packet = 3.5;
  m.per_worker = true;
  m.bytes_per_key = 192;
  m.keys_counter = "entries";
  return m;
}

TEST(WorkingSet, ATableTheTrafficTouchesLittleOfCountsTheLinesOfItsKeys) {
  ElementReport run;
  run.counters = {{"learn_failures", 0}, {"entries", 1024}};
  const MemoryProfile bounded = bound_by_keys(mac_table(9 << 20), run);
  EXPECT_EQ(bounded.working_set_bytes, 1024u * 192);
  EXPECT_EQ(bounded.table_bytes, 9u << 20);
  EXPECT_TRUE(bounded.per_worker);
  EXPECT_DOUBLE_EQ(bounded.accesses_per_packet, 3.5);

  // No key counted (nothing learned): one key's lines.
  ElementReport empty;
  EXPECT_EQ(bound_by_keys(mac_table(9 << 20), empty).working_set_bytes, 192u);

  // More keys than the table: the table.
  run.counters = {{"entries", 1u << 20}};
  const MemoryProfile full = bound_by_keys(mac_table(1 << 20), run);
  EXPECT_EQ(full.working_set_bytes, 1u << 20);
  EXPECT_EQ(full.table_bytes, 0u);

  // A profile that cannot say (no bytes per key): unchanged.
  MemoryProfile plain = mac_table(9 << 20);
  plain.bytes_per_key = 0;
  EXPECT_EQ(bound_by_keys(plain, run).working_set_bytes, 9u << 20);
}

TEST(WorkingSet, TwoClonedMacTablesOfTouchedLinesStayInTheCaches) {
  // The L2 switch cloned on 2 cores: allocated, 2 x 9 MiB overflow a 8 MiB LLC and every access
  // pays memory; bounded by 1024 keys, 2 x 192 KiB fit each private L2: no contention.
  ServerProfile s = server_with_handoff();
  s.machine.llc_bytes = 8 << 20;
  ChainElement sw = chain_element("sw", 50);
  sw.memory = mac_table(9 << 20);
  const PlacementPrediction allocated = predict(s, {sw}, {Stage{0, 0, 2}});
  EXPECT_GT(allocated.stages[0].contention, 3.5 * 100);
  ElementReport run;
  run.counters = {{"entries", 1024}};
  sw.memory = bound_by_keys(sw.memory, run);
  const PlacementPrediction touched = predict(s, {sw}, {Stage{0, 0, 2}});
  EXPECT_DOUBLE_EQ(touched.stages[0].contention, 0);
  EXPECT_DOUBLE_EQ(touched.pps, 2 * kHz / (50 + 30));
}

}  // namespace
}  // namespace fulcrum::plan
