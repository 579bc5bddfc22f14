#include "runtime/rcu.hh"

#include <cstdlib>
#include <string>
#include <thread>

namespace fulcrum {

Result<std::unique_ptr<Rcu>> Rcu::create(unsigned readers) {
  const size_t size = rte_rcu_qsbr_get_memsize(readers);
  if (static_cast<ssize_t>(size) < 0)
    return make_error("RCU: cannot size a variable for " + std::to_string(readers) + " readers");
  // DPDK wants the variable on a cache-line boundary; the size is a multiple of one.
  auto* v = static_cast<rte_rcu_qsbr*>(std::aligned_alloc(RTE_CACHE_LINE_SIZE, size));
  if (v == nullptr) return make_error("RCU: out of memory");
  if (rte_rcu_qsbr_init(v, readers) != 0) {
    std::free(v);
    return make_error("RCU: rte_rcu_qsbr_init failed");
  }
  for (unsigned id = 0; id < readers; ++id) rte_rcu_qsbr_thread_register(v, id);
  return std::unique_ptr<Rcu>(new Rcu(v));
}

Rcu::~Rcu() {
  std::free(v_);
}

bool Rcu::synchronize(std::chrono::milliseconds limit) {
  constexpr auto kPoll = std::chrono::milliseconds(1);
  const uint64_t token = rte_rcu_qsbr_start(v_);
  const auto until = std::chrono::steady_clock::now() + limit;
  while (rte_rcu_qsbr_check(v_, token, false) == 0) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(kPoll);
  }
  return true;
}

}  // namespace fulcrum
