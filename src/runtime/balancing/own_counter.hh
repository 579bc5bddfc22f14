// add_own: adds to a counter that other threads read (relaxed loads) but, when `own`, only the
// calling thread writes: a plain load and store. A locked read-modify-write (fetch_add) is what a
// counter written by several threads needs, and on x86 it also waits for the store buffer to
// drain: the balancers count every batch, right after the elements' stores to its packets.
#pragma once

#include <atomic>
#include <type_traits>

namespace fulcrum {

template <class T>
inline void add_own(std::atomic<T>& counter, std::type_identity_t<T> v, bool own) {
  if (own)
    counter.store(counter.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
  else
    counter.fetch_add(v, std::memory_order_relaxed);
}

}  // namespace fulcrum
