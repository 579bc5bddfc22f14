// A worker's heartbeat, for the watchdog (runtime/runtime.hh, RunOptions::watchdog_s): the worker
// beats once per loop, and code that waits on purpose inside a worker (an offload element
// waiting for its device, which has its own timeout) beats while it waits, so the watchdog only
// reports a worker that stopped making progress.
#pragma once

#include <atomic>
#include <cstdint>

namespace fulcrum {

// The beating thread's counter; set by the worker on its own thread, nullptr elsewhere.
inline thread_local std::atomic<uint64_t>* t_heartbeat = nullptr;

inline void heartbeat() {
  if (t_heartbeat != nullptr)
    t_heartbeat->store(t_heartbeat->load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
}

}  // namespace fulcrum
