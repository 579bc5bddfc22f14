// Hot reload: replaces the tables of a running pipeline (routes, IDS rules, NDN names...) without
// stopping it or losing a packet. A new table is built on the calling thread (the control plane's,
// never a worker's), put in service by its slot (core/table_slot.hh) and the old one is freed
// once every worker has passed a quiescent point (runtime/rcu.hh). A file that does not load is
// reported with its FILE:LINE error and the table in service stays.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/result.hh"
#include "core/table_slot.hh"
#include "runtime/rcu.hh"

namespace fulcrum {

class Pipeline;

struct ReloadableTable {
  std::string element;     // the element's name in the pipeline
  std::string class_name;  // its class
  TableSlotBase* slot;     // shared by the element's replicas (and by elements on the same file)
};

// The reloadable tables of a pipeline (one replica's elements: the slots are shared).
std::vector<ReloadableTable> reloadable_tables(Pipeline& pipeline);

struct ReloadCounts {
  uint64_t done = 0;    // tables replaced
  uint64_t failed = 0;  // reloads refused (the file did not load; the old table stayed)
};

class Reloader {
 public:
  // `grace_limit`: how long a reload waits for the workers' quiescent points before it gives up
  // freeing the old table (it is then kept until the reloader goes).
  Reloader(std::vector<ReloadableTable> tables, Rcu& rcu, std::chrono::milliseconds grace_limit);

  // Replaces the table of `element` ("": every reloadable table) from `file` ("": the file it
  // was built from). One line per table on success; the error names the element and FILE:LINE.
  // Elements sharing a table (same file) are reloaded together. Thread-safe; reloads run one at
  // a time.
  Result<std::string> reload(const std::string& element, const std::string& file);

  // No reload after this one returns (the run is ending); waits for one in progress.
  void close();

  ReloadCounts counts() const;
  bool empty() const { return tables_.empty(); }

 private:
  Result<std::string> replace(TableSlotBase& slot, const std::string& file);

  std::vector<ReloadableTable> tables_;
  Rcu& rcu_;
  std::chrono::milliseconds grace_limit_;
  mutable std::mutex mu_;
  bool closed_ = false;
  ReloadCounts counts_;
  // Tables whose grace period did not end within the limit: never freed while workers may run.
  std::vector<std::shared_ptr<const void>> retired_;
};

// Reloads every table from its file on a thread of its own (SIGHUP: the control thread goes on
// with its work meanwhile), one reload at a time; the outcome goes to stderr.
class BackgroundReload {
 public:
  explicit BackgroundReload(std::shared_ptr<Reloader> reloader) : reloader_(std::move(reloader)) {}
  ~BackgroundReload() { join(); }
  BackgroundReload(const BackgroundReload&) = delete;
  BackgroundReload& operator=(const BackgroundReload&) = delete;

  // Starts a reload unless one is still running (then the request is merged into it: false).
  bool start(const char* why);
  void join();

 private:
  std::shared_ptr<Reloader> reloader_;
  std::thread thread_;
  std::atomic<bool> busy_{false};
};

}  // namespace fulcrum
