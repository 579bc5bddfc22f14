#include "plan/measure_machine.hh"

#include <pthread.h>
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_lcore.h>
#include <rte_prefetch.h>
#include <rte_ring.h>
#include <sched.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <random>
#include <thread>
#include <vector>

#include "core/median.hh"
#include "core/packet_reads.hh"
#include "io/eal.hh"

namespace fulcrum::plan {
namespace {

constexpr size_t kKiB = 1024;
// Accesses per chase: enough to take tens of milliseconds out of memory, many passes in L1.
constexpr size_t kMinAccesses = 100000;
constexpr size_t kMaxAccesses = 400000;
constexpr unsigned kParallelChains = 64;
// The group reads (MemoryLatency::group_*_line_cycles): random lines per run, runs per group
// (the median is kept: a run during which the thread was preempted is an outlier).
constexpr size_t kGroupLineReads = 1u << 19;
constexpr int kGroupLineRuns = 5;
constexpr double kTscMeasureS = 0.05;
constexpr unsigned kRingSize = 4096;
constexpr unsigned kRingPackets = 2048;       // packets circulating between the two cores
constexpr uint64_t kRingHandOffs = 1u << 21;  // packets handed over per measurement
constexpr size_t kPacketBytes = 128;          // an mbuf header and the packet's first line
constexpr unsigned kSmallBurstDivisor = 8;    // the second burst size: batch / 8
// The frame-line measurement (RingCost::line_read_cycles): frames of kFrameLines lines (the
// hand-off reference's largest frame, 512 B), fewer hand-offs (each moves up to 8 lines).
constexpr unsigned kFrameLines = 8;
constexpr uint64_t kFrameHandOffs = kRingHandOffs / 32;
constexpr size_t kFrameStride = 2176;  // an mbuf of DPDK's default data room and headroom
// The work a payload reader does on each 64-byte line: IDSMatch's Hyperscan scan of
// configs/ids-rules-demo.rules costs about 200 cycles for a 512 B frame's 470 payload bytes
// (0.4 a byte, 27 a line); a cipher or a MAC does more.
constexpr unsigned kPayloadWorkCycles = 24;

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string s;
  std::getline(in, s);
  return s;
}

// "32K", "1024K", "32M" -> bytes; 0 when unreadable.
size_t parse_size(const std::string& s) {
  size_t v = 0, i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + static_cast<size_t>(s[i++] - '0');
  if (i == 0) return 0;
  if (i < s.size() && (s[i] == 'K' || s[i] == 'k')) return v * kKiB;
  if (i < s.size() && (s[i] == 'M' || s[i] == 'm')) return v * kKiB * kKiB;
  if (i < s.size() && (s[i] == 'G' || s[i] == 'g')) return v * kKiB * kKiB * kKiB;
  return v;
}

// CPUs in a list such as "0-3,8"; an item that does not parse counts as one.
unsigned count_cpus(const std::string& list) {
  unsigned n = 0;
  size_t pos = 0;
  while (pos < list.size()) {
    const size_t comma = std::min(list.find(',', pos), list.size());
    const std::string part = list.substr(pos, comma - pos);
    const size_t dash = part.find('-');
    unsigned lo = 0, hi = 0;
    const bool range =
        dash != std::string::npos &&
        std::from_chars(part.data(), part.data() + dash, lo).ec == std::errc() &&
        std::from_chars(part.data() + dash + 1, part.data() + part.size(), hi).ec == std::errc() &&
        hi >= lo;
    n += range ? hi - lo + 1 : (part.empty() ? 0 : 1);
    pos = comma + 1;
  }
  return n;
}

struct Mapping {
  void* p = MAP_FAILED;
  size_t n = 0;
  explicit Mapping(size_t bytes) : n(bytes) {
    p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED) madvise(p, n, MADV_HUGEPAGE);
  }
  ~Mapping() {
    if (p != MAP_FAILED) munmap(p, n);
  }
  Mapping(const Mapping&) = delete;
  Mapping& operator=(const Mapping&) = delete;
};

bool pin_to(unsigned cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// One side of the hand-off: cycles per packet of each burst it moved. The median is kept: a
// burst during which the thread was preempted (the machine is shared) is an outlier, not a cost.
struct alignas(64) Side {
  std::vector<float> per_packet;
  uint64_t packets = 0;
  void add(uint64_t cycles, unsigned n) {
    per_packet.push_back(static_cast<float>(cycles) / static_cast<float>(n));
    packets += n;
  }
  double median() { return median_in_place(per_packet); }
};

// What each side does with a packet in one ring measurement: the plain ring's (2 lines, the
// producer writes both, the consumer reads and writes both) or a frame's (the producer writes
// every line, the consumer reads and writes the first two and, `whole`, reads the rest).
// Frames `stride` bytes apart (0: packed), handed out in a shuffled order (`shuffled`), as
// mbufs from a mempool are: no stream of lines from one frame to the next for the hardware
// prefetchers to follow (packed frames in order let them fetch the next frame's lines ahead).
struct Touch {
  size_t line_bytes = kPacketBytes / 2;
  unsigned lines = 2;  // of each packet
  bool whole = false;  // the consumer reads every line (else the first two)
  bool scan = false;   // as a payload scanner: work on every line, the lines asked for ahead
  uint64_t handoffs = kRingHandOffs;
  size_t stride = 0;
  bool shuffled = false;
  size_t packet_bytes() const { return line_bytes * lines; }
  size_t frame_stride() const { return stride > 0 ? stride : packet_bytes(); }
};

void touch(void* pkt, uint64_t v, size_t line_bytes) {
  auto* w = static_cast<uint64_t*>(pkt);
  w[0] += v;
  w[line_bytes / sizeof(uint64_t)] += v;
}

void produce_frame(void* pkt, const Touch& t) {
  auto* b = static_cast<uint8_t*>(pkt);
  for (unsigned l = 0; l < t.lines; ++l) *reinterpret_cast<uint64_t*>(b + l * t.line_bytes) += 1;
}

// The lines a scanning consumer reads beyond the first two, asked for ahead as the runtime's
// whole-frame readers do (kWholeFrameReadAhead).
void prefetch_tail(void* pkt, const Touch& t) {
  const auto* b = static_cast<const uint8_t*>(pkt);
  for (unsigned l = 2; l < t.lines; ++l) rte_prefetch0(b + l * t.line_bytes);
}

// The scanning consumer's work on each line beyond the first two: a dependent chain of
// multiply-adds of about kPayloadWorkCycles (4 cycles each).
void payload_work(uint64_t& acc) {
  for (unsigned k = 0; k < kPayloadWorkCycles / 4; ++k) {
    acc = acc * 3 + 1;
    asm volatile("" : "+r"(acc));
  }
}

// Touch::scan: the consumer works on each line beyond the first two and, with Touch::whole,
// reads it first; the lines were asked for kWholeFrameReadAhead packets ahead, so their transfers
// from the other core overlap the work on the packets before, as a payload scanner's do.
// Otherwise its reads of those lines are made one after the other (each load's address depends
// on the previous load, across packets too): each line's transfer is waited for.
void consume_frame(void* pkt, const Touch& t, uint64_t& chain) {
  touch(pkt, 2, t.line_bytes);
  const auto* b = static_cast<const uint8_t*>(pkt);
  if (t.scan) {
    for (unsigned l = 2; l < t.lines; ++l) {
      if (t.whole) chain += *reinterpret_cast<const volatile uint64_t*>(b + l * t.line_bytes);
      payload_work(chain);
    }
    return;
  }
  if (!t.whole) return;
  uint64_t zero = 0;
  asm volatile("" : "+r"(zero));  // 0, which the compiler cannot know: the dependence stays
  for (unsigned l = 2; l < t.lines; ++l)
    chain = *reinterpret_cast<const volatile uint64_t*>(b + l * t.line_bytes + (chain & zero));
}

}  // namespace

Result<MachineInfo> read_machine_info(const std::string& dir) {
  MachineInfo m;
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  m.cpus = online > 0 ? static_cast<unsigned>(online) : 1;
  m.tsc_hz = tsc_hz();
  for (int i = 0;; ++i) {
    const std::string idx = dir + "/index" + std::to_string(i);
    std::ifstream probe(idx + "/level");
    if (!probe) {
      if (i == 0) return make_error("cannot read " + idx + "/level: no cache information");
      break;
    }
    const int level = std::atoi(read_line(idx + "/level").c_str());
    const std::string type = read_line(idx + "/type");
    const size_t size = parse_size(read_line(idx + "/size"));
    if (type == "Instruction") continue;
    if (size == 0) return make_error("cannot read a size in " + idx + "/size");
    if (const size_t line = parse_size(read_line(idx + "/coherency_line_size")); line > 0)
      m.line_bytes = line;
    if (level == 1) m.l1d_bytes = size;
    if (level == 2) m.l2_bytes = size;
    if (level >= 2 && size >= m.llc_bytes) {
      m.llc_bytes = size;
      m.llc_sysfs_bytes = size;
      m.llc_shared_cpus = std::max(1u, count_cpus(read_line(idx + "/shared_cpu_list")));
    }
  }
  if (m.l1d_bytes == 0) return make_error(dir + ": no level-1 data cache listed");
  if (m.l2_bytes == 0) m.l2_bytes = m.l1d_bytes;
  if (m.llc_bytes < m.l2_bytes) m.llc_bytes = m.l2_bytes;
  m.llc_sysfs_bytes = m.llc_bytes;
  return m;
}

double tsc_hz() {
  if (eal_ready()) return static_cast<double>(rte_get_tsc_hz());
  using Clock = std::chrono::steady_clock;
  const auto t0 = Clock::now();
  const uint64_t c0 = rte_rdtsc();
  while (std::chrono::duration<double>(Clock::now() - t0).count() < kTscMeasureS) {
  }
  const uint64_t c1 = rte_rdtsc();
  return static_cast<double>(c1 - c0) / std::chrono::duration<double>(Clock::now() - t0).count();
}

double chase_cycles(size_t bytes, size_t line_bytes, unsigned chains) {
  line_bytes = std::max(line_bytes, sizeof(void*));
  const size_t lines = std::max<size_t>(bytes / line_bytes, 2 * chains);
  Mapping map(lines * line_bytes);
  if (map.p == MAP_FAILED) return 0;
  auto* base = static_cast<uint8_t*>(map.p);
  // A random cycle through every line (Sattolo), so the hardware prefetchers cannot follow it.
  std::vector<uint32_t> order(lines);
  for (size_t i = 0; i < lines; ++i) order[i] = static_cast<uint32_t>(i);
  std::mt19937_64 rng(lines);
  for (size_t i = lines - 1; i > 0; --i) std::swap(order[i], order[rng() % i]);
  for (size_t i = 0; i < lines; ++i) {
    void* next = base + size_t{order[(i + 1) % lines]} * line_bytes;
    std::memcpy(base + size_t{order[i]} * line_bytes, &next, sizeof next);
  }
  std::vector<void*> at(chains);
  for (unsigned c = 0; c < chains; ++c)
    at[c] = base + size_t{order[c * (lines / chains)]} * line_bytes;
  const size_t accesses = std::clamp(lines * 2, kMinAccesses, kMaxAccesses) / chains;
  auto run = [&](size_t n) {
    for (size_t i = 0; i < n; ++i)
      for (unsigned c = 0; c < chains; ++c) at[c] = *static_cast<void**>(at[c]);
  };
  run(std::min(accesses, lines));  // warm the caches (and the TLB) that can hold it
  const uint64_t t0 = rte_rdtsc_precise();
  run(accesses);
  const uint64_t t1 = rte_rdtsc_precise();
  // Keep the chase alive.
  uintptr_t sink = 0;
  for (void* p : at) sink ^= reinterpret_cast<uintptr_t>(p);
  asm volatile("" : : "r"(sink));
  return static_cast<double>(t1 - t0) / static_cast<double>(accesses * chains);
}

void measure_group_reads(size_t bytes, size_t line_bytes, MemoryLatency& lat) {
  line_bytes = std::max(line_bytes, sizeof(uint64_t));
  const size_t lines = std::max<size_t>(bytes / line_bytes, 2 * kGroupLineReads);
  Mapping map(lines * line_bytes);
  if (map.p == MAP_FAILED) return;
  auto* base = static_cast<uint8_t*>(map.p);
  for (size_t i = 0; i < lines; ++i) base[i * line_bytes] = static_cast<uint8_t>(i);
  std::vector<uint32_t> order(kGroupLineReads);
  std::mt19937_64 rng(lines);
  for (uint32_t& o : order) o = static_cast<uint32_t>(rng() % lines);
  auto line = [&](size_t i) { return base + size_t{order[i]} * line_bytes; };
  // Cycles per line of one pass over `order` in groups of `group`.
  auto pass = [&](size_t group, bool ahead) {
    const size_t n = kGroupLineReads / group * group;
    auto prefetch = [&](size_t begin) {
      for (size_t j = begin; j < std::min(n, begin + group); ++j) rte_prefetch0(line(j));
    };
    uint64_t sink = 0;
    const uint64_t t0 = rte_rdtsc_precise();
    if (ahead) prefetch(0);
    for (size_t i = 0; i < n; i += group) {
      prefetch(ahead ? i + group : i);
      for (size_t j = i; j < i + group; ++j)
        sink += *reinterpret_cast<const volatile uint8_t*>(line(j));
    }
    const uint64_t t1 = rte_rdtsc_precise();
    asm volatile("" : : "r"(sink));
    return static_cast<double>(t1 - t0) / static_cast<double>(n);
  };
  for (size_t g = 0; g < kProbedGroups; ++g)
    for (bool ahead : {true, false}) {
      std::vector<double> runs;
      for (int r = 0; r < kGroupLineRuns; ++r) runs.push_back(pass(size_t{1} << g, ahead));
      (ahead ? lat.group_ahead_line_cycles : lat.group_within_line_cycles)[g] =
          median_in_place(runs);
    }
}

MemoryLatency measure_memory_latency(MachineInfo& m) {
  MemoryLatency lat;
  const size_t line = m.line_bytes;
  lat.l1_cycles = chase_cycles(m.l1d_bytes / 2, line);
  lat.l2_cycles = std::max(lat.l1_cycles, chase_cycles(m.l2_bytes / 2, line));
  const size_t dram = 4 * m.llc_sysfs_bytes;
  lat.dram_cycles = std::max(lat.l2_cycles, chase_cycles(dram, line));
  // The LLC as this core sees it: the largest buffer (doubling from twice L2 up to what sysfs
  // says) whose chase stays under the midpoint of the L2 and memory latencies. On a shared or
  // virtual machine it can be far below the sysfs size.
  const double threshold = (lat.l2_cycles + lat.dram_cycles) / 2;
  m.llc_bytes = m.l2_bytes;
  lat.llc_cycles = lat.l2_cycles;
  for (size_t b = 2 * m.l2_bytes; b <= m.llc_sysfs_bytes; b *= 2) {
    const double c = chase_cycles(b, line);
    if (c > threshold) break;
    m.llc_bytes = b;
    lat.llc_cycles = std::max(lat.l2_cycles, c);
  }
  lat.dram_cycles = std::max(lat.llc_cycles, lat.dram_cycles);
  const double parallel = chase_cycles(dram, line, kParallelChains);
  lat.parallel_misses =
      parallel > 0 ? std::clamp(lat.dram_cycles / parallel, 1.0, double{kParallelChains}) : 1;
  measure_group_reads(dram, line, lat);
  return lat;
}

namespace {

// A single-producer single-consumer rte_ring in this process's own memory (rte_ring_init), not
// the EAL's: the bench measures the ring hundreds of times between runs whose packet pools need
// all of the EAL's memory, and a memzone per measurement fragmented it.
class OwnRing {
 public:
  explicit OwnRing(const char* name) {
    const ssize_t bytes = rte_ring_get_memsize(kRingSize);
    if (bytes <= 0) return;
    const size_t rounded =
        (static_cast<size_t>(bytes) + RTE_CACHE_LINE_SIZE - 1) & ~size_t{RTE_CACHE_LINE_SIZE - 1};
    void* mem = std::aligned_alloc(RTE_CACHE_LINE_SIZE, rounded);
    if (mem == nullptr) return;
    ring_ = static_cast<rte_ring*>(mem);
    if (rte_ring_init(ring_, name, kRingSize, RING_F_SP_ENQ | RING_F_SC_DEQ) != 0) {
      std::free(mem);
      ring_ = nullptr;
    }
  }
  ~OwnRing() { std::free(ring_); }
  OwnRing(const OwnRing&) = delete;
  OwnRing& operator=(const OwnRing&) = delete;
  rte_ring* get() const { return ring_; }

 private:
  rte_ring* ring_ = nullptr;
};

// The hand-off at one burst size (measure_ring).
Result<RingCost> ring_at(unsigned batch, unsigned cpus, const Touch& t = Touch{}) {
  batch = std::clamp(batch, 1u, kRingPackets / 4);
  OwnRing fwd_ring("plan_fwd"), back_ring("plan_back");
  rte_ring* fwd = fwd_ring.get();
  rte_ring* back = back_ring.get();
  if (fwd == nullptr || back == nullptr)
    return make_error("cannot create an rte_ring for the hand-off measurement");
  std::vector<uint8_t> storage(size_t{kRingPackets} * t.frame_stride() + 64);
  auto* first = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(storage.data()) + 63) &
                                           ~uintptr_t{63});
  std::vector<void*> free_list;
  for (unsigned i = 0; i < kRingPackets; ++i)
    free_list.push_back(first + size_t{i} * t.frame_stride());
  if (t.shuffled) std::shuffle(free_list.begin(), free_list.end(), std::mt19937_64(kRingPackets));

  RingCost cost;
  cost.batch = batch;
  // Producer step: take back returned buffers, write each packet, enqueue one burst.
  auto produce = [&](Side& s, std::vector<void*>& pool) {
    void* got[kRingPackets / 4];
    const uint64_t t0 = rte_rdtsc();
    const unsigned r = rte_ring_sc_dequeue_burst(back, got, batch, nullptr);
    for (unsigned i = 0; i < r; ++i) pool.push_back(got[i]);
    const unsigned n = std::min<unsigned>(batch, static_cast<unsigned>(pool.size()));
    if (n == 0) return;
    void** burst = pool.data() + pool.size() - n;
    for (unsigned i = 0; i < n; ++i) produce_frame(burst[i], t);
    const unsigned sent = rte_ring_sp_enqueue_burst(fwd, burst, n, nullptr);
    pool.resize(pool.size() - sent);
    if (sent == 0) return;
    s.add(rte_rdtsc() - t0, sent);
  };
  // Consumer step: dequeue a burst, read and write each packet, return the buffers.
  uint64_t chain = 0;
  auto consume = [&](Side& s) {
    void* got[kRingPackets / 4];
    const uint64_t t0 = rte_rdtsc();
    const unsigned n = rte_ring_sc_dequeue_burst(fwd, got, batch, nullptr);
    if (n == 0) return;
    const bool ahead = t.scan && t.whole;
    if (ahead)
      for (unsigned i = 0; i < std::min(n, kWholeFrameReadAhead); ++i) prefetch_tail(got[i], t);
    for (unsigned i = 0; i < n; ++i) {
      if (ahead && i + kWholeFrameReadAhead < n) prefetch_tail(got[i + kWholeFrameReadAhead], t);
      consume_frame(got[i], t, chain);
    }
    unsigned back_n = 0;
    while (back_n < n) back_n += rte_ring_sp_enqueue_burst(back, got + back_n, n - back_n, nullptr);
    s.add(rte_rdtsc() - t0, n);
  };

  {  // Both sides on this core: the baseline without a hand-off between caches.
    Side p, c;
    std::vector<void*> pool = free_list;
    while (c.packets < t.handoffs / 8) {
      produce(p, pool);
      consume(c);
    }
    cost.same_core_cycles_per_packet = p.median() + c.median();
    // Drain what is left so the rings are empty for the next measurement.
    void* got[kRingPackets / 4];
    while (rte_ring_sc_dequeue_burst(fwd, got, batch, nullptr) > 0) {
    }
    while (rte_ring_sc_dequeue_burst(back, got, batch, nullptr) > 0) {
    }
  }

  Side p, c;
  if (cpus >= 2) {
    std::atomic<bool> done{false};
    std::thread consumer([&] {
      pin_to(1);
      while (!done.load(std::memory_order_relaxed)) consume(c);
    });
    std::thread producer([&] {
      pin_to(0);
      std::vector<void*> pool = free_list;
      while (p.packets < t.handoffs) produce(p, pool);
      done.store(true);
    });
    producer.join();
    consumer.join();
    cost.cross_core = true;
  } else {
    std::vector<void*> pool = free_list;
    while (c.packets < t.handoffs / 8) {
      produce(p, pool);
      consume(c);
    }
  }
  cost.enqueue_cycles_per_packet = p.median();
  cost.dequeue_cycles_per_packet = c.median();
  return cost;
}

}  // namespace

Result<RingCost> measure_ring(unsigned batch, unsigned cpus) {
  Result<RingCost> big = ring_at(batch, cpus);
  if (!big) return big;
  const unsigned small_batch = std::max(1u, big.value().batch / kSmallBurstDivisor);
  if (small_batch == big.value().batch) return big;
  Result<RingCost> small = ring_at(small_batch, cpus);
  if (!small) return small;
  // Per packet at burst B = a + b / B: b, the cost of a burst, from the two sizes.
  RingCost cost = big.value();
  const double inv = 1.0 / small_batch - 1.0 / cost.batch;
  cost.enqueue_cycles_per_burst = std::max(
      0.0, (small.value().enqueue_cycles_per_packet - cost.enqueue_cycles_per_packet) / inv);
  cost.dequeue_cycles_per_burst = std::max(
      0.0, (small.value().dequeue_cycles_per_packet - cost.dequeue_cycles_per_packet) / inv);
  if (Status st = measure_frame_lines(cost, cpus); !st) return make_error(st.error());
  return cost;
}

Status measure_frame_lines(RingCost& cost, unsigned cpus) {
  if (!cost.cross_core || cpus < 2) return {};
  // The same frames, the consumer reading the first two lines or all of them: the difference is
  // the extra lines' cost on each side (the producer's: writing them again once read); once with
  // dependent reads, once scanned (Touch::scan).
  struct PerLine {
    double consumer = 0, producer = 0;
  };
  auto per_line = [&](bool scan) -> Result<PerLine> {
    Touch head{.lines = kFrameLines,
               .whole = false,
               .scan = scan,
               .handoffs = kFrameHandOffs,
               .stride = kFrameStride,
               .shuffled = true};
    Touch whole = head;
    whole.whole = true;
    Result<RingCost> a = ring_at(cost.batch, cpus, head);
    if (!a) return make_error(a.error());
    Result<RingCost> b = ring_at(cost.batch, cpus, whole);
    if (!b) return make_error(b.error());
    const double extra = kFrameLines - 2;
    return PerLine{
        std::max(0.0, (b.value().dequeue_cycles_per_packet - a.value().dequeue_cycles_per_packet) /
                          extra),
        std::max(0.0, (b.value().enqueue_cycles_per_packet - a.value().enqueue_cycles_per_packet) /
                          extra)};
  };
  Result<PerLine> read = per_line(false);
  if (!read) return make_error(read.error());
  Result<PerLine> scanned = per_line(true);
  if (!scanned) return make_error(scanned.error());
  cost.line_read_cycles = read.value().consumer;
  cost.line_rewrite_cycles = read.value().producer;
  cost.line_scan_cycles = scanned.value().consumer;
  return {};
}

}  // namespace fulcrum::plan
