// One worker of the L7 proxy (proxy.hh): an epoll loop over its own SO_REUSEPORT listener, its
// client connections and their backend connections, and its own Processor. Level-triggered; a
// socket's interest set follows what the connection can do now (backpressure, connect pending).
#pragma once

#include <sys/epoll.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "l7/flow/processor.hh"
#include "l7/http/parser.hh"
#include "l7/proxy/backends.hh"
#include "l7/proxy/out_queue.hh"
#include "l7/proxy/proxy.hh"

namespace fulcrum::l7 {

class Worker {
 public:
  Worker(const ProxyOptions& options, int index, int listen_fd, int wake_fd,
         std::unique_ptr<Processor> processor, std::atomic<uint32_t>& open_conns,
         const std::atomic<bool>& stop);
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  void run();
  const ProxyStats& stats() const { return stats_; }

 private:
  // The answer to one client request, in request order.
  struct Slot {
    bool ready = false;
    bool close_after = false;
    int status = 0;
    std::string head;  // or the whole of the proxy's own answer
    std::vector<uint8_t> body;
  };
  struct RequestInfo {
    bool keep_alive = true;
    bool framed = false;
    bool head = false;
  };
  // A forwarded request not yet written to a backend connection (waiting for a connection to
  // another backend to finish its answers).
  struct Pending {
    uint64_t slot = 0;
    int backend = -1;
    bool head = false;
    bool keep_alive = true;
    std::string wire_head;
    std::vector<uint8_t> body;
  };
  // A request written to the backend, its response not yet parsed.
  struct Awaiting {
    uint64_t slot = 0;
    bool keep_alive = true;
  };
  // A response handed to the processor.
  struct ResponseInfo {
    uint64_t slot = 0;
    bool request_keep_alive = true;
    bool keep_alive = true;
    bool framed = false;
    bool bodyless = false;
  };
  struct Conn {
    Conn(FlowId id_, int fd, const http::Limits& limits)
        : id(id_), cfd(fd), req(Direction::kRequest, limits) {}
    FlowId id;
    int cfd;
    int bfd = -1;
    int backend = -1;
    bool connecting = false;
    uint32_t cmask = 0, bmask = 0;
    OutQueue cout, bout;
    http::Parser req;
    std::unique_ptr<http::Parser> resp;
    uint64_t next_req_seq = 0, next_resp_seq = 0, base_slot = 0;
    std::deque<Slot> slots;
    std::unordered_map<uint64_t, RequestInfo> requests;
    std::deque<Pending> to_backend;
    std::deque<Awaiting> awaiting;
    std::deque<ResponseInfo> responses;
    bool reading_client = true;
    bool client_done = false;  // the client sent its last request (EOF, close, error)
    bool closing = false;      // close once cout is written
    bool continue_sent = false;
    bool dead = false;
    uint64_t last_active_ns = 0;
    uint64_t head_since_ns = 0;
  };

  void accept_clients();
  void on_client(Conn& c, uint32_t events);
  void on_backend(Conn& c, uint32_t events);
  void read_client(Conn& c);
  void read_backend(Conn& c);
  void write_client(Conn& c);
  void write_backend(Conn& c);
  void handle_parsed_responses(Conn& c, std::vector<http::Parsed>& parsed);
  // Polls the processor and acts on the finished messages; its next deadline.
  uint64_t drain_processor(uint64_t now);
  void on_request_verdict(Conn& c, Message& m);
  void on_response_verdict(Conn& c, Message& m);
  void pump_backend(Conn& c);
  bool open_backend(Conn& c, int backend);
  void close_backend(Conn& c);
  void backend_failed(Conn& c, const char* reason, bool unreachable);
  int default_backend(const Conn& c) const;
  void fill(Conn& c, uint64_t slot, int status, std::string head, std::vector<uint8_t> body,
            bool close_after);
  void answer_locally(Conn& c, uint64_t slot, int status, std::string_view why, bool close_after);
  void flush_slots(Conn& c);
  void refresh(Conn& c);
  void close_conn(Conn& c, const char* reason);
  void sweep(uint64_t now);
  void count_verdict(const Verdict& v);

  const ProxyOptions& options_;
  int index_;
  int listen_fd_;
  int wake_fd_;
  int epoll_fd_ = -1;
  std::unique_ptr<Processor> processor_;
  std::atomic<uint32_t>& open_conns_;
  const std::atomic<bool>& stop_;
  BackendTable& table_;
  std::unordered_map<FlowId, std::unique_ptr<Conn>> conns_;
  std::vector<FlowId> dead_;
  FlowId next_id_ = 1;
  bool accept_paused_ = false;  // out of descriptors: the listener is not watched
  std::vector<char> buf_;
  std::vector<Message> done_;
  ProxyStats stats_;
};

}  // namespace fulcrum::l7
