#include "l7/proxy/proxy.hh"

#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "l7/proxy/worker.hh"

namespace fulcrum::l7 {

namespace {

constexpr int kListenBacklog = 1024;

Result<int> make_listener(const sockaddr_in& addr) {
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return make_error(std::string("socket: ") + std::strerror(errno));
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof one);
  if (::bind(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0 ||
      ::listen(fd, kListenBacklog) != 0) {
    const std::string why = std::strerror(errno);
    ::close(fd);
    return make_error("cannot listen: " + why);
  }
  return fd;
}

// The CPUs this process may run on, in order.
std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int i = 0; i < CPU_SETSIZE; ++i)
    if (CPU_ISSET(i, &set)) cpus.push_back(i);
  return cpus;
}

std::string json_escape(const std::string& s) {
  std::string o;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') o += '\\';
    o += ch;
  }
  return o;
}

std::string json_map(const std::map<std::string, uint64_t>& m) {
  std::string o = "{";
  for (const auto& [k, v] : m) {
    if (o.size() > 1) o += ", ";
    o += "\"" + json_escape(k) + "\": " + std::to_string(v);
  }
  return o + "}";
}

}  // namespace

void ProxyStats::add(const ProxyStats& o) {
  connections += o.connections;
  requests += o.requests;
  responses += o.responses;
  bytes_from_clients += o.bytes_from_clients;
  bytes_to_clients += o.bytes_to_clients;
  bytes_to_backends += o.bytes_to_backends;
  bytes_from_backends += o.bytes_from_backends;
  status_2xx += o.status_2xx;
  status_3xx += o.status_3xx;
  status_4xx += o.status_4xx;
  status_5xx += o.status_5xx;
  for (const auto& [k, v] : o.errors) errors[k] += v;
  for (const auto& [k, v] : o.verdicts) verdicts[k] += v;
}

std::string ProxyStats::summary() const {
  std::string s;
  s += "connections: " + std::to_string(connections) + "\n";
  s += "requests: " + std::to_string(requests) + ", responses: " + std::to_string(responses) +
       " (2xx " + std::to_string(status_2xx) + ", 3xx " + std::to_string(status_3xx) + ", 4xx " +
       std::to_string(status_4xx) + ", 5xx " + std::to_string(status_5xx) + ")\n";
  s += "bytes: from clients " + std::to_string(bytes_from_clients) + ", to clients " +
       std::to_string(bytes_to_clients) + ", to backends " + std::to_string(bytes_to_backends) +
       ", from backends " + std::to_string(bytes_from_backends) + "\n";
  s += "errors:";
  if (errors.empty()) s += " none";
  for (const auto& [k, v] : errors) s += " " + k + "=" + std::to_string(v);
  s += "\nverdicts:";
  if (verdicts.empty()) s += " all forwarded";
  for (const auto& [k, v] : verdicts) s += " [" + k + "]=" + std::to_string(v);
  return s + "\n";
}

std::string ProxyStats::json() const {
  std::string s = "{";
  s += "\"connections\": " + std::to_string(connections);
  s += ", \"requests\": " + std::to_string(requests);
  s += ", \"responses\": " + std::to_string(responses);
  s += ", \"bytes_from_clients\": " + std::to_string(bytes_from_clients);
  s += ", \"bytes_to_clients\": " + std::to_string(bytes_to_clients);
  s += ", \"bytes_to_backends\": " + std::to_string(bytes_to_backends);
  s += ", \"bytes_from_backends\": " + std::to_string(bytes_from_backends);
  s += ", \"status\": {\"2xx\": " + std::to_string(status_2xx) +
       ", \"3xx\": " + std::to_string(status_3xx) + ", \"4xx\": " + std::to_string(status_4xx) +
       ", \"5xx\": " + std::to_string(status_5xx) + "}";
  s += ", \"errors\": " + json_map(errors);
  s += ", \"verdicts\": " + json_map(verdicts);
  return s + "}\n";
}

Proxy::Proxy(ProxyOptions options, ProcessorFactory make_processor)
    : options_(std::move(options)), make_processor_(std::move(make_processor)) {}

void Proxy::stop() {
  stop_.store(true);
  if (!started_.load()) return;
  const uint64_t one = 1;
  for (int fd : wake_fds_) (void)!::write(fd, &one, sizeof one);
}

Result<ProxyStats> Proxy::run() {
  Result<sockaddr_in> addr = parse_endpoint(options_.listen);
  if (!addr) return make_error("--listen " + addr.error());
  if (options_.workers == 0) return make_error("--workers must be at least 1");
  std::vector<int> listeners;
  std::vector<std::unique_ptr<Processor>> processors;
  auto cleanup = [&] {
    for (int fd : listeners) ::close(fd);
    for (int fd : wake_fds_) ::close(fd);
    wake_fds_.clear();
  };
  // Every worker's processor first (a chain can take a minute to build: the WAF compiles the
  // CRS), then the listeners: a client that can connect is served at once, so "the port
  // accepts" means "the proxy is ready" to whoever waits for it (a test, a health probe).
  for (uint32_t i = 0; i < options_.workers; ++i) {
    Result<std::unique_ptr<Processor>> p = make_processor_();
    if (!p) return make_error(p.error());
    processors.push_back(std::move(*p));
  }
  for (uint32_t i = 0; i < options_.workers; ++i) {
    Result<int> fd = make_listener(*addr);
    if (!fd) {
      cleanup();
      return make_error(options_.listen + ": " + fd.error());
    }
    listeners.push_back(*fd);
    wake_fds_.push_back(eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  }
  HealthChecker health(BackendTable::global(), options_.health);
  std::atomic<uint32_t> open_conns{0};
  std::vector<std::unique_ptr<Worker>> workers;
  for (uint32_t i = 0; i < options_.workers; ++i)
    workers.push_back(std::make_unique<Worker>(options_, static_cast<int>(i), listeners[i],
                                               wake_fds_[i], std::move(processors[i]), open_conns,
                                               stop_));
  started_.store(true);
  const std::vector<int> cpus = allowed_cpus();
  std::vector<std::thread> threads;
  for (uint32_t i = 0; i < options_.workers; ++i) {
    threads.emplace_back([&, i] {
      if (options_.pin && !cpus.empty()) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpus[i % cpus.size()], &set);
        pthread_setaffinity_np(pthread_self(), sizeof set, &set);
      }
      workers[i]->run();
    });
  }
  if (stop_.load()) stop();
  for (auto& t : threads) t.join();
  ProxyStats total;
  for (auto& w : workers) total.add(w->stats());
  workers.clear();
  cleanup();
  return total;
}

}  // namespace fulcrum::l7
