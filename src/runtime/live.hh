// The live view of a running pipeline: what run()'s control thread publishes every live period
// for the control plane (HTTP endpoint, DPDK telemetry, SIGUSR1), built from worker snapshots
// (runtime/snapshot.hh). Readers take the latest state under a mutex the workers never touch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/result.hh"
#include "runtime/stats.hh"

namespace fulcrum {

// The pipeline as a graph (the same for every worker replica).
struct LiveGraph {
  struct Node {
    std::string name, class_name, loc;
    std::vector<std::string> drop_reasons;
    // Per output: the node it feeds and that node's input port (-1: unconnected).
    std::vector<std::pair<int, int>> next;
  };
  std::vector<Node> nodes;
};

// Rates over the window between two published states.
struct LiveRates {
  double window_s = 0;
  std::vector<double> port_rx_pps, port_tx_pps, port_rx_bps, port_tx_bps;
  std::vector<double> element_in_pps;
  std::vector<std::vector<double>> element_out_pps;  // per element and output: the edges
  double in_pps = 0, out_pps = 0, drop_pps = 0;
};

struct MempoolUse {
  std::string name;
  uint64_t size = 0, in_use = 0;
};

struct LiveState {
  uint64_t seq = 0;      // increases with every state published
  double elapsed_s = 0;  // since the run started
  bool running = true;   // false: the final report of a run that ended
  RunReport report;      // counters so far (queued: packets on a device at that moment)
  LiveRates rates;
  std::vector<MempoolUse> mempools;
};

LiveRates live_rates(const RunReport& now, const RunReport& then, double window_s);

class LiveView {
 public:
  std::shared_ptr<const LiveState> latest() const {
    std::lock_guard<std::mutex> lock(mu_);
    return state_;
  }
  void publish(std::shared_ptr<const LiveState> s) {
    std::lock_guard<std::mutex> lock(mu_);
    state_ = std::move(s);
  }
  std::shared_ptr<const LiveGraph> graph() const {
    std::lock_guard<std::mutex> lock(mu_);
    return graph_;
  }
  void set_graph(std::shared_ptr<const LiveGraph> g) {
    std::lock_guard<std::mutex> lock(mu_);
    graph_ = std::move(g);
  }

  // Hot reload through the control plane (runtime/reload.hh): run() sets it while tables can be
  // replaced. reload() runs on the caller's thread (never a worker's).
  using ReloadFn =
      std::function<Result<std::string>(const std::string& element, const std::string& file)>;
  void set_reload(ReloadFn f) {
    std::lock_guard<std::mutex> lock(mu_);
    reload_ = std::move(f);
  }
  Result<std::string> reload(const std::string& element, const std::string& file) const {
    ReloadFn f;
    {
      std::lock_guard<std::mutex> lock(mu_);
      f = reload_;
    }
    if (!f) return make_error("no run is in progress: nothing to reload");
    return f(element, file);
  }

 private:
  mutable std::mutex mu_;
  std::shared_ptr<const LiveState> state_;
  std::shared_ptr<const LiveGraph> graph_;
  ReloadFn reload_;
};

}  // namespace fulcrum
