// The machine's cross-CPU regime as one figure: two threads pinned to CPUs 0 and 1 hand a cache
// line back and forth (each waits for the other's store); prints the TSC cycles one hand-over
// takes. On the 2-vCPU development VM: ~110 in its fast regime, 500-1100 in its slow one.
// Build: g++ -O2 -pthread tools/line_pingpong.cc -o line_pingpong (tools/clone_scaling.sh
// records it with REGIME=./line_pingpong).
#include <pthread.h>
#include <sched.h>
#include <x86intrin.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <thread>

namespace {

void pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

alignas(64) std::atomic<uint64_t> g_line{0};

}  // namespace

int main() {
  constexpr uint64_t kRounds = 20000, kWarmup = 1000;
  std::thread other([] {
    pin(1);
    for (uint64_t i = 0; i < kRounds; ++i) {
      while (g_line.load(std::memory_order_acquire) != 2 * i + 1) {
      }
      g_line.store(2 * i + 2, std::memory_order_release);
    }
  });
  pin(0);
  uint64_t t0 = 0;
  for (uint64_t i = 0; i < kRounds; ++i) {
    if (i == kWarmup) t0 = __rdtsc();
    while (g_line.load(std::memory_order_acquire) != 2 * i) {
    }
    g_line.store(2 * i + 1, std::memory_order_release);
  }
  const uint64_t t1 = __rdtsc();
  other.join();
  std::printf("%.1f\n", static_cast<double>(t1 - t0) / static_cast<double>(kRounds - kWarmup) / 2);
  return 0;
}
