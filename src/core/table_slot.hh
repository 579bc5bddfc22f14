// TableSlot: a table shared by every worker that can be replaced while they run (hot reload,
// runtime/reload.hh). Readers load the table's pointer once per batch (current()) and use that
// table for the whole batch, so every packet is looked up in the old table or in the new one,
// never in a mix. replace() builds the new table on the calling thread (never a worker), puts it
// in service with one release store and hands back the old one: the caller keeps it alive until
// every worker has passed a quiescent point (RCU), then drops it.
//
// Tables read by several elements along one packet's path (the SA table: encapsulation picks the
// SA, the crypto elements use its keys) are read with for_worker(): the table is pinned for the
// worker's whole loop iteration, so every element sees the same one. Tables that hold state
// going on across a reload (sequence numbers) hand it over: T::take_over(old) just before the
// new table goes into service, T::settle(old) once the old one is out of use.
#pragma once

#include <rte_config.h>

#include <atomic>
#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

#include "core/result.hh"
#include "core/shared_storage.hh"

namespace fulcrum {

// Bumped by a worker at each quiescent point (runtime/worker.hh): a new loop iteration, where
// for_worker() may pin the table in service anew.
inline thread_local uint64_t t_table_epoch = 1;

template <class T>
concept HandsOverState = requires(T& fresh, const T& old) {
  fresh.take_over(old);
  { fresh.settle(old) } -> std::same_as<Status>;
};

class TableSlotBase {
 public:
  virtual ~TableSlotBase() = default;
  // What the table holds, for messages: "IPv4 routes", "IDS rules".
  const std::string& kind() const { return kind_; }
  // The file the table in service was built from. Changed by replace() only: read it from the
  // thread that replaces (the reloader serialises them).
  const std::string& file() const { return file_; }
  // Builds a table from `file` and puts it in service; returns the one taken out of service,
  // which readers may still use until a grace period has passed. On an error (FILE:LINE: what)
  // the table in service stays.
  virtual Result<std::shared_ptr<const void>> replace(const std::string& file) = 0;
  // Called by the reloader once `old` (what replace() returned) is out of use.
  virtual Status settle(const std::shared_ptr<const void>& old) = 0;

  // An element that keeps its own copy of the table (an offload element's device copy) pins the
  // slot: replace() then refuses, naming it. Called while the pipeline is built.
  void pin(const std::string& by) {
    if (pinned_by_.empty()) pinned_by_ = by;
  }

 protected:
  TableSlotBase(std::string kind, std::string file)
      : kind_(std::move(kind)), file_(std::move(file)) {}
  std::string kind_;
  std::string file_;
  std::string pinned_by_;
};

template <class T>
class TableSlot final : public TableSlotBase {
 public:
  using Builder = std::function<Result<std::shared_ptr<T>>(const std::string& file)>;

  TableSlot(std::string kind, std::string file, std::shared_ptr<const T> first, Builder build)
      : TableSlotBase(std::move(kind), std::move(file)),
        owner_(std::move(first)),
        current_(owner_.get()),
        build_(std::move(build)) {}

  // The table in service. A worker reads it once per batch; the table stays valid until the
  // worker's next quiescent point.
  const T* current() const { return current_.load(std::memory_order_acquire); }

  // The table in service for worker `worker` (InitContext::worker), the same for its whole loop
  // iteration. Outside a worker thread (tests) the first table read stays pinned.
  const T* for_worker(int worker) const {
    Pin& p = pins_[static_cast<size_t>(worker) % kMaxPins];
    if (p.epoch != t_table_epoch) [[unlikely]] {
      p.table = current();
      p.epoch = t_table_epoch;
    }
    return p.table;
  }

  Result<std::shared_ptr<const void>> replace(const std::string& file) override {
    if (!pinned_by_.empty())
      return make_error("the " + kind_ + " from " + file_ + " are also used by " + pinned_by_ +
                        ", which keeps its own copy: they cannot be replaced while it runs");
    Result<std::shared_ptr<T>> built = build_(file);
    if (!built) return make_error(built.error());
    if constexpr (HandsOverState<T>) built.value()->take_over(*owner_);
    std::shared_ptr<const T> old = std::move(owner_);
    owner_ = std::move(built.value());
    current_.store(owner_.get(), std::memory_order_release);
    file_ = file;
    return std::shared_ptr<const void>(std::move(old));
  }

  Status settle(const std::shared_ptr<const void>& old) override {
    if constexpr (HandsOverState<T>)
      return std::const_pointer_cast<T>(owner_)->settle(*static_cast<const T*>(old.get()));
    return {};
  }

 private:
  static constexpr size_t kMaxPins = RTE_MAX_LCORE;
  // One worker's pinned table, on a cache line of its own.
  struct alignas(64) Pin {
    const T* table = nullptr;
    uint64_t epoch = 0;
  };

  std::shared_ptr<const T> owner_;
  std::atomic<const T*> current_;
  Builder build_;
  std::unique_ptr<Pin[]> pins_ = std::make_unique<Pin[]>(kMaxPins);
};

// The slot under `key` in `shared` (built once from `file` by `build`, which later reloads call
// again), or one of the caller's own without shared storage.
template <class T>
Result<std::shared_ptr<TableSlot<T>>> shared_table_slot(SharedStorage* shared,
                                                        const std::string& key,
                                                        const std::string& kind,
                                                        const std::string& file,
                                                        typename TableSlot<T>::Builder build) {
  Result<std::shared_ptr<const TableSlot<T>>> slot =
      shared_or_own<TableSlot<T>>(shared, key, [&]() -> Result<std::shared_ptr<TableSlot<T>>> {
        Result<std::shared_ptr<T>> first = build(file);
        if (!first) return make_error(first.error());
        return std::make_shared<TableSlot<T>>(kind, file, std::move(first.value()), build);
      });
  if (!slot) return make_error(slot.error());
  // Shared storage hands out const objects; replacing the table is the slot's own synchronised
  // operation.
  return std::const_pointer_cast<TableSlot<T>>(slot.value());
}

}  // namespace fulcrum
