// Backends of the L7 proxy and their health. One table per process (BackendTable::global()):
// the proxy adds its --backend addresses first (indices 0..n-1, its default pool), balancer NFs
// add the addresses of their pools while the configuration loads (an address already present
// keeps its index); a Verdict's `backend` is an index into this table.
//
// Health belongs to the proxy: HealthChecker probes every backend each interval (a TCP connect,
// or an HTTP GET of a path answered 2xx/3xx); `fails` consecutive failures mark it down, one
// success marks it up. The proxy also reports failed connects (report_failure), which count
// toward the same threshold while health checks run. Readers (balancers, workers) see up() as
// one relaxed atomic load.
#pragma once

#include <netinet/in.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/result.hh"

namespace fulcrum::l7 {

// "A.B.C.D:PORT" into a socket address.
Result<sockaddr_in> parse_endpoint(std::string_view text);

class BackendTable {
 public:
  static BackendTable& global();

  // The index of `address` ("127.0.0.1:9000"), added when new. Before the workers start.
  Result<int> add(std::string_view address);
  size_t size() const { return entries_.size(); }
  const std::string& name(int i) const { return entries_[static_cast<size_t>(i)]->name; }
  const sockaddr_in& addr(int i) const { return entries_[static_cast<size_t>(i)]->addr; }
  bool up(int i) const {
    return i >= 0 && static_cast<size_t>(i) < entries_.size() &&
           entries_[static_cast<size_t>(i)]->up.load(std::memory_order_relaxed);
  }
  // A probe or a connect failed / succeeded. `threshold` consecutive failures mark it down.
  void report_failure(int i, uint32_t threshold);
  void report_success(int i);
  void set_up(int i, bool up) { entries_[static_cast<size_t>(i)]->up.store(up); }
  uint64_t transitions(int i) const { return entries_[static_cast<size_t>(i)]->transitions.load(); }
  void clear() { entries_.clear(); }

 private:
  struct Entry {
    std::string name;
    sockaddr_in addr{};
    std::atomic<bool> up{true};
    std::atomic<uint32_t> fails{0};
    std::atomic<uint64_t> transitions{0};
  };
  std::vector<std::unique_ptr<Entry>> entries_;
};

struct HealthOptions {
  uint32_t interval_ms = 0;  // 0: no active checks
  uint32_t fails = 2;        // consecutive failures that mark a backend down
  std::string http_path;     // empty: TCP connect; else "GET path" answered 2xx/3xx
};

class HealthChecker {
 public:
  HealthChecker(BackendTable& table, HealthOptions options);
  ~HealthChecker();
  HealthChecker(const HealthChecker&) = delete;
  HealthChecker& operator=(const HealthChecker&) = delete;

  // One probe of backend `i`, bounded by `timeout_ms`: true when it is healthy.
  static bool probe(const sockaddr_in& addr, const std::string& http_path, uint32_t timeout_ms);

 private:
  void loop();

  BackendTable& table_;
  HealthOptions options_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace fulcrum::l7
