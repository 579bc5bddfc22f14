// The device thread on a real device (PoCL's OpenCL CPU device in CI): tasks submitted from two
// worker threads all come back exactly once with the CPU function's results; several tasks are
// in flight at once; with an injected device failure every task still comes back (failed ones
// are re-run on the CPU), the device is marked down, and nothing is lost. An idle device is
// released and taken back by the next task (on the emulated device here; on a GPU host, with
// FULCRUM_OFFLOAD_BACKEND=cuda, the CUDA context itself), its tables and buffers intact.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "elements/ip/ip_lookup_offload.hh"
#include "lib/dir24_8.hh"
#include "lib/route_table.hh"
#include "offload/device_thread.hh"
#include "offload/discovery.hh"
#include "offload/emu/emu_spec.hh"
#include "offload/failure_injection.hh"
#include "offload/ipv4_lookup.hh"
#include "offload/stage/task_pool.hh"
#include "testing.hh"

namespace fulcrum::offload {
namespace {

constexpr size_t kRoutes = 10000;
constexpr uint32_t kBatch = 64;
constexpr uint32_t kBatchesPerTask = 4;
constexpr uint32_t kTaskItems = kBatch * kBatchesPerTask;
constexpr uint32_t kTasksPerWorker = 8;
constexpr uint32_t kSubmissionsPerWorker = 60;
constexpr uint32_t kWorkers = 2;
constexpr uint32_t kQueues = 4;

const Dir24_8& table() {
  static const Dir24_8* t = [] {
    auto* d = new Dir24_8;
    for (const Route4& r : generate_routes4(kRoutes, 9, 64))
      EXPECT_TRUE(d->add(r.prefix, r.len, r.port).ok());
    EXPECT_TRUE(d->build().ok());
    return d;
  }();
  return *t;
}

std::unique_ptr<Device> opencl_device(std::optional<uint64_t> fail_after = std::nullopt) {
  DiscoverOptions o;
  o.only = Backend::kOpenCL;
  o.fail_after = fail_after;
  auto devs = discover_devices(o);
  if (devs.empty()) return nullptr;
  return std::move(devs.front());
}

#define REQUIRE_OPENCL_DEVICE(dev)                                                   \
  if (!backend_compiled(Backend::kOpenCL)) GTEST_SKIP() << "OpenCL not compiled in"; \
  ASSERT_NE(dev, nullptr) << "no OpenCL device (scripts/install-deps.sh installs PoCL)"

struct WorkerResult {
  uint32_t ok = 0;
  uint32_t failed = 0;
  uint32_t wrong = 0;          // outputs that differ from the CPU function
  std::vector<uint32_t> seen;  // completions per submission serial
};

using Tasks = std::vector<std::unique_ptr<TaskBuffers>>;

// A task of IPLookupOffload's on the tables' device: kBatchesPerTask batches at most, its
// context the TaskBuffers themselves.
Result<std::unique_ptr<TaskBuffers>> make_lookup_task(const Ipv4LookupTables& tables) {
  return make_task(tables.device(), 0, IPLookupOffload::kOffload, kBatchesPerTask, 0, false,
                   tables.args());
}

// Appends a batch of addresses to a lookup task; false (nothing appended) when it does not fit.
bool add_batch(TaskBuffers& t, const uint32_t* addrs, uint32_t n) {
  if (!t.task.fits(n)) return false;
  std::memcpy(t.in_item(t.task.items), addrs, n * sizeof(uint32_t));
  t.task.add_batch(n);
  return true;
}
const uint32_t* addresses(const TaskBuffers& t) {
  return t.in->as<const uint32_t>();
}
uint16_t* next_hops(TaskBuffers& t) {
  return t.out->as<uint16_t>();
}

// kTasksPerWorker tasks with pinned buffers, made before the device thread starts (a failing
// device refuses allocations once it has failed).
Tasks make_tasks(const Ipv4LookupTables& tables) {
  Tasks tasks;
  for (uint32_t i = 0; i < kTasksPerWorker; ++i) {
    auto t = make_lookup_task(tables);
    EXPECT_TRUE(t.ok()) << t.error();
    if (!t) break;
    tasks.push_back(std::move(t.value()));
  }
  return tasks;
}

// One worker: keeps its tasks busy, kSubmissionsPerWorker submissions in all, each filled with
// fresh random addresses; failed tasks are re-run on the CPU, as a worker would.
WorkerResult run_worker(Channel& ch, Tasks idle, uint32_t seed) {
  WorkerResult res;
  res.seen.assign(kSubmissionsPerWorker, 0);
  std::mt19937 rng(seed);
  if (idle.size() != kTasksPerWorker) return res;
  uint32_t submitted = 0, collected = 0;
  std::vector<uint16_t> expect(kTaskItems);
  while (collected < kSubmissionsPerWorker) {
    if (submitted < kSubmissionsPerWorker && !idle.empty()) {
      TaskBuffers* t = idle.back().release();
      idle.pop_back();
      t->task.reset();
      uint32_t batch[kBatch];
      while (t->task.fits(kBatch)) {
        for (uint32_t& a : batch) a = rng();
        add_batch(*t, batch, kBatch);
      }
      t->task.callback = submitted;
      EXPECT_TRUE(ch.submit(&t->task));
      ++submitted;
    }
    while (OffloadTask* done = ch.poll()) {
      auto* t = static_cast<TaskBuffers*>(done->context);
      ++res.seen[done->callback];
      ++collected;
      if (done->status == TaskStatus::kOk) {
        ++res.ok;
      } else {
        EXPECT_FALSE(done->error.empty());
        ++res.failed;
        table().lookup_bulk(addresses(*t), next_hops(*t), done->items);  // the CPU path
      }
      table().lookup_bulk(addresses(*t), expect.data(), done->items);
      for (uint32_t i = 0; i < done->items; ++i) res.wrong += next_hops(*t)[i] != expect[i];
      idle.emplace_back(t);
    }
  }
  for (auto& t : idle) t.reset();
  return res;
}

std::vector<WorkerResult> run_workers(DeviceThread& dt, const Ipv4LookupTables& tables) {
  std::vector<Channel*> channels;
  for (uint32_t w = 0; w < kWorkers; ++w) {
    auto ch = dt.attach();
    EXPECT_TRUE(ch.ok()) << ch.error();
    channels.push_back(ch.value());
  }
  std::vector<Tasks> tasks;
  for (uint32_t w = 0; w < kWorkers; ++w) tasks.push_back(make_tasks(tables));
  dt.start();
  std::vector<WorkerResult> results(kWorkers);
  std::vector<std::thread> threads;
  for (uint32_t w = 0; w < kWorkers; ++w)
    threads.emplace_back(
        [&, w] { results[w] = run_worker(*channels[w], std::move(tasks[w]), 100 + w); });
  for (auto& t : threads) t.join();
  return results;
}

TEST(OffloadDeviceThread, TasksFromTwoWorkersAllCompleteExactlyOnceWithCpuResults) {
  auto dev = opencl_device();
  REQUIRE_OPENCL_DEVICE(dev);
  auto tables = Ipv4LookupTables::upload(*dev, table());
  ASSERT_TRUE(tables.ok()) << tables.error();
  DeviceThreadConfig cfg;
  cfg.queues = kQueues;
  auto dt = DeviceThread::create(*dev, cfg);
  ASSERT_TRUE(dt.ok()) << dt.error();
  const auto results = run_workers(*dt.value(), *tables.value());
  for (const WorkerResult& r : results) {
    EXPECT_EQ(r.ok, kSubmissionsPerWorker);
    EXPECT_EQ(r.failed, 0u);
    EXPECT_EQ(r.wrong, 0u);
    for (uint32_t n : r.seen) EXPECT_EQ(n, 1u);
  }
  EXPECT_EQ(dt.value()->tasks_ok(), uint64_t{kWorkers} * kSubmissionsPerWorker);
  EXPECT_TRUE(dev->is_up());
}

// Also the device's busy time (the energy model's): the union of the tasks' spans on it, at
// least the longest span, at most their sum (tasks overlap on the queues), and it stops growing
// when the last task is done.
TEST(OffloadDeviceThread, TasksWaitingAtStartRunOnAllQueuesAtOnce) {
  auto dev = opencl_device();
  REQUIRE_OPENCL_DEVICE(dev);
  auto tables = Ipv4LookupTables::upload(*dev, table());
  ASSERT_TRUE(tables.ok()) << tables.error();
  DeviceThreadConfig cfg;
  cfg.queues = kQueues;
  auto dt = DeviceThread::create(*dev, cfg);
  ASSERT_TRUE(dt.ok()) << dt.error();
  auto ch = dt.value()->attach();
  ASSERT_TRUE(ch.ok());
  Tasks tasks;
  const std::vector<uint32_t> addrs(kBatch, 0x0A000001);
  for (uint32_t i = 0; i < 2 * kQueues; ++i) {
    auto t = make_lookup_task(*tables.value());
    ASSERT_TRUE(t.ok());
    ASSERT_TRUE(add_batch(*t.value(), addrs.data(), kBatch));
    ASSERT_TRUE(ch.value()->submit(&t.value()->task));
    tasks.push_back(std::move(t.value()));
  }
  EXPECT_EQ(dt.value()->busy_ns(), 0u);
  dt.value()->start();
  uint64_t sum = 0, longest = 0;
  for (size_t back = 0; back < tasks.size();)
    if (OffloadTask* t = ch.value()->poll()) {
      ASSERT_EQ(t->status, TaskStatus::kOk) << t->error;
      ASSERT_GE(t->finished_ns, t->started_ns);
      sum += t->finished_ns - t->started_ns;
      longest = std::max(longest, t->finished_ns - t->started_ns);
      ++back;
    }
  EXPECT_EQ(dt.value()->max_in_flight(), kQueues);
  const uint64_t busy = dt.value()->busy_ns();
  EXPECT_GT(busy, 0u);
  EXPECT_GE(busy, longest);
  EXPECT_LE(busy, sum);
  EXPECT_EQ(dt.value()->busy_ns(), busy) << "grows with no task on the device";
}

TEST(OffloadDeviceThread, InjectedFailureReturnsEveryTaskAndMarksTheDeviceDown) {
  constexpr uint64_t kFailAfter = 5;
  auto dev = opencl_device(kFailAfter);
  REQUIRE_OPENCL_DEVICE(dev);
  auto tables = Ipv4LookupTables::upload(*dev, table());
  ASSERT_TRUE(tables.ok()) << tables.error();
  auto dt = DeviceThread::create(*dev);
  ASSERT_TRUE(dt.ok()) << dt.error();
  const auto results = run_workers(*dt.value(), *tables.value());
  uint32_t ok = 0, failed = 0;
  for (const WorkerResult& r : results) {
    ok += r.ok;
    failed += r.failed;
    EXPECT_EQ(r.wrong, 0u);  // device results and CPU re-runs alike
    for (uint32_t n : r.seen) EXPECT_EQ(n, 1u);
  }
  EXPECT_EQ(ok + failed, kWorkers * kSubmissionsPerWorker);
  EXPECT_LE(ok, kFailAfter);
  EXPECT_GT(failed, 0u);
  EXPECT_FALSE(dev->is_up());
  EXPECT_EQ(dt.value()->tasks_failed(), failed);
}

TEST(OffloadDeviceThread, FailAfterEnvironmentVariableWrapsDiscoveredDevices) {
  if (!backend_compiled(Backend::kOpenCL)) GTEST_SKIP() << "OpenCL not compiled in";
  ASSERT_EQ(setenv(kFailAfterEnv, "0", 1), 0);
  auto dev = opencl_device();
  unsetenv(kFailAfterEnv);
  ASSERT_NE(dev, nullptr);
  auto k = dev->kernel(kIpv4LookupKernel);
  ASSERT_TRUE(k.ok()) << k.error();
  auto q = dev->create_queue();
  ASSERT_TRUE(q.ok()) << q.error();
  auto buf = dev->alloc(kTaskItems * sizeof(uint32_t));
  ASSERT_TRUE(buf.ok());
  const KernelArg args[] = {KernelArg::of(*buf.value()), KernelArg::of(*buf.value()),
                            KernelArg::of(*buf.value()), KernelArg::of(*buf.value()),
                            KernelArg::of(0u)};
  const Status s = q.value()->launch(*k.value(), {1, 0}, args);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find(kFailAfterEnv), std::string::npos) << s.error();
}

TEST(OffloadDeviceThread, SubmitRefusesMoreThanTheRingHolds) {
  auto dev = opencl_device();
  REQUIRE_OPENCL_DEVICE(dev);
  DeviceThreadConfig cfg;
  cfg.ring_size = 4;
  auto dt = DeviceThread::create(*dev, cfg);
  ASSERT_TRUE(dt.ok()) << dt.error();
  auto ch = dt.value()->attach();
  ASSERT_TRUE(ch.ok());
  std::vector<OffloadTask> tasks(cfg.ring_size + 1);
  for (uint32_t i = 0; i < cfg.ring_size; ++i) EXPECT_TRUE(ch.value()->submit(&tasks[i]));
  EXPECT_FALSE(ch.value()->submit(&tasks[cfg.ring_size]));
  EXPECT_EQ(ch.value()->outstanding(), cfg.ring_size);
  // Empty tasks naming no kernel fail on the device; they come back all the same.
  dt.value()->start();
  uint32_t back = 0;
  while (back < cfg.ring_size) back += ch.value()->poll() != nullptr;
  EXPECT_EQ(ch.value()->outstanding(), 0u);
}

// The release tests' device. "default": FULCRUM_OFFLOAD_BACKEND's first device when the
// variable is set (CUDA on a GPU host: the real release of a context), else the emulated device
// (the device thread's side of it on any machine); "opencl": the first OpenCL device (PoCL here:
// a real context released and made again), the tests skipped where there is none. The emulated
// device lives while this object does.
class ReleaseDevice {
 public:
  explicit ReleaseDevice(const std::string& which) {
    DiscoverOptions o;
    if (which == "opencl") {
      o.only = Backend::kOpenCL;
    } else if (std::getenv("FULCRUM_OFFLOAD_BACKEND") == nullptr) {
      set_emulated_devices({EmuSpec{}});
      o.only = Backend::kEmu;
    }
    auto devs = discover_devices(o);
    if (!devs.empty()) dev_ = std::move(devs.front());
  }
  ~ReleaseDevice() {
    dev_.reset();
    set_emulated_devices({});
  }
  Device* get() const { return dev_.get(); }

 private:
  std::unique_ptr<Device> dev_;
};

class OffloadRelease : public ::testing::TestWithParam<std::string> {
 protected:
  // An offload service left in make_element's storage by an earlier test would hold the GPU too.
  void SetUp() override { fulcrum::testing::reset_element_storage(); }
};

INSTANTIATE_TEST_SUITE_P(Devices, OffloadRelease, ::testing::Values("default", "opencl"),
                         [](const auto& info) { return info.param; });

// Waits on a state, not on time: the guard only turns a hang into a failure.
template <class F>
bool wait_until(F done) {
  const auto guard = std::chrono::steady_clock::now() + std::chrono::seconds(600);
  while (!done()) {
    if (std::chrono::steady_clock::now() > guard) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// A CUDA GPU that another device object of this process holds is not releasable either.
constexpr const char* kNotReleasable =
    " cannot be released here: nothing to release, or another device object holds it";

TEST_P(OffloadRelease, AnIdleDeviceIsReleasedAndTheNextTaskTakesItBack) {
  const ReleaseDevice rd(GetParam());
  Device* dev = rd.get();
  if (dev == nullptr && GetParam() == "opencl") GTEST_SKIP() << "no OpenCL device";
  ASSERT_NE(dev, nullptr);
  if (!dev->releasable()) GTEST_SKIP() << dev->label() << kNotReleasable;
  auto tables = Ipv4LookupTables::upload(*dev, table());
  ASSERT_TRUE(tables.ok()) << tables.error();
  DeviceThreadConfig cfg;
  cfg.release_after_ms = 1;
  auto dt = DeviceThread::create(*dev, cfg);
  ASSERT_TRUE(dt.ok()) << dt.error();
  auto ch = dt.value()->attach();
  ASSERT_TRUE(ch.ok());
  auto task = make_lookup_task(*tables.value());
  ASSERT_TRUE(task.ok()) << task.error();
  TaskBuffers& t = *task.value();
  dt.value()->start();
  std::mt19937 rng(7);
  std::vector<uint16_t> expect(kTaskItems);
  constexpr uint32_t kRounds = 3;
  for (uint32_t round = 0; round < kRounds; ++round) {
    ASSERT_TRUE(wait_until([&] { return dt.value()->released(); })) << "never released";
    EXPECT_TRUE(dev->released());
    t.task.reset();
    uint32_t batch[kBatch];
    while (t.task.fits(kBatch)) {
      for (uint32_t& a : batch) a = rng();
      add_batch(t, batch, kBatch);
    }
    ASSERT_TRUE(ch.value()->submit(&t.task));
    OffloadTask* done = nullptr;
    ASSERT_TRUE(wait_until([&] { return (done = ch.value()->poll()) != nullptr; }));
    ASSERT_EQ(done->status, TaskStatus::kOk) << done->error;
    table().lookup_bulk(addresses(t), expect.data(), done->items);
    uint32_t wrong = 0;
    for (uint32_t i = 0; i < done->items; ++i) wrong += next_hops(t)[i] != expect[i];
    EXPECT_EQ(wrong, 0u) << "round " << round;
  }
  EXPECT_EQ(dt.value()->reacquires(), kRounds);
  EXPECT_GE(dt.value()->releases(), kRounds);
  EXPECT_GT(dt.value()->released_ns(), 0u);
  EXPECT_TRUE(dev->is_up());
}

// PolicyBalancer's energy policy turns the release on for a running device thread.
TEST_P(OffloadRelease, ReleaseCanBeTurnedOnWhileTheThreadRuns) {
  const ReleaseDevice rd(GetParam());
  Device* dev = rd.get();
  if (dev == nullptr && GetParam() == "opencl") GTEST_SKIP() << "no OpenCL device";
  ASSERT_NE(dev, nullptr);
  if (!dev->releasable()) GTEST_SKIP() << dev->label() << kNotReleasable;
  auto dt = DeviceThread::create(*dev, DeviceThreadConfig{});
  ASSERT_TRUE(dt.ok()) << dt.error();
  EXPECT_EQ(dt.value()->release_after_ms(), 0u);
  dt.value()->start();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(dt.value()->released()) << "released with release_after_ms 0";
  dt.value()->set_release_after_ms(1);
  EXPECT_EQ(dt.value()->release_after_ms(), 1u);
  ASSERT_TRUE(wait_until([&] { return dt.value()->released(); })) << "never released";
  EXPECT_TRUE(dev->released());
  EXPECT_EQ(dt.value()->releases(), 1u);
}

// Another thread may take the device back (an element's upload or allocation while the device
// thread holds it released): the released spell ends there, it does not go on counting.
TEST_P(OffloadRelease, ATakingBackByAnotherThreadEndsTheReleasedSpell) {
  const ReleaseDevice rd(GetParam());
  Device* dev = rd.get();
  if (dev == nullptr && GetParam() == "opencl") GTEST_SKIP() << "no OpenCL device";
  ASSERT_NE(dev, nullptr);
  if (!dev->releasable()) GTEST_SKIP() << dev->label() << kNotReleasable;
  DeviceThreadConfig cfg;
  cfg.release_after_ms = 1;
  auto dt = DeviceThread::create(*dev, cfg);
  ASSERT_TRUE(dt.ok()) << dt.error();
  dt.value()->start();
  ASSERT_TRUE(wait_until([&] { return dt.value()->released(); })) << "never released";
  dt.value()->set_release_after_ms(0);  // no second release while the spell's end is checked
  ASSERT_TRUE(dev->reacquire().ok());
  ASSERT_TRUE(wait_until([&] { return !dt.value()->released(); })) << "spell never ended";
  EXPECT_EQ(dt.value()->reacquires(), 1u);
  const uint64_t spent = dt.value()->released_ns();
  EXPECT_GT(spent, 0u);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(dt.value()->released_ns(), spent) << "still counting after the device came back";
}

TEST(CudaRelease, AGpuHeldByTwoDeviceObjectsIsNotReleasable) {
  // Two discoveries, two device objects of the first GPU: a release by one would reset the
  // context the other's streams and memory live in. Neither is releasable, release() says why,
  // and once the other is gone the GPU is releasable again. Needs a CUDA GPU.
  fulcrum::testing::reset_element_storage();
  DiscoverOptions only;
  only.only = Backend::kCuda;
  std::vector<std::unique_ptr<Device>> first = discover_devices(only);
  if (first.empty()) GTEST_SKIP() << "no CUDA device";
  ASSERT_TRUE(first[0]->releasable());
  std::vector<std::unique_ptr<Device>> second = discover_devices(only);
  ASSERT_FALSE(second.empty());
  EXPECT_FALSE(first[0]->releasable());
  EXPECT_FALSE(second[0]->releasable());
  const Status st = first[0]->release();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().find("held by another device object"), std::string::npos) << st.error();
  EXPECT_FALSE(first[0]->released());
  second.clear();
  EXPECT_TRUE(first[0]->releasable());
  EXPECT_TRUE(first[0]->release().ok());
  EXPECT_TRUE(first[0]->released());
}

TEST_P(OffloadRelease, BuffersAndQueuesKeepTheirContentsAcrossARelease) {
  const ReleaseDevice rd(GetParam());
  Device* dev = rd.get();
  if (dev == nullptr && GetParam() == "opencl") GTEST_SKIP() << "no OpenCL device";
  ASSERT_NE(dev, nullptr);
  if (!dev->releasable()) GTEST_SKIP() << dev->label() << kNotReleasable;
  constexpr size_t kWords = 3 * 4096 + 5;  // not a whole number of pages
  auto buf = dev->alloc(kWords * sizeof(uint32_t));
  auto in = dev->alloc_host(kWords * sizeof(uint32_t));
  auto out = dev->alloc_host(kWords * sizeof(uint32_t));
  auto q = dev->create_queue();
  ASSERT_TRUE(buf.ok() && in.ok() && out.ok() && q.ok());
  for (size_t i = 0; i < kWords; ++i)
    in.value()->as<uint32_t>()[i] = static_cast<uint32_t>(i * 2654435761u);
  ASSERT_TRUE(q.value()->copy_to_device(*buf.value(), 0, *in.value(), 0, kWords * 4).ok());
  ASSERT_TRUE(q.value()->record().ok());
  ASSERT_TRUE(q.value()->wait().ok());
  ASSERT_TRUE(dev->release().ok());
  EXPECT_TRUE(dev->released());
  // A queue on a released device has nothing in flight.
  auto idle = q.value()->query();
  ASSERT_TRUE(idle.ok()) << idle.error();
  EXPECT_TRUE(idle.value());
  // The copy back reacquires the device; the buffer holds what was copied before the release.
  ASSERT_TRUE(q.value()->copy_to_host(*out.value(), 0, *buf.value(), 0, kWords * 4).ok());
  ASSERT_TRUE(q.value()->record().ok());
  ASSERT_TRUE(q.value()->wait().ok());
  EXPECT_FALSE(dev->released());
  EXPECT_EQ(std::memcmp(out.value()->data(), in.value()->data(), kWords * 4), 0);
  // Twice more, through the explicit calls.
  for (int i = 0; i < 2; ++i) {
    ASSERT_TRUE(dev->release().ok());
    ASSERT_TRUE(dev->reacquire().ok());
  }
  std::memset(out.value()->data(), 0, kWords * 4);
  ASSERT_TRUE(q.value()->copy_to_host(*out.value(), 0, *buf.value(), 0, kWords * 4).ok());
  ASSERT_TRUE(q.value()->record().ok());
  ASSERT_TRUE(q.value()->wait().ok());
  EXPECT_EQ(std::memcmp(out.value()->data(), in.value()->data(), kWords * 4), 0);
}

}  // namespace
}  // namespace fulcrum::offload
