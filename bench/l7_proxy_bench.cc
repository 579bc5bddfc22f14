// L7 proxy benchmark (issue 12): wrk against Fulcrum's proxy (empty NF chain, InlineProcessor)
// and against nginx configured as a reverse proxy (upstream keepalive), both in front of the same
// nginx backend, the same worker count, alternately in one run; a small (64 B) and a large
// (1 MiB) response. Requests/s, body goodput in Gbps (requests/s x body bytes x 8) and wrk's
// average latency; the ratio Fulcrum / nginx; wrk straight to the backend as the ceiling. nginx
// buffers responses in memory only (1 MiB of proxy_buffers, no temp files), as Fulcrum does.
// Skipped (with the reason in the JSON) when nginx or wrk is not installed.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "bench/groups.hh"
#include "bench/ids_rules.hh"
#include "bench/measure.hh"
#include "core/median.hh"
#include "l7/config.hh"
#include "l7/flow/processor.hh"
#include "l7/proxy/backends.hh"
#include "l7/proxy/proxy.hh"

extern char** environ;

namespace fulcrum::bench {
namespace {

constexpr uint32_t kWorkers = 1;
constexpr int kWrkThreads = 1;
constexpr int kWrkConnections = 32;
constexpr int kRounds = 4;  // each proxy measured this many times, alternately; medians
constexpr double kMinSeconds = 1;
constexpr int kListenTries = 200;
constexpr struct {
  const char* name;
  size_t bytes;
} kSizes[] = {{"64B", 64}, {"1MiB", size_t{1} << 20}};

std::string find_exe(const std::string& name) {
  for (const char* dir : {"/usr/sbin/", "/usr/bin/", "/usr/local/sbin/", "/usr/local/bin/"}) {
    const std::string p = std::string(dir) + name;
    if (access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  close(fd);
  return ntohs(a.sin_port);
}

bool wait_listening(int port) {
  for (int i = 0; i < kListenTries; ++i) {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
    close(fd);
    if (ok) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(25));
  }
  return false;
}

// nginx in the foreground with `conf`; its pid (0 when it could not start).
pid_t start_nginx(const std::string& exe, const std::string& dir, const std::string& conf,
                  int port) {
  const std::string path = dir + "/nginx.conf";
  std::ofstream(path) << conf;
  std::vector<std::string> args = {exe, "-c", path, "-p", dir};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 2, (dir + "/stderr.txt").c_str(), O_WRONLY | O_CREAT, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return 0;
  if (!wait_listening(port)) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    return 0;
  }
  return pid;
}

void stop_process(pid_t pid) {
  if (pid <= 0) return;
  kill(pid, SIGTERM);
  waitpid(pid, nullptr, 0);
}

std::string nginx_conf(const std::string& dir, int port, const std::string& body) {
  const std::string user = geteuid() == 0 ? "user root;\n" : "";
  return user + "worker_processes " + std::to_string(kWorkers) + ";\ndaemon off;\npid " + dir +
         "/nginx.pid;\nerror_log " + dir +
         "/error.log error;\nevents { worker_connections 4096; }\nhttp {\n  access_log off;\n"
         "  client_body_temp_path " +
         dir + "/body;\n  proxy_temp_path " + dir +
         "/proxy;\n"
         "  fastcgi_temp_path " +
         dir + "/fcgi;\n  uwsgi_temp_path " + dir +
         "/uwsgi;\n"
         "  scgi_temp_path " +
         dir + "/scgi;\n  keepalive_requests 10000000;\n" +
         "  default_type application/octet-stream;\n" + body +
         "  server {\n    listen 127.0.0.1:" + std::to_string(port) + ";\n    root " + dir +
         "/www;\n" +
         (body.empty() ? std::string()
                       : std::string("    location / {\n      proxy_pass http://backend;\n"
                                     "      proxy_http_version 1.1;\n"
                                     "      proxy_set_header Connection \"\";\n"
                                     "      proxy_buffers 64 16k;\n"
                                     "      proxy_max_temp_file_size 0;\n    }\n")) +
         "  }\n}\n";
}

struct WrkResult {
  double rps = 0;
  double latency_ms = 0;
  uint64_t errors = 0;
};

double parse_latency_ms(const std::string& line) {
  // "    Latency   512.00us  ..." / "1.23ms" / "1.02s"
  char unit[8] = {0};
  double v = 0;
  if (std::sscanf(line.c_str(), " Latency %lf%7[a-z]", &v, unit) != 2) return 0;
  const std::string u = unit;
  return u == "us" ? v / 1000 : u == "s" ? v * 1000 : v;
}

WrkResult run_wrk(const std::string& wrk, int port, const std::string& path, double seconds) {
  const std::string cmd = wrk + " -t" + std::to_string(kWrkThreads) + " -c" +
                          std::to_string(kWrkConnections) + " -d" +
                          std::to_string(static_cast<int>(std::ceil(seconds))) +
                          "s http://127.0.0.1:" + std::to_string(port) + path + " 2>&1";
  WrkResult r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char line[512];
  while (std::fgets(line, sizeof line, p)) {
    const std::string l = line;
    unsigned long long n = 0;
    if (l.find("Requests/sec:") != std::string::npos)
      std::sscanf(l.c_str(), " Requests/sec: %lf", &r.rps);
    else if (l.find("Latency") != std::string::npos && r.latency_ms == 0)
      r.latency_ms = parse_latency_ms(l);
    else if (std::sscanf(l.c_str(), " Non-2xx or 3xx responses: %llu", &n) == 1)
      r.errors += n;
    else if (l.find("Socket errors") != std::string::npos)
      r.errors += 1;
  }
  pclose(p);
  return r;
}

// `fulcrum proxy`'s engine on a free port with the chain `config` (empty: no NF), 1 worker.
struct InProcessProxy {
  InProcessProxy(const std::string& backend, const std::string& config) {
    port = free_port();
    l7::ProxyOptions opt;
    opt.listen = "127.0.0.1:" + std::to_string(port);
    Result<int> idx = l7::BackendTable::global().add(backend);
    opt.backends = {idx.ok() ? *idx : 0};
    opt.workers = kWorkers;
    opt.pin = false;  // nginx's workers are not pinned either
    proxy = std::make_unique<l7::Proxy>(opt, [config]() -> Result<std::unique_ptr<l7::Processor>> {
      Result<std::unique_ptr<l7::Chain>> chain = l7::parse_chain(config, "bench");
      if (!chain) return make_error(chain.error());
      return std::unique_ptr<l7::Processor>(
          new l7::InlineProcessor(std::shared_ptr<l7::Chain>(std::move(*chain))));
    });
    runner = std::thread([this] {
      Result<l7::ProxyStats> r = proxy->run();
      if (!r) std::fprintf(stderr, "bench: l7_proxy: %s\n", r.error().c_str());
    });
    up = wait_listening(port);
  }
  void stop() {
    proxy->stop();
    if (runner.joinable()) runner.join();
  }
  ~InProcessProxy() { stop(); }

  int port = 0;
  bool up = false;
  std::unique_ptr<l7::Proxy> proxy;
  std::thread runner;
};

// L7Balancer::process alone on a request head (4 backends, Host/path rules, HASH header):
// nanoseconds a request.
double balancer_ns_per_request(double seconds) {
  Result<std::unique_ptr<l7::Chain>> chain = l7::parse_chain(
      "L7Balancer(POOL web 127.0.0.1:1 127.0.0.1:2 127.0.0.1:3, POOL api 127.0.0.1:4, "
      "RULE api api.example /api/, HASH header:X-User)",
      "bench");
  if (!chain) return 0;
  l7::Message m;
  m.head.method = "GET";
  m.head.target = "/index.html";
  m.head.headers = {{"Host", "www.example"}, {"User-Agent", "wrk"}, {"X-User", "u"}};
  std::vector<uint8_t> state = (*chain)->new_state();
  uint64_t i = 0;
  int sink = 0;
  const double mcalls = rate_mpps(seconds, [&] {
    m.head.headers[2].second[0] = static_cast<char>('a' + (i++ & 15));
    m.verdict = {};
    (*chain)->process(m, state);
    sink += m.verdict.backend;
  });
  if (sink == -1) std::fprintf(stderr, "%d\n", sink);
  return mcalls > 0 ? 1e3 / mcalls : 0;
}

std::string bench_l7_proxy(const BenchContext& ctx) {
  const std::string nginx = find_exe("nginx"), wrk = find_exe("wrk");
  if (nginx.empty() || wrk.empty()) {
    const std::string why = std::string(nginx.empty() ? "nginx" : "wrk") + " not installed";
    std::fprintf(stderr, "bench: l7_proxy skipped: %s (scripts/install-deps.sh installs both)\n",
                 why.c_str());
    return Obj().str("skipped", why).done();
  }
  const double seconds = std::max(kMinSeconds, ctx.seconds);
  const std::string base = ctx.dir + "/l7_proxy";
  for (const char* sub : {"", "/backend", "/backend/www", "/nginx_proxy", "/nginx_proxy/www"})
    mkdir((base + sub).c_str(), 0755);
  for (const auto& s : kSizes) {
    std::ofstream f(base + "/backend/www/" + s.name, std::ios::binary);
    f << std::string(s.bytes, 'x');
  }
  const int backend_port = free_port();
  const pid_t backend = start_nginx(nginx, base + "/backend",
                                    nginx_conf(base + "/backend", backend_port, ""), backend_port);
  if (!backend) return Obj().str("skipped", "the nginx backend did not start").done();
  const int nginx_port = free_port();
  const std::string upstream =
      "  upstream backend {\n    server 127.0.0.1:" + std::to_string(backend_port) +
      ";\n    keepalive 256;\n  }\n";
  const pid_t nginx_proxy =
      start_nginx(nginx, base + "/nginx_proxy",
                  nginx_conf(base + "/nginx_proxy", nginx_port, upstream), nginx_port);

  // Fulcrum's proxy in this process: the empty chain, and the chain of one L7Balancer (a pool
  // of the same backend) for the NF's cost.
  const std::string backend_addr = "127.0.0.1:" + std::to_string(backend_port);
  InProcessProxy fulcrum(backend_addr, "");
  InProcessProxy balanced(backend_addr, "L7Balancer(POOL p " + backend_addr + ")");
  // And the chain of one StreamIDS scanning the responses (the IDS benches' 330 synthetic rules,
  // bench/ids_rules.hh, as tcp rules; the bodies are 'x's, so nothing alerts): the cost of
  // scanning every response byte as a stream.
  std::mt19937 rng(7);
  {
    std::ofstream rules(base + "/stream.rules");
    rules << make_rules(rng, "tcp", "bench").text;
  }
  InProcessProxy scanned(backend_addr, "StreamIDS(" + base + "/stream.rules, DIRECTION responses)");
  // A second empty-chain proxy: its ratio to the first is this run's noise floor.
  InProcessProxy twin(backend_addr, "");

  std::vector<std::string> rows;
  for (const auto& s : kSizes) {
    const std::string path = std::string("/") + s.name;
    std::vector<double> f_rps, n_rps, f_lat, n_lat, b_rps, t_rps, i_rps;
    uint64_t errors = 0;
    // Each proxy takes each place in the order once (the place in a round shifts a run by
    // several percent on a shared machine).
    struct Target {
      bool up;
      int port;
      std::vector<double>* rps;
      std::vector<double>* lat;
    };
    const Target targets[] = {{fulcrum.up, fulcrum.port, &f_rps, &f_lat},
                              {balanced.up, balanced.port, &b_rps, nullptr},
                              {nginx_proxy != 0, nginx_port, &n_rps, &n_lat},
                              {twin.up, twin.port, &t_rps, nullptr},
                              {scanned.up, scanned.port, &i_rps, nullptr}};
    constexpr int kTargets = 5;
    for (int r = 0; r < kRounds; ++r) {
      for (int k = 0; k < kTargets; ++k) {
        const Target& t = targets[(k + r) % kTargets];
        if (!t.up) continue;
        const WrkResult w = run_wrk(wrk, t.port, path, seconds);
        t.rps->push_back(w.rps);
        if (t.lat) t.lat->push_back(w.latency_ms);
        errors += w.errors;
      }
    }
    const WrkResult direct = run_wrk(wrk, backend_port, path, seconds);
    const double f = median(f_rps), n = median(n_rps), fb = median(b_rps), ft = median(t_rps),
                 fi = median(i_rps);
    const double bits = static_cast<double>(s.bytes) * 8 / 1e9;
    std::fprintf(stderr,
                 "bench: l7_proxy %s: fulcrum %.0f req/s (%.2f Gbps), nginx proxy %.0f req/s "
                 "(%.2f Gbps), ratio %.2f; with L7Balancer %.0f req/s; twin %.0f req/s (noise "
                 "floor %.2f); with StreamIDS %.0f req/s; backend direct %.0f req/s\n",
                 s.name, f, f * bits, n, n * bits, n > 0 ? f / n : 0, fb, ft, f > 0 ? ft / f : 0,
                 fi, direct.rps);
    rows.push_back(Obj()
                       .str("response", s.name)
                       .count("body_bytes", s.bytes)
                       .num("fulcrum_rps", f)
                       .num("fulcrum_gbps", f * bits)
                       .num("fulcrum_latency_ms", median(f_lat))
                       .num("nginx_rps", n)
                       .num("nginx_gbps", n * bits)
                       .num("nginx_latency_ms", median(n_lat))
                       .num("ratio", n > 0 ? f / n : 0)
                       .num("fulcrum_balancer_rps", fb)
                       .num("balancer_vs_empty_chain", f > 0 ? fb / f : 0)
                       .num("fulcrum_stream_ids_rps", fi)
                       .num("stream_ids_vs_empty_chain", f > 0 ? fi / f : 0)
                       .num("twin_rps", ft)
                       .num("twin_vs_fulcrum", f > 0 ? ft / f : 0)
                       .num("direct_rps", direct.rps)
                       .num("direct_gbps", direct.rps * bits)
                       .count("wrk_errors", errors)
                       .done());
  }
  fulcrum.stop();
  balanced.stop();
  scanned.stop();
  twin.stop();
  stop_process(nginx_proxy);
  stop_process(backend);
  const double balancer_ns = balancer_ns_per_request(ctx.seconds / 2);
  std::fprintf(stderr, "bench: l7_proxy: L7Balancer alone %.0f ns a request\n", balancer_ns);
  return Obj()
      .str("what",
           "wrk (1 thread, 32 connections) through Fulcrum's L7 proxy (empty chain) and through "
           "nginx as a reverse proxy (upstream keepalive), same nginx backend, 1 worker each, "
           "alternately, each in every place of the order once; medians of 4; Gbps = requests/s x "
           "body bytes x 8; "
           "fulcrum_balancer_rps: the chain L7Balancer(POOL p BACKEND) (the NF's cost); "
           "fulcrum_stream_ids_rps: the chain StreamIDS (330 synthetic rules) scanning responses; "
           "twin: a "
           "second empty-chain proxy, twin_vs_fulcrum is the run's noise floor")
      .count("workers", kWorkers)
      .num("balancer_ns_per_request", balancer_ns)
      .num("seconds_per_run", seconds)
      .raw("sizes", array(rows))
      .done();
}

}  // namespace

FULCRUM_BENCH_GROUP(90, "l7_proxy", bench_l7_proxy);

}  // namespace fulcrum::bench
