// Quiescent-state-based reclamation for the tables workers read (DPDK's rte_rcu_qsbr): each
// worker is a reader that reports a quiescent point once per loop iteration, between batches,
// where it holds no table pointer. A writer that has taken a table out of service waits with
// synchronize() until every online worker has passed such a point, then frees the table.
#pragma once

#include <rte_rcu_qsbr.h>

#include <atomic>
#include <chrono>
#include <memory>

#include "core/result.hh"

namespace fulcrum {

class Rcu {
 public:
  static Result<std::unique_ptr<Rcu>> create(unsigned readers);
  ~Rcu();
  Rcu(const Rcu&) = delete;
  Rcu& operator=(const Rcu&) = delete;

  // Called by reader `id` itself: before its first read, and once it reads no more.
  void online(unsigned id) { rte_rcu_qsbr_thread_online(v_, id); }
  void offline(unsigned id) { rte_rcu_qsbr_thread_offline(v_, id); }
  // Reader `id` holds no table pointer now (a store to its own cache line).
  void quiescent(unsigned id) { rte_rcu_qsbr_quiescent(v_, id); }

  // Writer: waits until every reader online now has passed a quiescent point, at most `limit`.
  // false when the limit passed first (a stalled worker): the caller must not free what it
  // retired.
  bool synchronize(std::chrono::milliseconds limit);

 private:
  explicit Rcu(rte_rcu_qsbr* v) : v_(v) {}
  rte_rcu_qsbr* v_;
};

}  // namespace fulcrum
