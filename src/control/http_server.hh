// The HTTP control plane (`fulcrum run --http ADDR:PORT`): a cpp-httplib server on threads of
// the control core (never a worker core) serving, from the live view (runtime/live.hh):
//   GET /metrics      Prometheus text exposition (control/prometheus.hh)
//   GET /api/stats    the live state as JSON (control/api.hh)
//   GET /api/graph    the pipeline graph as JSON
//   GET /api/health   200 "ok" once the run is live
//   POST /api/reload  replace tables (JSON body {"element": NAME, "file": PATH}, both optional:
//                     every reloadable table from the file it was loaded from; LiveView::reload)
//   GET /             the dashboard (control/dashboard/, embedded in the binary)
// Reading never touches a worker: handlers copy the latest published state's pointer.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "core/result.hh"
#include "runtime/live.hh"

namespace httplib {
class Server;
}

namespace fulcrum::control {

// "HOST:PORT" or "[V6]:PORT" (PORT 0: any free port).
struct ListenAddress {
  std::string host;
  int port = 0;
};
Result<ListenAddress> parse_listen_address(const std::string& text);

class ControlServer {
 public:
  // Binds now (an address in use is an error here, before the run) and serves from a thread.
  static Result<std::unique_ptr<ControlServer>> start(const ListenAddress& where, LiveView& live);
  ~ControlServer();
  ControlServer(const ControlServer&) = delete;
  ControlServer& operator=(const ControlServer&) = delete;

  // http://HOST:PORT/ with the port actually bound.
  const std::string& url() const { return url_; }

 private:
  explicit ControlServer(LiveView& live);
  void routes();

  LiveView& live_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string url_;
};

}  // namespace fulcrum::control
