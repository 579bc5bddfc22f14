#include "control/api.hh"

#include <nlohmann/json.hpp>

namespace fulcrum::control {

std::string stats_json(const LiveState& s) {
  using nlohmann::json;
  json j;
  j["seq"] = s.seq;
  j["elapsed_s"] = s.elapsed_s;
  j["running"] = s.running;
  j["report"] = json::parse(report_json(s.report), nullptr, false);
  // What the report's text leaves out or rounds, exact as /metrics has it (the dashboard draws
  // these and is compared with /metrics).
  if (j["report"].is_object()) {
    j["report"]["tsc_hz"] = s.report.tsc_hz;
    json& devices = j["report"]["devices"];
    for (size_t i = 0; i < s.report.devices.size() && i < devices.size(); ++i) {
      const DeviceReport& d = s.report.devices[i];
      devices[i]["task_us"] = d.task_us;
      devices[i]["queue_us"] = d.queue_us;
      devices[i]["device_us"] = d.device_us;
      devices[i]["return_us"] = d.return_us;
    }
  }
  const LiveRates& r = s.rates;
  j["rates"] = {{"window_s", r.window_s},
                {"in_pps", r.in_pps},
                {"out_pps", r.out_pps},
                {"drop_pps", r.drop_pps},
                {"port_rx_pps", r.port_rx_pps},
                {"port_tx_pps", r.port_tx_pps},
                {"port_rx_bps", r.port_rx_bps},
                {"port_tx_bps", r.port_tx_bps},
                {"element_in_pps", r.element_in_pps},
                {"element_out_pps", r.element_out_pps}};
  json pools = json::array();
  for (const MempoolUse& m : s.mempools)
    pools.push_back({{"name", m.name}, {"size", m.size}, {"in_use", m.in_use}});
  j["mempools"] = std::move(pools);
  return j.dump(1);
}

std::string graph_json(const LiveGraph& g) {
  using nlohmann::json;
  json nodes = json::array();
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const LiveGraph::Node& n = g.nodes[i];
    json outputs = json::array();
    for (const auto& [to, port] : n.next) outputs.push_back({{"to", to}, {"port", port}});
    nodes.push_back({{"id", i},
                     {"name", n.name},
                     {"class", n.class_name},
                     {"loc", n.loc},
                     {"drop_reasons", n.drop_reasons},
                     {"outputs", std::move(outputs)}});
  }
  return json{{"nodes", std::move(nodes)}}.dump(1);
}

}  // namespace fulcrum::control
