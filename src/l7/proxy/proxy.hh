// The L7 reverse proxy (paper 004 §III-A, FlowShader's front end): TCP on the kernel's sockets,
// N worker threads each with its own epoll loop and SO_REUSEPORT listener (pinned to a core when
// the machine allows), HTTP/1.x parsed by libhttp-parser (l7/http). A client connection has one
// backend connection, opened lazily (non-blocking connect) and kept across the client's
// keep-alive requests; requests pipelined by the client are answered in order.
//
// Each complete request and response goes through the worker's l7::Processor (the NF chain of
// the configuration): kForward passes it on (to Verdict::backend, or the connection's default
// backend), kRespond answers the client with that status instead (a request then never reaches a
// backend), kClose closes the connection. A backend that refuses, resets or closes before
// answering gives the client 502; one marked down by the health checker is not tried (502).
//
// Backpressure: a side is not read while the other side's unsent output is over
// out_buffer_bytes, nor the client while max_pipeline of its requests are unanswered.
// Timeouts: idle (no bytes either way), header (a request head not complete: 408).
// Malformed requests get 400 (413 body too large, 431 head too large, 501 CONNECT/Upgrade) and
// the connection is closed after the answers to the requests before them.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/result.hh"
#include "l7/flow/processor.hh"
#include "l7/http/parser.hh"
#include "l7/proxy/backends.hh"

namespace fulcrum::l7 {

struct ProxyOptions {
  std::string listen = "127.0.0.1:8080";
  std::vector<int> backends;  // indices in the BackendTable: the default pool
  uint32_t workers = 1;
  uint32_t max_conns = 10000;          // client connections at once, all workers together
  uint32_t idle_timeout_ms = 60000;    // 0: none
  uint32_t header_timeout_ms = 10000;  // 0: none
  uint32_t max_pipeline = 64;          // unanswered requests of one client before reading stops
  size_t out_buffer_bytes = size_t{1} << 20;
  bool pin = true;
  http::Limits limits;
  HealthOptions health;
};

// Counters of a run, summed over the workers.
struct ProxyStats {
  uint64_t connections = 0;
  uint64_t requests = 0;   // complete requests parsed
  uint64_t responses = 0;  // responses sent to clients (from backends and the proxy's own)
  uint64_t bytes_from_clients = 0;
  uint64_t bytes_to_clients = 0;
  uint64_t bytes_to_backends = 0;
  uint64_t bytes_from_backends = 0;
  uint64_t status_2xx = 0, status_3xx = 0, status_4xx = 0, status_5xx = 0;
  std::map<std::string, uint64_t> errors;    // reason -> count (parse-error, timeout, ...)
  std::map<std::string, uint64_t> verdicts;  // "<nf> respond|close" -> count

  void add(const ProxyStats& o);
  std::string summary() const;
  std::string json() const;
};

// Makes one Processor per worker (each with its own chain: NFs need not be thread-safe).
using ProcessorFactory = std::function<Result<std::unique_ptr<Processor>>()>;

class Proxy {
 public:
  Proxy(ProxyOptions options, ProcessorFactory make_processor);
  // Makes every worker's processor, then binds the listeners (the port accepts only once the
  // chains are built) and runs the workers until stop(); the stats of the run.
  Result<ProxyStats> run();
  // From any thread (a signal-waiting thread): the workers finish and run() returns.
  void stop();

 private:
  ProxyOptions options_;
  ProcessorFactory make_processor_;
  std::atomic<bool> stop_{false};
  std::vector<int> wake_fds_;
  std::atomic<bool> started_{false};
};

}  // namespace fulcrum::l7
