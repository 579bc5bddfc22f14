// The L7 proxy's verdict path, in process: a test NF answers some requests itself (403, never
// reaching the backend) and closes on others; pipelined requests answered partly by the backend
// and partly by the proxy come back in order; a processor that holds messages until a later
// poll (as FlowShader's batch processor does) gets the same answers, its deadline waking the
// loop; the summary counts verdicts per NF.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "l7/http/parser.hh"
#include "l7/proxy/backends.hh"
#include "l7/proxy/proxy.hh"

namespace fulcrum::l7 {
namespace {

// Waits end on their condition (the proxy accepting, a response read); this bound only turns a
// hang into a failure: ctest -j2 on a loaded 2-core machine under ASan can be very slow.
constexpr std::chrono::seconds kGuard{600};
constexpr std::chrono::milliseconds kConnectRetry{10};
constexpr uint64_t kHoldNs = 2000000;  // the holding processor's "batch timeout"

int listen_on_free_port(int& port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  port = ntohs(a.sin_port);
  listen(fd, 16);
  return fd;
}

// Connects once the proxy's thread listens (it listens once its processors are built).
int connect_to(int port) {
  const auto deadline = std::chrono::steady_clock::now() + kGuard;
  while (std::chrono::steady_clock::now() < deadline) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
    close(fd);
    std::this_thread::sleep_for(kConnectRetry);
  }
  return -1;
}

// A backend answering each request with its target as the body; it records the targets.
class Backend {
 public:
  Backend() {
    fd_ = listen_on_free_port(port_);
    thread_ = std::thread([this] { serve(); });
  }
  ~Backend() {
    shutdown(fd_, SHUT_RDWR);
    close(fd_);
    thread_.join();
    for (auto& t : conns_) t.join();
  }
  int port() const { return port_; }
  std::vector<std::string> targets() {
    std::lock_guard lock(mu_);
    return targets_;
  }

 private:
  void serve() {
    for (;;) {
      const int c = accept(fd_, nullptr, nullptr);
      if (c < 0) return;
      conns_.emplace_back([this, c] { answer(c); });
    }
  }
  void answer(int c) {
    http::Parser p(Direction::kRequest);
    char buf[4096];
    for (;;) {
      const ssize_t n = recv(c, buf, sizeof buf, 0);
      if (n <= 0) break;
      std::vector<http::Parsed> out;
      if (!p.feed(std::string_view(buf, static_cast<size_t>(n)), out)) break;
      for (const http::Parsed& m : out) {
        {
          std::lock_guard lock(mu_);
          targets_.push_back(m.msg.head.target);
        }
        const std::string r =
            "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(m.msg.head.target.size()) +
            "\r\n\r\n" + m.msg.head.target;
        send(c, r.data(), r.size(), MSG_NOSIGNAL);
      }
    }
    close(c);
  }

  int fd_ = -1;
  int port_ = 0;
  std::thread thread_;
  std::vector<std::thread> conns_;
  std::mutex mu_;
  std::vector<std::string> targets_;
};

// /deny...: 403 from the proxy; /close...: the connection closed; responses to /hide: 404.
class DenyNf final : public FlowNf {
 public:
  std::string_view name() const override { return "Deny"; }
  void process(Message& m, std::span<uint8_t>) override {
    if (m.dir == Direction::kRequest && m.head.target.rfind("/deny", 0) == 0) {
      m.verdict.action = Action::kRespond;
      m.verdict.status = 403;
      m.verdict.reason = "Deny: path";
    } else if (m.dir == Direction::kRequest && m.head.target.rfind("/close", 0) == 0) {
      m.verdict.action = Action::kClose;
      m.verdict.reason = "Deny: close";
    } else if (m.dir == Direction::kResponse &&
               std::string(m.body.begin(), m.body.end()) == "/hide") {
      m.verdict.action = Action::kRespond;
      m.verdict.status = 404;
      m.verdict.reason = "Deny: hidden";
    }
  }
};

// Runs the chain at submit but gives the messages back only kHoldNs later (as a batch
// processor closing a batch on its timeout).
class HoldingProcessor final : public Processor {
 public:
  explicit HoldingProcessor(std::shared_ptr<Chain> chain) : inner_(std::move(chain)) {}
  void open_flow(FlowId id) override { inner_.open_flow(id); }
  void close_flow(FlowId id) override { inner_.close_flow(id); }
  void submit(Message&& m) override {
    const uint64_t t = m.arrival_ns;
    inner_.submit(std::move(m));
    std::vector<Message> done;
    inner_.poll(t, done);
    for (auto& d : done) held_.push_back({t + kHoldNs, std::move(d)});
  }
  uint64_t poll(uint64_t now, std::vector<Message>& out) override {
    while (!held_.empty() && held_.front().first <= now) {
      out.push_back(std::move(held_.front().second));
      held_.pop_front();
    }
    return held_.empty() ? kNoDeadline : held_.front().first;
  }

 private:
  InlineProcessor inner_;
  std::deque<std::pair<uint64_t, Message>> held_;
};

struct Running {
  explicit Running(ProcessorFactory f, int backend_port) {
    int port = 0;
    close(listen_on_free_port(port));
    ProxyOptions o;
    o.listen = "127.0.0.1:" + std::to_string(port);
    Result<int> b = BackendTable::global().add("127.0.0.1:" + std::to_string(backend_port));
    o.backends = {*b};
    o.pin = false;
    proxy = std::make_unique<Proxy>(o, std::move(f));
    thread = std::thread([this] {
      Result<ProxyStats> r = proxy->run();
      if (r.ok()) stats = *r;
    });
    this->port = port;
  }
  ProxyStats stop() {
    proxy->stop();
    thread.join();
    return stats;
  }
  std::unique_ptr<Proxy> proxy;
  std::thread thread;
  ProxyStats stats;
  int port = 0;
};

// Reads `n` responses (or fewer at the close) from fd.
std::vector<http::Parsed> read_responses(int fd, size_t n, bool& closed) {
  http::Parser p(Direction::kResponse);
  for (size_t i = 0; i < n; ++i) p.request_sent(false);
  std::vector<http::Parsed> out;
  char buf[4096];
  closed = false;
  while (out.size() < n) {
    const ssize_t r = recv(fd, buf, sizeof buf, 0);
    if (r <= 0) {
      closed = true;
      break;
    }
    if (!p.feed(std::string_view(buf, static_cast<size_t>(r)), out)) break;
  }
  return out;
}

std::string body(const http::Parsed& p) {
  return std::string(p.msg.body.begin(), p.msg.body.end());
}

void check_verdicts(ProcessorFactory factory) {
  Backend backend;
  Running proxy(std::move(factory), backend.port());
  const int fd = connect_to(proxy.port);
  ASSERT_GE(fd, 0);
  timeval tv{static_cast<time_t>(kGuard.count()), 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  const std::string reqs =
      "GET /a HTTP/1.1\r\nHost: t\r\n\r\nGET /deny1 HTTP/1.1\r\nHost: t\r\n\r\n"
      "GET /hide HTTP/1.1\r\nHost: t\r\n\r\nGET /b HTTP/1.1\r\nHost: t\r\n\r\n"
      "GET /deny2 HTTP/1.1\r\nHost: t\r\n\r\n";
  ASSERT_EQ(send(fd, reqs.data(), reqs.size(), MSG_NOSIGNAL), static_cast<ssize_t>(reqs.size()));
  bool closed = false;
  std::vector<http::Parsed> got = read_responses(fd, 5, closed);
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got[0].msg.head.status, 200);
  EXPECT_EQ(body(got[0]), "/a");
  EXPECT_EQ(got[1].msg.head.status, 403);
  EXPECT_EQ(got[2].msg.head.status, 404);  // the backend's answer replaced
  EXPECT_EQ(got[3].msg.head.status, 200);
  EXPECT_EQ(body(got[3]), "/b");
  EXPECT_EQ(got[4].msg.head.status, 403);
  const std::string close_req = "GET /close HTTP/1.1\r\nHost: t\r\n\r\n";
  send(fd, close_req.data(), close_req.size(), MSG_NOSIGNAL);
  got = read_responses(fd, 1, closed);
  EXPECT_TRUE(got.empty());
  EXPECT_TRUE(closed);
  close(fd);
  const ProxyStats st = proxy.stop();
  EXPECT_EQ(backend.targets(), (std::vector<std::string>{"/a", "/hide", "/b"}));
  EXPECT_EQ(st.requests, 6u);
  EXPECT_EQ(st.verdicts.at("Deny respond"), 3u);
  EXPECT_EQ(st.verdicts.at("Deny close"), 1u);
  EXPECT_EQ(st.errors.at("verdict-close"), 1u);
  EXPECT_EQ(st.status_4xx, 3u);
}

std::shared_ptr<Chain> deny_chain() {
  auto chain = std::make_shared<Chain>();
  chain->add(std::make_unique<DenyNf>());
  return chain;
}

TEST(L7Proxy, VerdictsAnswerCloseAndKeepThePipelineInOrder) {
  check_verdicts([]() -> Result<std::unique_ptr<Processor>> {
    return std::unique_ptr<Processor>(new InlineProcessor(deny_chain()));
  });
}

TEST(L7Proxy, AProcessorThatHoldsMessagesGetsTheSameAnswers) {
  check_verdicts([]() -> Result<std::unique_ptr<Processor>> {
    return std::unique_ptr<Processor>(new HoldingProcessor(deny_chain()));
  });
}

}  // namespace
}  // namespace fulcrum::l7
