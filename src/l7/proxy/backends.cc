#include "l7/proxy/backends.hh"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>

namespace fulcrum::l7 {

namespace {

constexpr size_t kProbeReplyBytes = 64;

// Waits for `events` on fd until `deadline`; false on timeout or error.
bool wait_fd(int fd, short events, std::chrono::steady_clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  if (left.count() <= 0) return false;
  pollfd p{fd, events, 0};
  return ::poll(&p, 1, static_cast<int>(left.count())) == 1 && (p.revents & events) != 0;
}

}  // namespace

Result<sockaddr_in> parse_endpoint(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return make_error("'" + std::string(text) + "': expected A.B.C.D:PORT");
  sockaddr_in a{};
  a.sin_family = AF_INET;
  const std::string host(text.substr(0, colon));
  if (inet_pton(AF_INET, host.c_str(), &a.sin_addr) != 1)
    return make_error("'" + std::string(text) + "': not an IPv4 address");
  unsigned port = 0;
  const std::string_view p = text.substr(colon + 1);
  auto [end, ec] = std::from_chars(p.data(), p.data() + p.size(), port);
  if (ec != std::errc() || end != p.data() + p.size() || port == 0 || port > 65535)
    return make_error("'" + std::string(text) + "': bad port");
  a.sin_port = htons(static_cast<uint16_t>(port));
  return a;
}

BackendTable& BackendTable::global() {
  static BackendTable t;
  return t;
}

Result<int> BackendTable::add(std::string_view address) {
  Result<sockaddr_in> a = parse_endpoint(address);
  if (!a) return make_error(a.error());
  for (size_t i = 0; i < entries_.size(); ++i)
    if (entries_[i]->addr.sin_addr.s_addr == a->sin_addr.s_addr &&
        entries_[i]->addr.sin_port == a->sin_port)
      return static_cast<int>(i);
  auto e = std::make_unique<Entry>();
  e->name = std::string(address);
  e->addr = *a;
  entries_.push_back(std::move(e));
  return static_cast<int>(entries_.size() - 1);
}

void BackendTable::report_failure(int i, uint32_t threshold) {
  Entry& e = *entries_[static_cast<size_t>(i)];
  const uint32_t n = e.fails.fetch_add(1) + 1;
  if (threshold > 0 && n >= threshold && e.up.exchange(false)) e.transitions.fetch_add(1);
}

void BackendTable::report_success(int i) {
  Entry& e = *entries_[static_cast<size_t>(i)];
  e.fails.store(0);
  if (!e.up.exchange(true)) e.transitions.fetch_add(1);
}

bool HealthChecker::probe(const sockaddr_in& addr, const std::string& http_path,
                          uint32_t timeout_ms) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  bool ok = false;
  int rc = ::connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr);
  if (rc == 0 || (errno == EINPROGRESS && wait_fd(fd, POLLOUT, deadline))) {
    int err = 0;
    socklen_t len = sizeof err;
    ok = ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0;
  }
  if (ok && !http_path.empty()) {
    const std::string req = "GET " + http_path + " HTTP/1.0\r\nHost: health\r\n\r\n";
    ok = ::send(fd, req.data(), req.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(req.size());
    std::string reply;
    char buf[kProbeReplyBytes];
    while (ok && reply.size() < 12 && wait_fd(fd, POLLIN, deadline)) {
      const ssize_t n = ::recv(fd, buf, sizeof buf, 0);
      if (n <= 0) break;
      reply.append(buf, static_cast<size_t>(n));
    }
    // "HTTP/1.x 2.." or "3..".
    ok = ok && reply.size() >= 12 && reply.compare(0, 5, "HTTP/") == 0 &&
         (reply[9] == '2' || reply[9] == '3');
  }
  ::close(fd);
  return ok;
}

HealthChecker::HealthChecker(BackendTable& table, HealthOptions options)
    : table_(table), options_(std::move(options)) {
  if (options_.interval_ms > 0) thread_ = std::thread([this] { loop(); });
}

HealthChecker::~HealthChecker() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void HealthChecker::loop() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    lock.unlock();
    for (size_t i = 0; i < table_.size(); ++i) {
      const int b = static_cast<int>(i);
      if (probe(table_.addr(b), options_.http_path, options_.interval_ms))
        table_.report_success(b);
      else
        table_.report_failure(b, options_.fails);
    }
    lock.lock();
    cv_.wait_for(lock, std::chrono::milliseconds(options_.interval_ms), [this] { return stop_; });
  }
}

}  // namespace fulcrum::l7
