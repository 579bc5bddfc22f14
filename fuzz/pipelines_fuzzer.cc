// Fuzz target: every shipped pipeline (configs/*.click, with the tables they name) on
// fuzzer-made frames, as a worker runs it: a burst injected at FromInput, deferred packets
// polled, the pipeline drained. Built with ASan + UBSan.
//
// Input: byte 0 picks the pipeline (index into the sorted configs/*.click, modulo their number);
// then frames, each a 3-byte header and its bytes: header byte 0 holds the input port in its low
// two bits, bytes 1-2 the frame length (big endian; cut to what is left of the input and to
// kMaxFrameLen). Frames go in bursts of kBurst.
//
// Checked after every input, per pipeline (the packet-conservation invariant the runtime checks):
//   injected + created == transmitted + dropped, and no packet is still held;
// every transmitted mbuf passes rte_mbuf_check; every mbuf taken from the pool came back.
//
// Changes to the shipped files, so that the fuzzer writes nothing and starts no device work:
//   * ALERTS paths become /dev/null (the alert log is still written);
//   * offload pipelines (*-offload.click) get CPUOnly in place of DeviceOnly: the offload
//     elements run their CPU functions (the offload service still starts, finding PoCL's
//     device, but no batch goes to it). FULCRUM_FUZZ_SKIP_OFFLOAD=1 leaves them out.
// Element state (L2Switch's table, RedundancyElim's cache, sequence numbers) carries over from
// one input to the next, as in a run.
#include <dirent.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "core/config/ast.hh"
#include "core/graph.hh"
#include "core/registry.hh"
#include "core/shared_storage.hh"
#include "fuzz_support.hh"

namespace {

using namespace fulcrum;

constexpr int kPorts = 4;
constexpr uint32_t kBurst = 64;
constexpr uint32_t kMaxFrameLen = 2048;  // one mbuf's data room (io/mempool.hh)
constexpr uint32_t kFrameHeader = 3;
constexpr uint8_t kInPortMask = kPorts - 1;
constexpr uint64_t kDrainLimitNs = 10'000'000'000;  // a held packet must come back within 10 s
constexpr uint64_t kNsPerS = 1'000'000'000;

class CountingSink final : public PacketSink {
 public:
  void transmit(PacketBatch& batch) override {
    batch.for_each([&](uint32_t, Packet* p) {
      const char* reason = nullptr;
      FUZZ_CHECK(rte_mbuf_check(p, 1, &reason) == 0,
                 std::string("transmitted a broken mbuf: ") + (reason ? reason : "?"));
      ++sent;
      rte_pktmbuf_free(p);
    });
    batch.set_count(0);
  }
  uint64_t sent = 0;
};

struct Loaded {
  std::string file;
  std::unique_ptr<SharedStorage> shared;
  std::unique_ptr<CountingSink> sink;
  std::unique_ptr<Pipeline> pipe;
};

std::vector<Loaded>& pipelines() {
  static std::vector<Loaded> all;
  return all;
}

uint64_t now_ns() {
  return static_cast<uint64_t>(static_cast<double>(rte_rdtsc()) * kNsPerS /
                               static_cast<double>(rte_get_tsc_hz()));
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string fuzz_version(const std::string& file, std::string text) {
  text = std::regex_replace(text, std::regex(R"(ALERTS\s+[^,)\s]+)"), "ALERTS /dev/null");
  if (file.ends_with("-offload.click"))
    text = std::regex_replace(text, std::regex(R"(\bDeviceOnly\b)"), "CPUOnly");
  return text;
}

void load_all() {
  const bool skip_offload = std::getenv("FULCRUM_FUZZ_SKIP_OFFLOAD") != nullptr &&
                            std::string(std::getenv("FULCRUM_FUZZ_SKIP_OFFLOAD")) == "1";
  std::vector<std::string> files;
  DIR* dir = opendir("configs");
  FUZZ_CHECK(dir != nullptr, "no configs/ under " + std::string(fuzz::source_dir()));
  while (dirent* e = readdir(dir)) {
    const std::string name = e->d_name;
    if (!name.ends_with(".click")) continue;
    if (skip_offload && name.ends_with("-offload.click")) continue;
    files.push_back("configs/" + name);
  }
  closedir(dir);
  std::sort(files.begin(), files.end());
  for (const std::string& file : files) {
    Result<PipelineConfig> cfg =
        parse_pipeline(fuzz_version(file, read_file(file)), file,
                       [](std::string_view n) { return Registry::instance().find(n) != nullptr; });
    FUZZ_CHECK(cfg.ok(), cfg.ok() ? "" : cfg.error());
    Loaded l;
    l.file = file;
    l.shared = std::make_unique<SharedStorage>();
    l.sink = std::make_unique<CountingSink>();
    InitContext ctx;
    ctx.ports = kPorts;
    ctx.shared = l.shared.get();
    ctx.sink = l.sink.get();
    ctx.pool = fuzz::packet_pool();
    Result<std::unique_ptr<Pipeline>> p = Pipeline::build(cfg.value(), ctx, BranchMode::kReuse);
    FUZZ_CHECK(p.ok(), p.ok() ? "" : p.error());
    l.pipe = std::move(p.value());
    pipelines().push_back(std::move(l));
  }
  std::fprintf(stderr, "fuzz_pipelines: %zu pipelines loaded\n", pipelines().size());
}

Packet* make_packet(const uint8_t* bytes, uint32_t len, uint16_t in_port) {
  Packet* m = rte_pktmbuf_alloc(fuzz::packet_pool());
  FUZZ_CHECK(m != nullptr, "packet pool empty: packets leak");
  char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(len));
  FUZZ_CHECK(p != nullptr, "frame of " + std::to_string(len) + " bytes does not fit an mbuf");
  if (len > 0) std::memcpy(p, bytes, len);
  reset_anno(m, in_port);
  return m;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  FUZZ_CHECK(chdir(fuzz::source_dir()) == 0, std::string("cannot enter ") + fuzz::source_dir());
  fuzz::packet_pool();
  load_all();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  Loaded& l = pipelines()[data[0] % pipelines().size()];
  Pipeline& pipe = *l.pipe;
  rte_mempool* pool = fuzz::packet_pool();
  const unsigned in_use_before = rte_mempool_in_use_count(pool);
  const uint64_t sent_before = l.sink->sent, dropped_before = pipe.dropped(),
                 created_before = pipe.created();
  uint64_t injected = 0;
  PacketBatch batch;
  size_t pos = 1;
  while (pos < size) {
    batch.clear();
    while (pos < size && batch.count() < kBurst) {
      const uint8_t flags = data[pos];
      uint32_t len = 0;
      if (pos + 1 < size) len = data[pos + 1];
      if (pos + 2 < size) len = len << 8 | data[pos + 2];
      pos = std::min(size, pos + kFrameHeader);
      len = std::min({len, static_cast<uint32_t>(size - pos), kMaxFrameLen});
      batch.push(make_packet(data + pos, len, flags & kInPortMask));
      pos += len;
    }
    injected += batch.count();
    pipe.inject(batch);
    pipe.poll_deferred(now_ns());
  }
  // The end of the input, as a worker ends a run: what waits for more input is given up.
  pipe.drain();
  const uint64_t start = now_ns();
  while (pipe.held() > 0) {
    pipe.poll_deferred(now_ns());
    FUZZ_CHECK(now_ns() - start < kDrainLimitNs,
               l.file + ": " + std::to_string(pipe.held()) + " packets held after 10 s");
  }
  const uint64_t sent = l.sink->sent - sent_before, dropped = pipe.dropped() - dropped_before,
                 created = pipe.created() - created_before;
  FUZZ_CHECK(injected + created == sent + dropped,
             l.file + ": in " + std::to_string(injected) + " + created " + std::to_string(created) +
                 " != out " + std::to_string(sent) + " + dropped " + std::to_string(dropped));
  FUZZ_CHECK(rte_mempool_in_use_count(pool) == in_use_before,
             l.file + ": " + std::to_string(rte_mempool_in_use_count(pool)) +
                 " mbufs in use after the input, " + std::to_string(in_use_before) + " before");
  return 0;
}
