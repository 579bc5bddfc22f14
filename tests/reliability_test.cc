// Reliability: frames in mbuf chains made contiguous (or dropped), input files that are not
// regular files refused, alert-log write failures counted as lost alerts, UDP lengths checked by
// the IDS parser, the watchdog naming the element a stalled worker is in, and table memory
// bounded by the machine's memory and committed only as it is touched.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "core/heartbeat.hh"
#include "core/registry.hh"
#include "core/text_file.hh"
#include "io/mempool.hh"
#include "lib/ids/alert_log.hh"
#include "lib/ids/packet_view.hh"
#include "lib/table_file.hh"
#include "lib/table_memory.hh"
#include "runtime/runtime.hh"
#include "runtime/worker.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

// A chain of `segments` mbufs holding `bytes`.
Packet* chain(const std::vector<uint8_t>& bytes, size_t segments) {
  Packet* head = nullptr;
  const size_t per = (bytes.size() + segments - 1) / segments;
  for (size_t off = 0; off < bytes.size(); off += per) {
    Packet* m = rte_pktmbuf_alloc(testing::test_pool());
    const size_t n = std::min(per, bytes.size() - off);
    std::memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(n)), bytes.data() + off, n);
    if (head == nullptr)
      head = m;
    else
      EXPECT_EQ(rte_pktmbuf_chain(head, m), 0);
  }
  return head;
}

TEST(Linearize, ChainBecomesOneContiguousFrame) {
  Result<rte_mempool*> pool = create_packet_pool("jumbo-test", kJumboPoolSize, kJumboDataRoom);
  ASSERT_TRUE(pool.ok()) << pool.error();
  PoolHandle owned(pool.value());
  std::vector<uint8_t> bytes(9000);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 7 + 3);
  const unsigned before = rte_mempool_avail_count(testing::test_pool());
  Packet* m = chain(bytes, 5);
  ASSERT_EQ(m->nb_segs, 5);
  Packet* j = linearize(m, pool.value());
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(j->nb_segs, 1);
  ASSERT_EQ(j->pkt_len, bytes.size());
  EXPECT_EQ(std::memcmp(rte_pktmbuf_mtod(j, uint8_t*), bytes.data(), bytes.size()), 0);
  EXPECT_GE(rte_pktmbuf_headroom(j), RTE_PKTMBUF_HEADROOM) << "elements prepend headers";
  EXPECT_EQ(rte_mempool_avail_count(testing::test_pool()), before) << "the chain was not freed";
  rte_pktmbuf_free(j);
}

TEST(Linearize, TooLongOrNoBufferDropsAndFreesTheChain) {
  Result<rte_mempool*> pool = create_packet_pool("jumbo-test", kJumboPoolSize, kJumboDataRoom);
  ASSERT_TRUE(pool.ok()) << pool.error();
  PoolHandle owned(pool.value());
  const unsigned before = rte_mempool_avail_count(testing::test_pool());
  EXPECT_EQ(linearize(chain(std::vector<uint8_t>(kMaxLinearFrame + 1, 1), 9), pool.value()),
            nullptr);
  Packet* first = linearize(chain(std::vector<uint8_t>(3000, 2), 2), pool.value());
  ASSERT_NE(first, nullptr);
  std::vector<Packet*> taken{first};
  while (Packet* m = rte_pktmbuf_alloc(pool.value())) taken.push_back(m);
  EXPECT_EQ(linearize(chain(std::vector<uint8_t>(3000, 3), 2), pool.value()), nullptr)
      << "every jumbo buffer is taken";
  for (Packet* m : taken) rte_pktmbuf_free(m);
  EXPECT_EQ(rte_mempool_avail_count(testing::test_pool()), before) << "a buffer leaked";
}

TEST(InputFile, OnlyRegularFilesAreRead) {
  const std::string fifo = testing::temp_path("fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Result<std::string> f = read_input_file(fifo, "route file");
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.error(), "route file " + fifo + " is not a regular file (a device, FIFO or socket)");
  std::filesystem::remove(fifo);
  EXPECT_EQ(read_input_file("/dev/zero", "SA file").error(),
            "SA file /dev/zero is not a regular file (a device, FIFO or socket)");
  EXPECT_EQ(read_input_file("/tmp", "name file").error(), "name file /tmp is a directory");
  const std::string big = testing::temp_path("big");
  {
    std::FILE* out = std::fopen(big.c_str(), "wb");
    std::fputs("0123456789", out);
    std::fclose(out);
  }
  EXPECT_EQ(read_input_file(big, "rule file", 10).value(), "0123456789");
  EXPECT_EQ(read_input_file(big, "rule file", 9).error(),
            "rule file " + big + " is larger than 9 bytes");
  std::filesystem::remove(big);
}

TEST(InputFile, ErrorsQuoteAnExcerptNeverTheWholeText) {
  EXPECT_EQ(quote_excerpt("10.0.0.0/8 x"), "'10.0.0.0/8 x'");
  EXPECT_EQ(quote_excerpt(std::string_view("a\0\x01\xff\tb", 6)), "'a\\x00\\x01\\xff\\tb'");
  const std::string long_line(100000, 'z');
  EXPECT_EQ(quote_excerpt(long_line, 4), "'zzzz'... (100000 bytes)");
  EXPECT_LT(quote_excerpt(long_line).size(), 120u);
}

TEST(TableFile, OverlongLinesAndNulBytesAreRefusedAtTheirLine) {
  const std::string path = testing::temp_path("table");
  auto write = [&](const std::string& text) {
    std::FILE* out = std::fopen(path.c_str(), "wb");
    std::fwrite(text.data(), 1, text.size(), out);
    std::fclose(out);
  };
  write("10.0.0.0/8 1\n" + std::string(kMaxTableLineBytes, '1') + "\n");
  EXPECT_TRUE(read_table_file(path, "route file").ok());
  write("10.0.0.0/8 1\n\n" + std::string(kMaxTableLineBytes + 1, '1') + "\n");
  EXPECT_EQ(read_table_file(path, "route file").error(),
            path + ":3: line is 65537 bytes long, more than the limit of 64 KiB");
  write(std::string("10.0.0.0/8 1\n10.1.0.0/16 \0\n", 27));
  EXPECT_EQ(read_table_file(path, "route file").error(),
            path + ":2:13: a NUL byte: route file must be text");
  std::filesystem::remove(path);
}

TEST(OutputFile, CheckedWithoutBeingCreated) {
  const std::string fresh = testing::temp_path("fresh.json");
  EXPECT_TRUE(check_output_file(fresh, "--stats-json file").ok());
  EXPECT_FALSE(std::filesystem::exists(fresh)) << "checking must not create the file";
  EXPECT_EQ(check_output_file("/tmp", "capture file").error(),
            "cannot write capture file /tmp: it is a directory");
  EXPECT_EQ(check_output_file("/no-such-folder/x.pcap", "capture file").error(),
            "cannot write capture file /no-such-folder/x.pcap: folder /no-such-folder/: No such "
            "file or directory");
  const std::string file_as_folder = testing::temp_path("plain");
  std::FILE* f = std::fopen(file_as_folder.c_str(), "w");
  ASSERT_NE(f, nullptr);
  std::fclose(f);
  EXPECT_EQ(check_output_file(file_as_folder + "/x", "capture file").error(),
            "cannot write capture file " + file_as_folder + "/x: Not a directory");
  EXPECT_TRUE(check_output_file(file_as_folder, "capture file").ok()) << "an existing file";
  std::filesystem::remove(file_as_folder);
}

ids::PacketView view_of(const std::vector<uint8_t>& f, ids::ParseResult& r) {
  ids::PacketView v;
  r = ids::parse_packet(f.data(), static_cast<uint32_t>(f.size()), v);
  return v;
}

TEST(AlertLog, WriteFailuresCountLostAlerts) {
  Result<std::unique_ptr<ids::AlertLog>> log = ids::AlertLog::open("/dev/full");  // ENOSPC
  ASSERT_TRUE(log.ok()) << log.error();
  const std::vector<uint8_t> f = testing::ipv4_udp_frame(0x0A000001, 0x0A000002);
  ids::ParseResult r;
  const ids::PacketView v = view_of(f, r);
  ASSERT_EQ(r, ids::ParseResult::kOk);
  ids::Rule rule;
  rule.sid = 1;
  rule.msg = "x";
  for (int i = 0; i < 5; ++i) log.value()->write(rule, static_cast<uint64_t>(i), v);
  EXPECT_FALSE(log.value()->flush());
  EXPECT_EQ(log.value()->lost(), 5u);
  EXPECT_EQ(log.value()->first_error(), std::strerror(ENOSPC));
  log.value()->write(rule, 5, v);
  log.value()->flush();
  EXPECT_EQ(log.value()->lost(), 6u);
}

TEST(AlertLog, PseudoFileSystemsAreRefused) {
  Result<std::unique_ptr<ids::AlertLog>> log = ids::AlertLog::open("/proc/self/comm");
  ASSERT_FALSE(log.ok());
  EXPECT_EQ(log.error(), "alert log /proc/self/comm is in a kernel pseudo file system");
}

// Suricata marks a UDP length other than the IP payload's invalid and does not inspect it.
TEST(IdsPacketView, UdpLengthMustMatchTheIpPayload) {
  std::vector<uint8_t> f = testing::ipv4_udp_frame(0x0A000001, 0x0A000002);
  constexpr size_t kUdpLen = 14 + 20 + 4, kIpFlags = 14 + 6;
  const uint16_t right = static_cast<uint16_t>((f[kUdpLen] << 8) | f[kUdpLen + 1]);
  ids::ParseResult r;
  view_of(f, r);
  EXPECT_EQ(r, ids::ParseResult::kOk);
  for (uint16_t len : {uint16_t(right - 1), uint16_t(right + 1), uint16_t(0), uint16_t(8)}) {
    std::vector<uint8_t> g = f;
    g[kUdpLen] = static_cast<uint8_t>(len >> 8), g[kUdpLen + 1] = static_cast<uint8_t>(len);
    view_of(g, r);
    EXPECT_EQ(r, ids::ParseResult::kBadUdpLength) << len;
  }
  // A first fragment carries part of a longer datagram; a shorter length is still invalid.
  std::vector<uint8_t> g = f;
  g[kIpFlags] |= 0x20;
  g[kUdpLen] = static_cast<uint8_t>((right + 100) >> 8),
  g[kUdpLen + 1] = static_cast<uint8_t>(right + 100);
  view_of(g, r);
  EXPECT_EQ(r, ids::ParseResult::kOk);
  g[kUdpLen] = 0, g[kUdpLen + 1] = 8;
  view_of(g, r);
  EXPECT_EQ(r, ids::ParseResult::kBadUdpLength);
}

// Holds the first batch it sees until the watchdog has reported the worker (released by the
// test's on_stall): whatever the load, the worker cannot make progress before that.
std::atomic<bool> g_release{false};

class StallUntilReleased final : public ElementBase<StallUntilReleased> {
 public:
  static constexpr ElementTraits kTraits{"StallUntilReleased", 1, 1, {}};
  Status configure(Args& args) override { return args.finish(); }
  void process_batch(PacketBatch&) override {
    while (!g_release.load()) std::this_thread::yield();
  }
};
FULCRUM_REGISTER_ELEMENT(StallUntilReleased);

long max_rss_kib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_maxrss;
}

TEST(TableMemory, LargerThanTheMachineIsRefusedWithItsSize) {
  const size_t phys = TableMemory::physical_memory();
  ASSERT_GT(phys, 0u);
  EXPECT_EQ(TableMemory::allocate(phys + 1, "too-big"), nullptr);
  EXPECT_EQ(TableMemory::allocation_error(phys + 1, "the fingerprint table"),
            "cannot allocate " + std::to_string(phys + 1) +
                " bytes for the fingerprint table (more than this machine's " +
                std::to_string(phys) + " bytes of memory)");
  constexpr size_t kMaxStore = size_t{1} << 36;  // RedundancyElim's STORE limit, 64 GiB
  if (phys < kMaxStore) {
    const std::string err =
        testing::config_error("RedundancyElim", {"STORE " + std::to_string(kMaxStore)});
    EXPECT_NE(err.find("for the packet store (more than this machine's"), std::string::npos) << err;
  }
}

TEST(TableMemory, LargeTablesAreZeroAndCommittedOnlyWhereTouched) {
  constexpr size_t kTouchedPages = 16;
  constexpr long kSlackKib = 64 << 10;
  const size_t bytes = std::min(size_t{4} << 30, TableMemory::physical_memory() / 2);
  const long before = max_rss_kib();
  auto m = TableMemory::allocate(bytes, "lazy");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(m->data()) % (size_t{2} << 20), 0u);
  auto* p = static_cast<volatile uint8_t*>(m->data());
  for (size_t i = 0; i < kTouchedPages; ++i) {
    const size_t at = i * (bytes / kTouchedPages);
    EXPECT_EQ(p[at], 0) << at;
    p[at] = 1;
  }
  EXPECT_EQ(p[bytes - 1], 0);
  EXPECT_LT(max_rss_kib() - before, kSlackKib);
}

// A run of `packets` generated frames through `text` (named `file`), transmitted to net_null.
RunOptions generated_run(const std::string& file, const std::string& text, uint64_t packets,
                         double watchdog_s) {
  RunOptions opt;
  opt.pipeline_file = file;
  opt.pipeline_text = text;
  opt.ports = {"gen:size=64", "net_null0,no-rx=1"};
  opt.packets = packets;
  opt.watchdog_s = watchdog_s;
  return opt;
}

TEST(Watchdog, ReportsTheStalledWorkerAndTheElementItIsIn) {
  g_release = false;
  RunOptions opt =
      generated_run("watchdog.click",
                    "FromInput -> NoOp -> stuck :: StallUntilReleased -> ToOutput;", 1000, 0.05);
  std::vector<std::string> notes;
  opt.on_stall = [&](int worker, const std::string& note) {
    notes.push_back(std::to_string(worker) + ": " + note);
    g_release = true;
  };
  Result<RunReport> r = run(opt);
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_EQ(notes[0], "0: in element 'stuck' (StallUntilReleased) at watchdog.click:1:22");
  EXPECT_EQ(r->stalls, 1u);
  EXPECT_TRUE(r->balanced());
  EXPECT_EQ(r->packets_in, 1000u);
}

// Records the worker's heartbeat at every batch it sees.
std::vector<uint64_t> g_beats;

class HeartbeatProbe final : public ElementBase<HeartbeatProbe> {
 public:
  static constexpr ElementTraits kTraits{"HeartbeatProbe", 1, 1, {}};
  Status configure(Args& args) override { return args.finish(); }
  void process_batch(PacketBatch&) override {
    g_beats.push_back(t_heartbeat == nullptr ? 0 : t_heartbeat->load());
  }
};
FULCRUM_REGISTER_ELEMENT(HeartbeatProbe);

// The worker beats once per loop: every batch it receives sees a higher count than the last.
TEST(Watchdog, WorkerBeatsEveryLoop) {
  g_beats.clear();
  Result<RunReport> r =
      run(generated_run("beats.click", "FromInput -> HeartbeatProbe -> ToOutput;", 640, 0));
  ASSERT_TRUE(r.ok()) << r.error();
  ASSERT_EQ(g_beats.size(), 10u);
  for (size_t i = 0; i < g_beats.size(); ++i) {
    EXPECT_GT(g_beats[i], 0u);
    if (i > 0) {
      EXPECT_GT(g_beats[i], g_beats[i - 1]);
    }
  }
}

// The thread that initialized the last replica of the element, and the one that ran its batches.
std::thread::id g_init_thread, g_run_thread;

class ThreadProbe final : public ElementBase<ThreadProbe> {
 public:
  static constexpr ElementTraits kTraits{"ThreadProbe", 1, 1, {}};
  Status configure(Args& args) override { return args.finish(); }
  Status initialize(const InitContext&) override {
    g_init_thread = std::this_thread::get_id();
    return {};
  }
  void process_batch(PacketBatch&) override { g_run_thread = std::this_thread::get_id(); }
};
FULCRUM_REGISTER_ELEMENT(ThreadProbe);

// A worker's replica is made on the lcore that runs it, so that it comes from that thread's
// own malloc arena and shares no cache line with another worker's replica.
TEST(Runtime, AWorkersPipelineIsMadeOnTheThreadThatRunsIt) {
  g_init_thread = g_run_thread = std::thread::id();
  Result<RunReport> r =
      run(generated_run("thread.click", "FromInput -> ThreadProbe -> ToOutput;", 640, 0));
  ASSERT_TRUE(r.ok()) << r.error();
  EXPECT_NE(g_run_thread, std::thread::id());
  EXPECT_EQ(g_init_thread, g_run_thread);
  EXPECT_NE(g_init_thread, std::this_thread::get_id());
}

}  // namespace
}  // namespace fulcrum
