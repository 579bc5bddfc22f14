// The CPU time the calling thread has had (CLOCK_THREAD_CPUTIME_ID): what a worker, a bench loop
// or an emulated device's work item cost, unlike the wall clock, whatever else shares the CPU.
#pragma once

#include <time.h>

#include <cstdint>

namespace fulcrum {

inline int64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

inline double thread_cpu_seconds() {
  return static_cast<double>(thread_cpu_ns()) * 1e-9;
}

}  // namespace fulcrum
