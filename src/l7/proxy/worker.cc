#include "l7/proxy/worker.hh"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "l7/http/serialize.hh"

namespace fulcrum::l7 {

namespace {

constexpr uint64_t kListenTag = ~uint64_t{0};
constexpr uint64_t kWakeTag = ~uint64_t{0} - 1;
constexpr uint64_t kBackendBit = 1;
constexpr int kMaxEvents = 256;
constexpr int kSweepMs = 100;
constexpr uint64_t kNsPerMs = 1000000;
constexpr size_t kReadBytes = 256 * 1024;
constexpr int kAcceptsPerEvent = 64;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

uint64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<uint64_t>(ts.tv_nsec);
}

void set_nodelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

uint64_t tag(FlowId id, bool backend) {
  return (id << 1) | (backend ? kBackendBit : 0);
}

}  // namespace

Worker::Worker(const ProxyOptions& options, int index, int listen_fd, int wake_fd,
               std::unique_ptr<Processor> processor, std::atomic<uint32_t>& open_conns,
               const std::atomic<bool>& stop)
    : options_(options),
      index_(index),
      listen_fd_(listen_fd),
      wake_fd_(wake_fd),
      processor_(std::move(processor)),
      open_conns_(open_conns),
      stop_(stop),
      table_(BackendTable::global()),
      buf_(kReadBytes) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  epoll_event ev{};
  ev.events = EPOLLIN;
  ev.data.u64 = kListenTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
  ev.data.u64 = kWakeTag;
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &ev);
}

Worker::~Worker() {
  for (auto& [id, c] : conns_)
    if (!c->dead) close_conn(*c, nullptr);
  conns_.clear();
  if (epoll_fd_ >= 0) ::close(epoll_fd_);
}

void Worker::run() {
  std::vector<epoll_event> events(kMaxEvents);
  uint64_t deadline = kNoDeadline;
  uint64_t last_sweep = now_ns();
  while (!stop_.load(std::memory_order_relaxed)) {
    int timeout = kSweepMs;
    if (deadline != kNoDeadline) {
      const uint64_t now = now_ns();
      const uint64_t wait_ms = deadline > now ? (deadline - now + kNsPerMs - 1) / kNsPerMs : 0;
      timeout = static_cast<int>(std::min<uint64_t>(wait_ms, kSweepMs));
    }
    const int n = epoll_wait(epoll_fd_, events.data(), kMaxEvents, timeout);
    for (int i = 0; i < n; ++i) {
      const uint64_t t = events[static_cast<size_t>(i)].data.u64;
      const uint32_t ev = events[static_cast<size_t>(i)].events;
      if (t == kListenTag) {
        accept_clients();
        continue;
      }
      if (t == kWakeTag) continue;
      auto it = conns_.find(t >> 1);
      if (it == conns_.end() || it->second->dead) continue;
      if (t & kBackendBit)
        on_backend(*it->second, ev);
      else
        on_client(*it->second, ev);
    }
    const uint64_t now = now_ns();
    deadline = drain_processor(now);
    if (now - last_sweep >= static_cast<uint64_t>(kSweepMs) * kNsPerMs) {
      sweep(now);
      last_sweep = now;
    }
    for (FlowId id : dead_) conns_.erase(id);
    dead_.clear();
  }
}

void Worker::accept_clients() {
  for (int i = 0; i < kAcceptsPerEvent; ++i) {
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE) {
        // Out of descriptors: stop watching the listener (it would fire again at once) until
        // a connection closes.
        ++stats_.errors["accept-no-fds"];
        epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, listen_fd_, nullptr);
        accept_paused_ = true;
      }
      return;
    }
    if (open_conns_.fetch_add(1) >= options_.max_conns) {
      open_conns_.fetch_sub(1);
      ++stats_.errors["conn-limit"];
      std::string answer;
      http::local_response(503, "connection limit", true, answer);
      (void)!::send(fd, answer.data(), answer.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
      ::close(fd);
      continue;
    }
    set_nodelay(fd);
    ++stats_.connections;
    const FlowId id = next_id_++;
    auto c = std::make_unique<Conn>(id, fd, options_.limits);
    c->resp = std::make_unique<http::Parser>(Direction::kResponse, options_.limits);
    c->last_active_ns = now_ns();
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag(id, false);
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
    c->cmask = EPOLLIN;
    processor_->open_flow(id);
    conns_.emplace(id, std::move(c));
  }
}

void Worker::on_client(Conn& c, uint32_t events) {
  if (events & (EPOLLERR | EPOLLHUP)) {
    close_conn(c, "client-reset");
    return;
  }
  if (events & EPOLLOUT) write_client(c);
  if (!c.dead && (events & EPOLLIN)) read_client(c);
  if (!c.dead) refresh(c);
}

void Worker::on_backend(Conn& c, uint32_t events) {
  if (c.connecting) {
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(c.bfd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err != 0 || (events & (EPOLLERR | EPOLLHUP))) {
      backend_failed(c, err == ECONNREFUSED ? "backend-refused" : "backend-unreachable", true);
      refresh(c);
      return;
    }
    if (!(events & EPOLLOUT)) return;
    c.connecting = false;
    table_.report_success(c.backend);
  }
  if (events & EPOLLOUT) write_backend(c);
  if (!c.dead && c.bfd >= 0 && (events & (EPOLLIN | EPOLLERR | EPOLLHUP))) read_backend(c);
  if (!c.dead) refresh(c);
}

void Worker::read_client(Conn& c) {
  const ssize_t n = ::recv(c.cfd, buf_.data(), buf_.size(), 0);
  if (n < 0) {
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) close_conn(c, "client-reset");
    return;
  }
  const uint64_t now = now_ns();
  c.last_active_ns = now;
  std::vector<http::Parsed> parsed;
  bool ok = true;
  if (n == 0) {
    c.reading_client = false;
    c.client_done = true;
    ok = c.req.finish(parsed);
    if (!ok) {
      ++stats_.errors[std::string("client-") + http::error_name(c.req.error())];
      ok = true;  // nobody to answer: the client is gone
    }
  } else {
    stats_.bytes_from_clients += static_cast<uint64_t>(n);
    ok = c.req.feed(std::string_view(buf_.data(), static_cast<size_t>(n)), parsed);
  }
  for (http::Parsed& p : parsed) {
    const uint64_t seq = c.next_req_seq++;
    c.slots.emplace_back();
    c.requests[seq] = {p.keep_alive, p.framed, p.msg.head.method == "HEAD"};
    if (!p.keep_alive) {
      c.reading_client = false;
      c.client_done = true;
    }
    ++stats_.requests;
    c.continue_sent = false;
    p.msg.flow = c.id;
    p.msg.dir = Direction::kRequest;
    p.msg.seq = seq;
    p.msg.arrival_ns = now;
    processor_->submit(std::move(p.msg));
    if (!p.keep_alive) break;  // what follows a "Connection: close" request is not read
  }
  if (!ok && c.reading_client) {
    const http::ParseError e = c.req.error();
    ++stats_.errors[http::error_name(e)];
    const uint64_t seq = c.next_req_seq++;
    c.slots.emplace_back();
    c.reading_client = false;
    c.client_done = true;
    answer_locally(c, seq, http::error_status(e), c.req.error_detail(), true);
    return;
  }
  c.head_since_ns =
      c.req.in_message() && !c.req.in_body() ? (c.head_since_ns ? c.head_since_ns : now) : 0;
  if (c.req.wants_continue() && !c.continue_sent && c.slots.empty()) {
    c.cout.append(std::string(kContinue));
    c.continue_sent = true;
    write_client(c);
  }
  if (c.client_done && c.slots.empty() && !c.dead) close_conn(c, nullptr);
}

void Worker::read_backend(Conn& c) {
  const ssize_t n = ::recv(c.bfd, buf_.data(), buf_.size(), 0);
  std::vector<http::Parsed> parsed;
  if (n < 0) {
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) return;
    backend_failed(c, "backend-reset", false);
    return;
  }
  c.last_active_ns = now_ns();
  if (n == 0) {
    const bool ok = c.resp->finish(parsed);
    handle_parsed_responses(c, parsed);
    if (!ok || !c.awaiting.empty()) {
      backend_failed(c, "backend-closed", false);
      return;
    }
    close_backend(c);
    pump_backend(c);
    return;
  }
  stats_.bytes_from_backends += static_cast<uint64_t>(n);
  const bool ok = c.resp->feed(std::string_view(buf_.data(), static_cast<size_t>(n)), parsed);
  handle_parsed_responses(c, parsed);
  if (!ok) {
    backend_failed(c, "backend-parse-error", false);
    return;
  }
  // Requests held for another backend go once this one has answered everything.
  if (c.awaiting.empty() && !c.to_backend.empty()) pump_backend(c);
}

void Worker::handle_parsed_responses(Conn& c, std::vector<http::Parsed>& parsed) {
  const uint64_t now = now_ns();
  for (http::Parsed& p : parsed) {
    if (p.informational || c.awaiting.empty()) continue;
    const Awaiting a = c.awaiting.front();
    c.awaiting.pop_front();
    c.responses.push_back({a.slot, a.keep_alive, p.keep_alive, p.framed, p.bodyless});
    p.msg.flow = c.id;
    p.msg.dir = Direction::kResponse;
    p.msg.seq = c.next_resp_seq++;
    p.msg.arrival_ns = now;
    processor_->submit(std::move(p.msg));
  }
}

uint64_t Worker::drain_processor(uint64_t now) {
  const uint64_t deadline = processor_->poll(now, done_);
  for (Message& m : done_) {
    auto it = conns_.find(m.flow);
    if (it == conns_.end() || it->second->dead) continue;
    Conn& c = *it->second;
    if (m.dir == Direction::kRequest)
      on_request_verdict(c, m);
    else
      on_response_verdict(c, m);
    if (!c.dead) refresh(c);
  }
  done_.clear();
  return deadline;
}

void Worker::count_verdict(const Verdict& v) {
  if (v.action == Action::kForward) return;
  const size_t colon = v.reason.find(':');
  std::string nf = colon == std::string::npos ? v.reason : v.reason.substr(0, colon);
  if (nf.empty()) nf = "chain";
  ++stats_.verdicts[nf + (v.action == Action::kRespond ? " respond" : " close")];
}

void Worker::on_request_verdict(Conn& c, Message& m) {
  auto info_it = c.requests.find(m.seq);
  if (info_it == c.requests.end()) return;
  const RequestInfo info = info_it->second;
  c.requests.erase(info_it);
  count_verdict(m.verdict);
  switch (m.verdict.action) {
    case Action::kClose:
      close_conn(c, "verdict-close");
      return;
    case Action::kRespond:
      answer_locally(c, m.seq, m.verdict.status, m.verdict.reason, !info.keep_alive);
      return;
    case Action::kForward:
      break;
  }
  const int b = m.verdict.backend >= 0 ? m.verdict.backend : default_backend(c);
  if (b < 0 || !table_.up(b)) {
    ++stats_.errors["backend-down"];
    answer_locally(c, m.seq, 502, "no backend up", !info.keep_alive);
    return;
  }
  Pending p{m.seq, b, info.head, info.keep_alive, {}, std::move(m.body)};
  http::serialize_head(m.head, Direction::kRequest, p.body.size(), info.framed, false, p.wire_head);
  c.to_backend.push_back(std::move(p));
  pump_backend(c);
}

void Worker::on_response_verdict(Conn& c, Message& m) {
  if (c.responses.empty()) return;
  const ResponseInfo info = c.responses.front();
  c.responses.pop_front();
  count_verdict(m.verdict);
  const bool close_after = !info.keep_alive || !info.request_keep_alive;
  switch (m.verdict.action) {
    case Action::kClose:
      close_conn(c, "verdict-close");
      return;
    case Action::kRespond:
      answer_locally(c, info.slot, m.verdict.status, m.verdict.reason, close_after);
      return;
    case Action::kForward:
      break;
  }
  std::string head;
  http::serialize_head(m.head, Direction::kResponse, m.body.size(), info.framed, info.bodyless,
                       head);
  if (info.bodyless) m.body.clear();
  fill(c, info.slot, m.head.status, std::move(head), std::move(m.body), close_after);
}

int Worker::default_backend(const Conn& c) const {
  const size_t n = options_.backends.size();
  for (size_t i = 0; i < n; ++i) {
    const int b = options_.backends[(c.id + i) % n];
    if (table_.up(b)) return b;
  }
  return -1;
}

void Worker::pump_backend(Conn& c) {
  while (!c.to_backend.empty() && !c.dead) {
    Pending& p = c.to_backend.front();
    if (c.bfd >= 0 && c.backend != p.backend) {
      if (!c.awaiting.empty()) return;  // switch backends once this one has answered
      close_backend(c);
    }
    if (c.bfd < 0 && !open_backend(c, p.backend)) continue;
    stats_.bytes_to_backends += p.wire_head.size() + p.body.size();
    c.bout.append(std::move(p.wire_head));
    c.bout.append(std::move(p.body));
    c.resp->request_sent(p.head);
    c.awaiting.push_back({p.slot, p.keep_alive});
    c.to_backend.pop_front();
  }
  if (!c.dead && c.bfd >= 0 && !c.connecting) write_backend(c);
}

bool Worker::open_backend(Conn& c, int backend) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const sockaddr_in& a = table_.addr(backend);
  c.backend = backend;
  if (fd < 0) {
    backend_failed(c, "backend-socket", true);
    return false;
  }
  set_nodelay(fd);
  const int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&a), sizeof a);
  if (rc != 0 && errno != EINPROGRESS) {
    const bool refused = errno == ECONNREFUSED;
    ::close(fd);
    backend_failed(c, refused ? "backend-refused" : "backend-unreachable", true);
    return false;
  }
  c.bfd = fd;
  c.connecting = rc != 0;
  epoll_event ev{};
  ev.events = c.connecting ? EPOLLOUT : EPOLLIN;
  ev.data.u64 = tag(c.id, true);
  epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev);
  c.bmask = ev.events;
  return true;
}

void Worker::close_backend(Conn& c) {
  if (c.bfd >= 0) ::close(c.bfd);
  c.bfd = -1;
  c.bmask = 0;
  c.connecting = false;
  c.bout.clear();
  c.resp = std::make_unique<http::Parser>(Direction::kResponse, options_.limits);
}

// The backend connection failed: its unanswered requests get 502; when the backend could not be
// reached at all, so do the requests waiting for it.
void Worker::backend_failed(Conn& c, const char* reason, bool unreachable) {
  ++stats_.errors[reason];
  const int b = c.backend;
  if (unreachable && b >= 0)
    table_.report_failure(b, options_.health.interval_ms ? options_.health.fails : 0);
  std::deque<Awaiting> lost;
  lost.swap(c.awaiting);
  close_backend(c);
  c.backend = -1;
  for (const Awaiting& a : lost) answer_locally(c, a.slot, 502, reason, !a.keep_alive);
  if (unreachable) {
    while (!c.to_backend.empty() && c.to_backend.front().backend == b && !c.dead) {
      const Pending p = std::move(c.to_backend.front());
      c.to_backend.pop_front();
      answer_locally(c, p.slot, 502, reason, !p.keep_alive);
    }
  }
  if (!c.dead) pump_backend(c);
}

void Worker::answer_locally(Conn& c, uint64_t slot, int status, std::string_view why,
                            bool close_after) {
  std::string bytes;
  http::local_response(status, why, close_after, bytes);
  fill(c, slot, status, std::move(bytes), {}, close_after);
}

void Worker::fill(Conn& c, uint64_t slot, int status, std::string head, std::vector<uint8_t> body,
                  bool close_after) {
  if (c.dead) return;
  if (slot < c.base_slot || slot - c.base_slot >= c.slots.size()) return;
  Slot& s = c.slots[slot - c.base_slot];
  s.ready = true;
  s.status = status;
  s.close_after = close_after;
  s.head = std::move(head);
  s.body = std::move(body);
  flush_slots(c);
}

void Worker::flush_slots(Conn& c) {
  while (!c.slots.empty() && c.slots.front().ready && !c.closing) {
    Slot& s = c.slots.front();
    c.cout.append(std::move(s.head));
    c.cout.append(std::move(s.body));
    ++stats_.responses;
    if (s.status >= 500)
      ++stats_.status_5xx;
    else if (s.status >= 400)
      ++stats_.status_4xx;
    else if (s.status >= 300)
      ++stats_.status_3xx;
    else if (s.status >= 200)
      ++stats_.status_2xx;
    if (s.close_after) c.closing = true;
    c.slots.pop_front();
    ++c.base_slot;
  }
  if (c.client_done && c.slots.empty()) c.closing = true;
  write_client(c);
}

void Worker::write_client(Conn& c) {
  const ssize_t n = c.cout.send_to(c.cfd);
  if (n < 0) {
    close_conn(c, "client-reset");
    return;
  }
  if (n > 0) {
    stats_.bytes_to_clients += static_cast<uint64_t>(n);
    c.last_active_ns = now_ns();
  }
  if (c.cout.empty() && c.closing) close_conn(c, nullptr);
}

void Worker::write_backend(Conn& c) {
  if (c.bout.send_to(c.bfd) < 0) backend_failed(c, "backend-reset", false);
}

void Worker::refresh(Conn& c) {
  const bool client_room = c.cout.size() < options_.out_buffer_bytes;
  uint32_t cm = 0;
  if (c.reading_client && !c.closing && c.bout.size() < options_.out_buffer_bytes &&
      c.slots.size() < options_.max_pipeline)
    cm |= EPOLLIN;
  if (!c.cout.empty()) cm |= EPOLLOUT;
  if (cm != c.cmask) {
    epoll_event ev{};
    ev.events = cm;
    ev.data.u64 = tag(c.id, false);
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.cfd, &ev);
    c.cmask = cm;
  }
  if (c.bfd < 0) return;
  uint32_t bm = 0;
  if (c.connecting) {
    bm = EPOLLOUT;
  } else {
    if (client_room) bm |= EPOLLIN;
    if (!c.bout.empty()) bm |= EPOLLOUT;
  }
  if (bm != c.bmask) {
    epoll_event ev{};
    ev.events = bm;
    ev.data.u64 = tag(c.id, true);
    epoll_ctl(epoll_fd_, EPOLL_CTL_MOD, c.bfd, &ev);
    c.bmask = bm;
  }
}

void Worker::close_conn(Conn& c, const char* reason) {
  if (c.dead) return;
  if (reason) ++stats_.errors[reason];
  c.dead = true;
  ::close(c.cfd);
  if (c.bfd >= 0) ::close(c.bfd);
  c.bfd = -1;
  processor_->close_flow(c.id);
  open_conns_.fetch_sub(1);
  dead_.push_back(c.id);
  if (accept_paused_) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = kListenTag;
    epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, listen_fd_, &ev);
    accept_paused_ = false;
  }
}

void Worker::sweep(uint64_t now) {
  const uint64_t idle = static_cast<uint64_t>(options_.idle_timeout_ms) * kNsPerMs;
  const uint64_t header = static_cast<uint64_t>(options_.header_timeout_ms) * kNsPerMs;
  for (auto& [id, cp] : conns_) {
    Conn& c = *cp;
    if (c.dead) continue;
    // (last_active_ns may be a little after `now`: writes since then set it.)
    if (idle && now > c.last_active_ns && now - c.last_active_ns > idle) {
      close_conn(c, "idle-timeout");
      continue;
    }
    if (header && c.head_since_ns && c.reading_client && now > c.head_since_ns &&
        now - c.head_since_ns > header) {
      ++stats_.errors["header-timeout"];
      const uint64_t seq = c.next_req_seq++;
      c.slots.emplace_back();
      c.reading_client = false;
      c.client_done = true;
      c.head_since_ns = 0;
      answer_locally(c, seq, 408, "request head not complete in time", true);
      if (!c.dead) refresh(c);
    }
  }
}

}  // namespace fulcrum::l7
