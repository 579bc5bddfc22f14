// Golden tests for the capture elements: Tee (copies, counted as created) and ToDump (the pcap
// file read back with libpcap: bytes, SNAPLEN, LIMIT, several workers, write failures).
#include <gtest/gtest.h>
#include <pcap/pcap.h>
#include <sys/resource.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/config/ast.hh"
#include "core/graph.hh"
#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "lib/pcap_file.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;

constexpr uint16_t kTag = 7;  // an in_port annotation the copies must carry
constexpr size_t kTtlOffset = 22;

struct Record {
  uint32_t caplen;
  uint32_t len;
  Frame bytes;
};

struct Capture {
  int linktype = -1;
  int snaplen = -1;
  std::vector<Record> records;
};

// The capture at `path` as libpcap reads it.
Capture read_capture(const std::string& path) {
  Capture c;
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  EXPECT_NE(p, nullptr) << err;
  if (p == nullptr) return c;
  c.linktype = pcap_datalink(p);
  c.snaplen = pcap_snapshot(p);
  pcap_pkthdr* h;
  const u_char* bytes;
  while (pcap_next_ex(p, &h, &bytes) == 1)
    c.records.push_back({h->caplen, h->len, Frame(bytes, bytes + h->caplen)});
  pcap_close(p);
  return c;
}

Frame frame(uint32_t i, uint32_t len = 64) {
  return testing::ipv4_udp_frame(0x0A000001 + i, 0x0A000002, 64, len);
}

// Collects what ToOutput transmits.
class CollectingSink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    batch.for_each([&](uint32_t, Packet* p) {
      sent.push_back(testing::packet_bytes(p));
      rte_pktmbuf_free(p);
    });
    batch.set_count(0);
  }
  std::vector<Frame> sent;
};

bool is_class(std::string_view n) {
  return Registry::instance().find(n) != nullptr;
}

// One worker's replica of `text` (worker `worker` of `workers`, sharing `shared`).
std::unique_ptr<Pipeline> build(const std::string& text, PacketSink& sink, SharedStorage& shared,
                                int worker = 0, int workers = 1) {
  Result<PipelineConfig> cfg = parse_pipeline(text, "capture.click", is_class);
  EXPECT_TRUE(cfg.ok()) << cfg.error();
  if (!cfg) return nullptr;
  InitContext ctx;
  ctx.worker = worker;
  ctx.workers = workers;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = testing::test_pool();
  Result<std::unique_ptr<Pipeline>> p = Pipeline::build(cfg.value(), ctx);
  EXPECT_TRUE(p.ok()) << p.error();
  return p ? std::move(p.value()) : nullptr;
}

// The error building `text` gives.
std::string build_error(const std::string& text) {
  SharedStorage shared;
  CollectingSink sink;
  Result<PipelineConfig> cfg = parse_pipeline(text, "capture.click", is_class);
  if (!cfg) return cfg.error();
  InitContext ctx;
  ctx.shared = &shared;
  ctx.sink = &sink;
  ctx.pool = testing::test_pool();
  Result<std::unique_ptr<Pipeline>> p = Pipeline::build(cfg.value(), ctx);
  return p ? "(no error)" : p.error();
}

void inject(Pipeline& p, const std::vector<Frame>& frames) {
  PacketBatch b;
  for (const Frame& f : frames) b.push(testing::make_packet(f, kTag));
  p.inject(b);
  while (p.poll_deferred(0) > 0) {
  }
}

// Whether `part` is a subsequence of `all` (its elements in all, in the same order).
bool in_order(const std::vector<Frame>& all, const std::vector<Frame>& part) {
  size_t k = 0;
  for (const Frame& f : all)
    if (k < part.size() && f == part[k]) ++k;
  return k == part.size();
}

const Node& node(const Pipeline& p, const std::string& name) {
  for (const Node& n : p.nodes())
    if (n.element->name() == name) return n;
  ADD_FAILURE() << "no element " << name;
  return p.nodes().front();
}

TEST(Tee, SendsThePacketOutOfOutputZeroAndACopyOutOfEachOther) {
  const ElementClassInfo* info = Registry::instance().find("Tee");
  ASSERT_NE(info, nullptr);
  std::unique_ptr<Element> tee = info->create();
  Args args({"3"}, SourceLoc{"test.click", 1, 1}, "t", "Tee");
  ASSERT_TRUE(tee->configure(args).ok());
  ASSERT_EQ(tee->noutputs(), 3);
  InitContext ctx;
  ctx.pool = testing::test_pool();
  ASSERT_TRUE(tee->initialize(ctx).ok());
  ASSERT_TRUE(tee->defers());

  const std::vector<Frame> frames = {frame(0), frame(1, 60), frame(2, 1514)};
  PacketBatch in;
  for (const Frame& f : frames) in.push(testing::make_packet(f, kTag));
  tee->process_batch(in);
  for (uint32_t i = 0; i < in.count(); ++i) {
    EXPECT_EQ(in.result(i).port(), 0);
    EXPECT_EQ(testing::packet_bytes(in.at(i)), frames[i]);
  }
  EXPECT_EQ(tee->held(), 6u);
  PacketBatch out;
  tee->poll_deferred(0, out);
  EXPECT_EQ(tee->held(), 0u);
  ASSERT_EQ(out.count(), 6u);
  EXPECT_EQ(out.created(), 6u);
  for (uint32_t k = 0; k < out.count(); ++k) {
    Packet* copy = out.at(k);
    Packet* original = in.at(k / 2);
    EXPECT_EQ(out.result(k).port(), 1 + static_cast<int>(k % 2));
    EXPECT_NE(copy, original);
    EXPECT_EQ(testing::packet_bytes(copy), frames[k / 2]);
    EXPECT_EQ(in_port(copy), kTag);
  }
  // A change to a copy is not seen by the original.
  data(out.at(0))[kTtlOffset] = 0;
  EXPECT_EQ(testing::packet_bytes(in.at(0)), frames[0]);
  EXPECT_EQ(testing::counter(*tee, "copies"), 6u);
  EXPECT_EQ(testing::counter(*tee, "no_buffer"), 0u);
  testing::free_batch(in);
  testing::free_batch(out);
}

TEST(Tee, CopiesCountAsCreatedAndThePacketBalanceHolds) {
  SharedStorage shared;
  CollectingSink sink;
  auto p = build("FromInput -> t :: Tee; t[0] -> ToOutput; t[1] -> Discard;", sink, shared);
  ASSERT_NE(p, nullptr);
  const unsigned before = rte_mempool_avail_count(testing::test_pool());
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 10; ++i) frames.push_back(frame(i));
  inject(*p, frames);
  EXPECT_EQ(sink.sent, frames);
  EXPECT_EQ(p->created(), 10u);
  EXPECT_EQ(p->dropped(), 10u);
  EXPECT_EQ(p->held(), 0u);
  const uint64_t in = node(*p, "FromInput@1").stats.in_packets;
  EXPECT_EQ(in + p->created(), sink.sent.size() + p->dropped());
  EXPECT_EQ(node(*p, "t").stats.out_packets, (std::vector<uint64_t>{10, 10}));
  EXPECT_EQ(rte_mempool_avail_count(testing::test_pool()), before) << "a buffer leaked";
}

TEST(Tee, RefusesAnOutputCountOutOfRange) {
  EXPECT_EQ(build_error("FromInput -> Tee(0) -> ToOutput;"),
            "capture.click:1:14: Tee@2 :: Tee: N must be 1..64");
  EXPECT_EQ(build_error("FromInput -> Tee(65) -> ToOutput;"),
            "capture.click:1:14: Tee@2 :: Tee: N must be 1..64");
}

TEST(ToDump, WritesEveryPacketWholeAndPassesItOn) {
  const std::string path = testing::temp_path("todump-whole.pcap");
  auto e = testing::make_or_fail("ToDump", {path});
  ASSERT_NE(e, nullptr);
  const std::vector<Frame> frames = {frame(0), frame(1, 60), frame(2, 1514), frame(3, 2048)};
  PacketBatch b;
  const std::vector<Verdict> v = testing::run_batch(*e, b, frames);
  for (uint32_t i = 0; i < v.size(); ++i) {
    EXPECT_EQ(v[i].port(), 0);
    EXPECT_EQ(testing::packet_bytes(b.at(i)), frames[i]);
  }
  testing::free_batch(b);
  e->finish();
  const Capture c = read_capture(path);
  EXPECT_EQ(c.linktype, DLT_EN10MB);
  EXPECT_EQ(c.snaplen, static_cast<int>(PcapFile::kMaxSnapLen));
  ASSERT_EQ(c.records.size(), frames.size());
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(c.records[i].len, frames[i].size());
    EXPECT_EQ(c.records[i].bytes, frames[i]);
  }
  EXPECT_EQ(testing::counter(*e, "captured"), frames.size());
  std::vector<OutputLoss> losses;
  e->output_losses(losses);
  EXPECT_TRUE(losses.empty());
  std::filesystem::remove(path);
}

TEST(ToDump, KeepsSnaplenBytesAndStopsAtTheLimit) {
  constexpr uint32_t kSnap = 20, kLimit = 3;
  const std::string path = testing::temp_path("todump-snap.pcap");
  auto e = testing::make_or_fail("ToDump", {path, "SNAPLEN 20", "LIMIT 3"});
  ASSERT_NE(e, nullptr);
  constexpr size_t kShort = 15;  // shorter than SNAPLEN: kept whole
  Frame short_frame = frame(1);
  short_frame.resize(kShort);
  const std::vector<Frame> first = {frame(0, 100), short_frame};
  const std::vector<Frame> second = {frame(2, 64), frame(3, 64)};
  PacketBatch b;
  for (const auto* batch : {&first, &second}) {
    for (Verdict v : testing::run_batch(*e, b, *batch)) EXPECT_EQ(v.port(), 0);
    testing::free_batch(b);
  }
  e->finish();
  const Capture c = read_capture(path);
  EXPECT_EQ(c.snaplen, static_cast<int>(kSnap));
  ASSERT_EQ(c.records.size(), kLimit);
  const std::vector<Frame> all = {first[0], first[1], second[0]};
  for (size_t i = 0; i < kLimit; ++i) {
    const size_t kept = std::min<size_t>(kSnap, all[i].size());
    EXPECT_EQ(c.records[i].caplen, kept);
    EXPECT_EQ(c.records[i].len, all[i].size());
    EXPECT_EQ(c.records[i].bytes, Frame(all[i].begin(), all[i].begin() + kept));
  }
  EXPECT_EQ(testing::counter(*e, "captured"), kLimit);
  std::filesystem::remove(path);
}

TEST(ToDump, WithoutOutputDropsThePacketsAsDumped) {
  const std::string path = testing::temp_path("todump-end.pcap");
  std::string error;
  auto e = testing::make_element_connected("ToDump", {path}, 0, &error);
  ASSERT_NE(e, nullptr) << error;
  PacketBatch b;
  for (Verdict v : testing::run_batch(*e, b, {frame(0), frame(1)}))
    EXPECT_EQ(testing::drop_reason(*e, v), "dumped");
  EXPECT_EQ(b.live(), 0u);
  e->finish();
  EXPECT_EQ(read_capture(path).records.size(), 2u);
  std::filesystem::remove(path);
}

TEST(ToDump, AFileThatCannotBeWrittenIsALoadError) {
  EXPECT_EQ(testing::config_error("ToDump", {"/nonexistent-folder/x.pcap"}),
            "test.click:1:1: test :: ToDump: cannot write capture /nonexistent-folder/x.pcap: "
            "No such file or directory");
  EXPECT_EQ(testing::config_error("ToDump", {"/dev/full"}),
            "test.click:1:1: test :: ToDump: cannot write capture /dev/full: No space left on "
            "device");
  EXPECT_EQ(testing::config_error("ToDump", {"x.pcap", "SNAPLEN 262145"}),
            "test.click:1:1: test :: ToDump: SNAPLEN must be 0..262144");
  EXPECT_EQ(testing::config_error("ToDump", {"x.pcap", "LIMIT -1"}),
            "test.click:1:1: test :: ToDump: LIMIT must not be negative");
  const std::string path = testing::temp_path("todump-twice.pcap");
  const std::string text =
      "FromInput -> a :: ToDump(" + path + ") -> b :: ToDump(" + path + ") -> ToOutput;";
  EXPECT_EQ(build_error(text), "capture.click:1:" + std::to_string(text.find("b ::") + 1) +
                                   ": b :: ToDump: capture " + path +
                                   " is written by 'a' already (one ToDump a file)");
  std::filesystem::remove(path);
}

// Two workers' replicas write one file: every packet of both, each worker's in its order, and
// LIMIT counts over both.
TEST(ToDump, WorkersShareOneFileAndOneLimit) {
  const std::string path = testing::temp_path("todump-workers.pcap");
  const std::string limited = testing::temp_path("todump-workers-limit.pcap");
  SharedStorage shared;
  CollectingSink sink;
  const std::string text =
      "FromInput -> ToDump(" + path + ") -> ToDump(" + limited + ", LIMIT 5) -> ToOutput;";
  auto w0 = build(text, sink, shared, 0, 2);
  auto w1 = build(text, sink, shared, 1, 2);
  ASSERT_NE(w0, nullptr);
  ASSERT_NE(w1, nullptr);
  std::vector<Frame> frames;
  for (uint32_t i = 0; i < 8; ++i) frames.push_back(frame(i));
  inject(*w0, {frames[0], frames[1]});
  inject(*w1, {frames[2], frames[3]});
  inject(*w0, {frames[4], frames[5]});
  inject(*w1, {frames[6], frames[7]});
  w1->finish();
  w0->finish();
  // Buffers reach the file whole, each worker's in order (when, the clock decides).
  const Capture c = read_capture(path);
  ASSERT_EQ(c.records.size(), frames.size());
  std::vector<Frame> got;
  for (const Record& r : c.records) got.push_back(r.bytes);
  EXPECT_TRUE(in_order(got, {frames[0], frames[1], frames[4], frames[5]}));
  EXPECT_TRUE(in_order(got, {frames[2], frames[3], frames[6], frames[7]}));
  // The claims: worker 0 two, worker 1 two, worker 0 the last one of its second batch.
  const Capture l = read_capture(limited);
  ASSERT_EQ(l.records.size(), 5u);
  for (size_t i = 0; i < 5; ++i)
    EXPECT_TRUE(std::any_of(l.records.begin(), l.records.end(),
                            [&](const Record& r) { return r.bytes == frames[i]; }))
        << "frame " << i;
  EXPECT_EQ(sink.sent.size(), frames.size());
  EXPECT_TRUE(w0->output_losses().empty());
  std::filesystem::remove(path);
  std::filesystem::remove(limited);
}

// A write that fails (here past a file size limit, as a full disk would) loses whole buffers:
// the file is cut back to its last whole record and still reads, and worker 0's replica
// reports the loss.
TEST(ToDump, WriteFailuresAreCountedAndTheFileStillReads) {
  constexpr rlim_t kFileLimit = 100 * 1024;
  constexpr uint32_t kFrames = 200, kLen = 1000;
  const std::string path = testing::temp_path("todump-full.pcap");
  auto e = testing::make_or_fail("ToDump", {path});
  ASSERT_NE(e, nullptr);
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &saved), 0);
  const auto old_handler = std::signal(SIGXFSZ, SIG_IGN);
  rlimit small = saved;
  small.rlim_cur = kFileLimit;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  PacketBatch b;
  for (uint32_t i = 0; i < kFrames; ++i) {
    testing::run_batch(*e, b, {frame(i, kLen)});
    testing::free_batch(b);
  }
  e->finish();
  setrlimit(RLIMIT_FSIZE, &saved);
  std::signal(SIGXFSZ, old_handler);

  const Capture c = read_capture(path);
  const uint64_t lost = testing::counter(*e, "lost");
  EXPECT_GT(c.records.size(), 0u);
  EXPECT_GT(lost, 0u);
  EXPECT_EQ(c.records.size() + lost, kFrames);
  std::vector<Frame> got, sent;
  for (const Record& r : c.records) got.push_back(r.bytes);
  for (uint32_t i = 0; i < kFrames; ++i) sent.push_back(frame(i, kLen));
  EXPECT_TRUE(in_order(sent, got)) << "whole records, in order";
  std::vector<OutputLoss> losses;
  e->output_losses(losses);
  ASSERT_EQ(losses.size(), 1u);
  EXPECT_EQ(losses[0].what, "capture " + path);
  EXPECT_EQ(losses[0].unit, "packets");
  EXPECT_EQ(losses[0].lost, lost);
  EXPECT_EQ(losses[0].error, std::strerror(EFBIG));
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace fulcrum
