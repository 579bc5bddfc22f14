// The calibration file (src/plan/calibration.hh): written and read back, and every mistake in it
// named by FILE:LINE:COL (JSON syntax) or by the field's path.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "plan/calibration.hh"
#include "plan/measure_machine.hh"

namespace fulcrum::plan {
namespace {

Calibration sample() {
  Calibration c;
  c.created = "test";
  c.machine.cpus = 2;
  c.machine.tsc_hz = 2.5e9;
  c.machine.l1d_bytes = 32768;
  c.machine.l2_bytes = 1 << 20;
  c.machine.llc_bytes = 8 << 20;
  c.machine.llc_sysfs_bytes = 32 << 20;
  c.machine.llc_shared_cpus = 2;
  c.memory = {4, 14, 50, 300, 8};
  c.memory.group_ahead_line_cycles = {50, 36, 26, 20, 13.5, 9.75, 7.5};
  c.memory.group_within_line_cycles = {60, 41, 35, 25.5, 20.5, 16.25, 13};
  c.ring = {true, 64, 12.5, 30.25, 9, 160, 320, 11.5, 3.25};
  c.pipeline.file = "configs/ipv4-router.click";
  c.pipeline.batch = 64;
  c.pipeline.workers = 1;
  c.pipeline.seconds = 0.5;
  c.pipeline.mpps = 10;
  c.pipeline.io_cycles_per_packet = 40;
  c.pipeline.tx_cycles_per_packet = 12.5;
  c.pipeline.frame_bytes = 64;
  c.handoff.cross_core = true;
  c.handoff.batch = 64;
  c.handoff.runs = 3;
  c.handoff.attempts = 2;
  c.handoff.consistent = true;
  HandoffPoint small;
  small.frame_bytes = 64;
  small.producer_cycles_per_packet = -5.5;  // it no longer transmits: may be below 0
  small.consumer_cycles_per_packet = 40;
  small.clone_cycles_per_packet = 80;
  small.consumer_bound = true;
  small.ring_cycles = 26.5;
  small.line_read_cycles = 7.25;
  HandoffPoint large = small;
  large.frame_bytes = 512;
  large.producer_cycles_per_packet = 30;
  large.consumer_cycles_per_packet = 110;
  c.handoff.points = {small, large};
  c.handoff.spread = small;
  c.handoff.spread.consumer_cycles_per_packet = 52.5;
  c.handoff.scan = large;
  c.handoff.scan.consumer_cycles_per_packet = 145.5;
  c.pipeline.out_ports = 2;
  ElementMeasure e;
  e.name = "IPLookup@2";
  e.class_name = "IPLookup";
  e.cycles_per_packet = 20;
  e.cycles_per_batch = 1300;
  e.packet_share = 0.5;
  e.memory.working_set_bytes = 4096;
  e.memory.accesses_per_packet = 1.25;
  e.memory.prefetch_group = 16;
  e.memory.compute_cycles = 7;
  e.memory.levels = 1.25;
  e.memory.within_group_levels = 0.25;
  e.memory.lines_per_level = 1;
  e.frame_bytes = 134.5;
  c.pipeline.elements.push_back(e);
  return c;
}

TEST(Calibration, WrittenAndReadBackAlike) {
  const Calibration c = sample();
  Result<Calibration> back = parse_calibration(calibration_json(c), "cal.json");
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(calibration_json(back.value()), calibration_json(c));
  EXPECT_EQ(back.value().pipeline.elements.at(0).memory.prefetch_group, 16u);
  EXPECT_DOUBLE_EQ(back.value().ring.dequeue_cycles_per_packet, 30.25);
  EXPECT_DOUBLE_EQ(back.value().ring.dequeue_cycles_per_burst, 320);
  EXPECT_DOUBLE_EQ(back.value().ring.line_read_cycles, 11.5);
  EXPECT_DOUBLE_EQ(back.value().ring.line_rewrite_cycles, 3.25);
  ASSERT_EQ(back.value().handoff.points.size(), 2u);
  EXPECT_DOUBLE_EQ(back.value().handoff.points[0].producer_cycles_per_packet, -5.5);
  EXPECT_DOUBLE_EQ(back.value().handoff.points[1].consumer_cycles_per_packet, 110);
  EXPECT_TRUE(back.value().handoff.points[1].consumer_bound);
  EXPECT_DOUBLE_EQ(back.value().handoff.points[1].ring_cycles, 26.5);
  EXPECT_DOUBLE_EQ(back.value().handoff.points[1].line_read_cycles, 7.25);
  EXPECT_EQ(back.value().handoff.attempts, 2u);
  EXPECT_TRUE(back.value().handoff.consistent);
  EXPECT_DOUBLE_EQ(back.value().pipeline.frame_bytes, 64);
  EXPECT_DOUBLE_EQ(back.value().pipeline.tx_cycles_per_packet, 12.5);
  EXPECT_EQ(back.value().handoff.spread.frame_bytes, 64u);
  EXPECT_DOUBLE_EQ(back.value().handoff.spread.consumer_cycles_per_packet, 52.5);
  EXPECT_EQ(back.value().handoff.scan.frame_bytes, 512u);
  EXPECT_DOUBLE_EQ(back.value().handoff.scan.consumer_cycles_per_packet, 145.5);
  EXPECT_EQ(back.value().pipeline.out_ports, 2u);
  EXPECT_DOUBLE_EQ(back.value().pipeline.elements.at(0).frame_bytes, 134.5);
  EXPECT_DOUBLE_EQ(back.value().pipeline.elements.at(0).memory.within_group_levels, 0.25);
  EXPECT_DOUBLE_EQ(back.value().memory.group_ahead_line_cycles[6], 7.5);
  EXPECT_DOUBLE_EQ(back.value().memory.group_within_line_cycles[0], 60);
}

TEST(Calibration, AFileWithoutTheGroupReadsKeepsTheLatencyModel) {
  // Written before the group reads were measured: none, and a lookup's levels all ahead.
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["memory"].erase("group_ahead_line_cycles");
  j["memory"].erase("group_within_line_cycles");
  j["pipeline"]["elements"][0]["memory"]["lookup"].erase("within_group_levels");
  Result<Calibration> old = parse_calibration(j.dump(), "c.json");
  ASSERT_TRUE(old) << old.error();
  EXPECT_FALSE(old.value().memory.has_group_lines());
  EXPECT_DOUBLE_EQ(old.value().pipeline.elements.at(0).memory.within_group_levels, 0);
  EXPECT_TRUE(sample().memory.has_group_lines());
  // They are read as strictly as the other fields, and only together.
  j = nlohmann::json::parse(calibration_json(sample()));
  j["memory"].erase("group_within_line_cycles");
  Result<Calibration> r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "c.json: field memory.group_within_line_cycles: group_ahead_line_cycles and "
            "group_within_line_cycles come together");
  j = nlohmann::json::parse(calibration_json(sample()));
  j["memory"]["group_ahead_line_cycles"] = {1, 2, 3};
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "c.json: field memory.group_ahead_line_cycles: must be an array of 7 numbers");
  j["memory"]["group_ahead_line_cycles"] = {50, 36, 26, "x", 13.5, 9.75, 7.5};
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field memory.group_ahead_line_cycles[3]: must be a number >= 0");
  j["memory"]["group_ahead_line_cycles"] = {0, 36, 26, 20, 13.5, 9.75, 7.5};
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field memory.group_ahead_line_cycles: must start above 0");
}

TEST(Calibration, AFileWithoutTheElementsFrameSizesTakesThePipelines) {
  // Written before the elements' frame sizes were measured: 0, the pipeline's frame.
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["pipeline"]["elements"][0].erase("frame_bytes");
  Result<Calibration> old = parse_calibration(j.dump(), "c.json");
  ASSERT_TRUE(old) << old.error();
  EXPECT_DOUBLE_EQ(old.value().pipeline.elements.at(0).frame_bytes, 0);
  j["pipeline"]["elements"][0]["frame_bytes"] = -1;
  Result<Calibration> bad = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("pipeline.elements[0].frame_bytes"), std::string::npos) << bad.error();
}

TEST(Calibration, AFileWithoutTheScanReferenceChargesThePlainRingsLineScan) {
  // Written before the scan reference: no scan point; a scanner's lines are then charged the
  // plain ring's line scan (handoff_scan_line_cycles says there is none).
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["handoff"].erase("scan");
  Result<Calibration> old = parse_calibration(j.dump(), "c.json");
  ASSERT_TRUE(old) << old.error();
  EXPECT_EQ(old.value().handoff.scan.frame_bytes, 0u);
  EXPECT_DOUBLE_EQ(handoff_scan_line_cycles(old.value().handoff, old.value().ring, 64, 64), -1);
  // 512 B: 7 lines beyond the header, (145.5 - 110) / 7 each.
  EXPECT_DOUBLE_EQ(handoff_scan_line_cycles(sample().handoff, old.value().ring, 64, 64),
                   (145.5 - 110) / 7);
  // A scan point is read as strictly as the others.
  j["handoff"]["scan"] = {{"frame_bytes", 512}};
  Result<Calibration> bad = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("handoff.scan."), std::string::npos) << bad.error();
}

TEST(Calibration, AFileWithoutTheSpreadReferenceChargesNoSpread) {
  // Written before the spread reference: no spread point, one port out; the consumer's side is
  // the points' alone.
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["handoff"].erase("spread");
  j["pipeline"].erase("out_ports");
  Result<Calibration> old = parse_calibration(j.dump(), "c.json");
  ASSERT_TRUE(old) << old.error();
  const Calibration& c = old.value();
  EXPECT_EQ(c.handoff.spread.frame_bytes, 0u);
  EXPECT_EQ(c.pipeline.out_ports, 1u);
  EXPECT_DOUBLE_EQ(handoff_spread_cycles(c.handoff, c.ring, 64, 64), 0);
  EXPECT_DOUBLE_EQ(handoff_spread_cycles(sample().handoff, c.ring, 64, 64), 52.5 - 40);
  // A spread point is read as strictly as the others.
  j["handoff"]["spread"] = {{"frame_bytes", 64}};
  Result<Calibration> bad = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("handoff.spread."), std::string::npos) << bad.error();
}

TEST(Calibration, TransmitFlushesArePartOfTheWorkOutsideElements) {
  // Written before the flushes were timed: 0, all of the work outside elements on the first
  // stage as before.
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["pipeline"].erase("tx_cycles_per_packet");
  Result<Calibration> old = parse_calibration(j.dump(), "c.json");
  ASSERT_TRUE(old) << old.error();
  EXPECT_DOUBLE_EQ(old.value().pipeline.tx_cycles_per_packet, 0);
  j["pipeline"]["tx_cycles_per_packet"] = 41;
  Result<Calibration> bad = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(),
            "c.json: field pipeline.tx_cycles_per_packet: must not exceed io_cycles_per_packet "
            "(it is part of it)");
}

TEST(Calibration, AFormatOneFileReadsWithoutTheRuntimeHandOff) {
  // What format 1 wrote: no "handoff", no pipeline.frame_bytes, no memory.table_bytes.
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["format"] = 1;
  j.erase("handoff");
  j["pipeline"].erase("frame_bytes");
  Result<Calibration> back = parse_calibration(j.dump(), "old.json");
  ASSERT_TRUE(back) << back.error();
  EXPECT_TRUE(back.value().handoff.points.empty());
  EXPECT_DOUBLE_EQ(back.value().pipeline.frame_bytes, 0);
  // The model then charges the ring's enqueue and dequeue.
  const Calibration& c = back.value();
  EXPECT_DOUBLE_EQ(handoff_producer_cycles(c.handoff, c.ring, 512, 64, 64), 12.5);
  EXPECT_DOUBLE_EQ(handoff_consumer_cycles(c.handoff, c.ring, 512, 64, 64), 30.25);
  // Written again, it is a format-2 file with no hand-off points.
  EXPECT_EQ(nlohmann::json::parse(calibration_json(c))["format"], kCalibrationFormat);
}

TEST(Calibration, AFileWithoutTheFrameLineCostsChargesNoLines) {
  // Written before the ring measured a frame's lines: they read as 0 (the model then charges a
  // cut nothing for the lines an element reads beyond the header, as it did).
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["ring"].erase("line_read_cycles");
  j["ring"].erase("line_rewrite_cycles");
  for (auto& pt : j["handoff"]["points"]) pt.erase("line_read_cycles");
  Result<Calibration> back = parse_calibration(j.dump(), "c.json");
  ASSERT_TRUE(back) << back.error();
  EXPECT_DOUBLE_EQ(back.value().ring.line_read_cycles, 0);
  EXPECT_DOUBLE_EQ(back.value().ring.line_rewrite_cycles, 0);
  EXPECT_DOUBLE_EQ(back.value().handoff.points[0].line_read_cycles, 0);
  j["ring"]["line_read_cycles"] = -1;
  j["ring"]["line_rewrite_cycles"] = 0;
  Result<Calibration> bad = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "c.json: field ring.line_read_cycles: must be a number >= 0");
}

TEST(Calibration, AFormatTwoFileNeedsItsHandOff) {
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j.erase("handoff");
  Result<Calibration> r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field handoff: missing");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["handoff"]["points"][1]["frame_bytes"] = 64;
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "c.json: field handoff.points[1].frame_bytes: must be above the previous point's");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["handoff"]["points"][0]["consumer_cycles_per_packet"] = -1;
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "c.json: field handoff.points[0].consumer_cycles_per_packet: must be a number >= 0");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["handoff"]["points"][0]["producer_cycles_per_packet"] = "cheap";
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "c.json: field handoff.points[0].producer_cycles_per_packet: must be a number");
}

TEST(Calibration, TheHandOffIsLinearInTheFrameLinesBetweenItsPoints) {
  const Calibration c = sample();  // 64 B: -5.5 / 40; 512 B (8 lines): 30 / 110
  auto producer = [&](double bytes) {
    return handoff_producer_cycles(c.handoff, c.ring, bytes, 64, 64);
  };
  auto consumer = [&](double bytes) {
    return handoff_consumer_cycles(c.handoff, c.ring, bytes, 64, 64);
  };
  EXPECT_DOUBLE_EQ(consumer(64), 40);
  EXPECT_DOUBLE_EQ(consumer(60), 40);  // one line as 64 B
  EXPECT_DOUBLE_EQ(consumer(512), 110);
  EXPECT_DOUBLE_EQ(consumer(256), 40 + 70.0 * 3 / 7);    // 4 lines
  EXPECT_DOUBLE_EQ(consumer(78), 40 + 70.0 * 1 / 7);     // 2 lines
  EXPECT_DOUBLE_EQ(consumer(1024), 40 + 70.0 * 15 / 7);  // beyond: the last segment extended
  EXPECT_DOUBLE_EQ(producer(64), -5.5);
  EXPECT_DOUBLE_EQ(producer(512), 30);
  EXPECT_DOUBLE_EQ(producer(0), -5.5);  // frame size not known: the smallest point
  // One point: the same whatever the frame.
  Calibration one = c;
  one.handoff.points.resize(1);
  EXPECT_DOUBLE_EQ(handoff_consumer_cycles(one.handoff, one.ring, 1500, 64, 64), 40);
}

TEST(Calibration, TheHandOffPerPacketScalesItsBurstPartWithTheBurstSize) {
  const RingCost r = sample().ring;  // 12.5 / 30.25 per packet at 64, 160 / 320 per burst
  EXPECT_DOUBLE_EQ(enqueue_cycles(r, 64), 12.5);
  EXPECT_DOUBLE_EQ(enqueue_cycles(r, 32), 12.5 + 160 * (1.0 / 32 - 1.0 / 64));
  EXPECT_DOUBLE_EQ(dequeue_cycles(r, 8), 30.25 + 320 * (1.0 / 8 - 1.0 / 64));
  EXPECT_DOUBLE_EQ(dequeue_cycles(r, 256), 30.25 + 320 * (1.0 / 256 - 1.0 / 64));
}

TEST(Calibration, ElementsWithoutLookupCostsRoundTrip) {
  Calibration c = sample();
  c.pipeline.elements[0].memory = {};
  Result<Calibration> back = parse_calibration(calibration_json(c), "cal.json");
  ASSERT_TRUE(back) << back.error();
  EXPECT_EQ(back.value().pipeline.elements[0].memory.prefetch_group, 0u);
}

TEST(Calibration, SyntaxErrorsNameFileLineAndColumn) {
  Result<Calibration> r = parse_calibration("{\n  \"format\": 1,\n  \"machine\": {,}\n}", "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().rfind("c.json:3:15: not JSON", 0), 0u) << r.error();
}

TEST(Calibration, MissingAndWrongFieldsAreNamedByTheirPath) {
  nlohmann::json j = nlohmann::json::parse(calibration_json(sample()));
  j["memory"].erase("dram_cycles");
  Result<Calibration> r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field memory.dram_cycles: missing");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["pipeline"]["elements"][0]["cycles_per_packet"] = "fast";
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "c.json: field pipeline.elements[0].cycles_per_packet: must be a number >= 0");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["machine"]["tsc_hz"] = 0;
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field machine.tsc_hz: must be a number > 0");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["pipeline"]["elements"][0]["memory"]["lookup"]["prefetch_group"] = -1;
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(),
            "c.json: field pipeline.elements[0].memory.lookup.prefetch_group: must be an integer "
            ">= 1");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["format"] = 3;
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field format: is 3, this fulcrum reads 1 to 2");

  j = nlohmann::json::parse(calibration_json(sample()));
  j["machine"]["llc_bytes"] = 1024;
  r = parse_calibration(j.dump(), "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field machine.llc_bytes: is below machine.l2_bytes");

  r = parse_calibration("[1, 2]", "c.json");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error(), "c.json: field the file: must be an object");
}

TEST(Calibration, MachineInfoFromAFakeSysfs) {
  const std::string dir = ::testing::TempDir() + "/fulcrum_cache_sysfs";
  auto put = [&](const std::string& idx, const std::string& level, const std::string& type,
                 const std::string& size, const std::string& shared) {
    const std::string d = dir + "/" + idx;
    ASSERT_EQ(std::system(("mkdir -p " + d).c_str()), 0);
    std::FILE* f;
    for (const auto& [name, value] : {std::pair<std::string, std::string>{"level", level},
                                      {"type", type},
                                      {"size", size},
                                      {"shared_cpu_list", shared},
                                      {"coherency_line_size", "64"}}) {
      f = std::fopen((d + "/" + name).c_str(), "w");
      ASSERT_NE(f, nullptr);
      std::fprintf(f, "%s\n", value.c_str());
      std::fclose(f);
    }
  };
  put("index0", "1", "Data", "48K", "0");
  put("index1", "1", "Instruction", "32K", "0");
  put("index2", "2", "Unified", "2048K", "0");
  put("index3", "3", "Unified", "96M", "0-7,16-23");
  Result<MachineInfo> m = read_machine_info(dir);
  ASSERT_TRUE(m) << m.error();
  EXPECT_EQ(m.value().l1d_bytes, 48u * 1024);
  EXPECT_EQ(m.value().l2_bytes, 2048u * 1024);
  EXPECT_EQ(m.value().llc_bytes, 96u * 1024 * 1024);
  EXPECT_EQ(m.value().llc_sysfs_bytes, 96u * 1024 * 1024);
  EXPECT_EQ(m.value().llc_shared_cpus, 16u);
  EXPECT_FALSE(read_machine_info(dir + "/none"));
}

}  // namespace
}  // namespace fulcrum::plan
