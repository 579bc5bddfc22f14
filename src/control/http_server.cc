#include "control/http_server.hh"

#include <httplib.h>

#include <charconv>
#include <cstring>
#include <nlohmann/json.hpp>

#include "control/api.hh"
#include "control/dashboard_files.hh"
#include "control/prometheus.hh"

namespace fulcrum::control {
namespace {

constexpr int kMaxPort = 65535;
constexpr const char* kPrometheusType = "text/plain; version=0.0.4; charset=utf-8";
constexpr const char* kJsonType = "application/json";
constexpr int kNotLiveYet = 503;
constexpr int kBadRequest = 400;
constexpr int kNotFound = 404;

}  // namespace

Result<ListenAddress> parse_listen_address(const std::string& text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos || colon == 0)
    return make_error("--http '" + text + "': expected HOST:PORT, e.g. 127.0.0.1:9090");
  ListenAddress a;
  a.host = text.substr(0, colon);
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']')
    a.host = a.host.substr(1, a.host.size() - 2);
  const std::string port = text.substr(colon + 1);
  auto [p, ec] = std::from_chars(port.data(), port.data() + port.size(), a.port);
  if (ec != std::errc() || p != port.data() + port.size() || a.port < 0 || a.port > kMaxPort)
    return make_error("--http '" + text + "': the port must be 0..65535 (0: any free port)");
  return a;
}

ControlServer::ControlServer(LiveView& live)
    : live_(live), server_(std::make_unique<httplib::Server>()) {}

ControlServer::~ControlServer() {
  server_->stop();
  if (thread_.joinable()) thread_.join();
}

Result<std::unique_ptr<ControlServer>> ControlServer::start(const ListenAddress& where,
                                                            LiveView& live) {
  std::unique_ptr<ControlServer> s(new ControlServer(live));
  s->routes();
  int port = where.port;
  if (port == 0) {
    port = s->server_->bind_to_any_port(where.host);
    if (port < 0) port = 0;
  } else if (!s->server_->bind_to_port(where.host, port)) {
    port = 0;
  }
  if (port == 0)
    return make_error("--http: cannot listen on " + where.host + ":" + std::to_string(where.port) +
                      ": " + std::strerror(errno));
  const bool v6 = where.host.find(':') != std::string::npos;
  s->url_ =
      "http://" + (v6 ? "[" + where.host + "]" : where.host) + ":" + std::to_string(port) + "/";
  httplib::Server* server = s->server_.get();
  s->thread_ = std::thread([server] { server->listen_after_bind(); });
  return s;
}

void ControlServer::routes() {
  httplib::Server& sv = *server_;
  auto with_state = [this](auto&& body) {
    return [this, body](const httplib::Request&, httplib::Response& res) {
      const std::shared_ptr<const LiveState> state = live_.latest();
      if (!state) {
        res.status = kNotLiveYet;
        res.set_content("the run has not started yet\n", "text/plain");
        return;
      }
      body(*state, res);
    };
  };
  sv.Get("/metrics", with_state([](const LiveState& s, httplib::Response& res) {
           res.set_content(prometheus_text(s), kPrometheusType);
         }));
  sv.Get("/api/stats", with_state([](const LiveState& s, httplib::Response& res) {
           res.set_content(stats_json(s), kJsonType);
         }));
  sv.Get("/api/health", with_state([](const LiveState& s, httplib::Response& res) {
           res.set_content(s.running ? "ok\n" : "ended\n", "text/plain");
         }));
  sv.Get("/api/graph", [this](const httplib::Request&, httplib::Response& res) {
    const std::shared_ptr<const LiveGraph> g = live_.graph();
    if (!g) {
      res.status = kNotLiveYet;
      res.set_content("the pipeline is not built yet\n", "text/plain");
      return;
    }
    res.set_content(graph_json(*g), kJsonType);
  });
  sv.Post("/api/reload", [this](const httplib::Request& req, httplib::Response& res) {
    nlohmann::json body = req.body.empty() ? nlohmann::json::object()
                                           : nlohmann::json::parse(req.body, nullptr, false);
    if (!body.is_object() || (body.contains("element") && !body["element"].is_string()) ||
        (body.contains("file") && !body["file"].is_string())) {
      res.status = kBadRequest;
      res.set_content(
          R"({"ok": false, "error": "expected a JSON object {\"element\": NAME, \"file\": PATH}"})",
          kJsonType);
      return;
    }
    Result<std::string> done =
        live_.reload(body.value("element", std::string()), body.value("file", std::string()));
    nlohmann::json out = done ? nlohmann::json{{"ok", true}, {"reloaded", done.value()}}
                              : nlohmann::json{{"ok", false}, {"error", done.error()}};
    if (!done) res.status = kBadRequest;
    res.set_content(out.dump(), kJsonType);
  });
  for (const DashboardFile& f : dashboard_files()) {
    auto serve = [f](const httplib::Request&, httplib::Response& res) {
      res.set_content(std::string(f.content), std::string(f.content_type));
    };
    sv.Get(std::string(f.path), serve);
    if (f.path == "/index.html") sv.Get("/", serve);
  }
  sv.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (res.status == kNotFound) res.set_content("not found\n", "text/plain");
  });
}

}  // namespace fulcrum::control
