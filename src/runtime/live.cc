#include "runtime/live.hh"

namespace fulcrum {
namespace {

double rate(uint64_t now, uint64_t then, double window_s) {
  return now >= then && window_s > 0 ? static_cast<double>(now - then) / window_s : 0;
}

}  // namespace

LiveRates live_rates(const RunReport& now, const RunReport& then, double window_s) {
  constexpr double kBitsPerByte = 8;
  LiveRates r;
  r.window_s = window_s;
  for (size_t p = 0; p < now.ports.size(); ++p) {
    const PortReport none;
    const PortReport& a = now.ports[p];
    const PortReport& b = p < then.ports.size() ? then.ports[p] : none;
    r.port_rx_pps.push_back(rate(a.rx_packets, b.rx_packets, window_s));
    r.port_tx_pps.push_back(rate(a.tx_packets, b.tx_packets, window_s));
    r.port_rx_bps.push_back(rate(a.rx_bytes, b.rx_bytes, window_s) * kBitsPerByte);
    r.port_tx_bps.push_back(rate(a.tx_bytes, b.tx_bytes, window_s) * kBitsPerByte);
  }
  for (size_t e = 0; e < now.elements.size(); ++e) {
    const ElementReport none;
    const ElementReport& a = now.elements[e];
    const ElementReport& b = e < then.elements.size() ? then.elements[e] : none;
    r.element_in_pps.push_back(rate(a.in_packets, b.in_packets, window_s));
    std::vector<double>& outs = r.element_out_pps.emplace_back();
    for (size_t o = 0; o < a.out_packets.size(); ++o)
      outs.push_back(
          rate(a.out_packets[o], o < b.out_packets.size() ? b.out_packets[o] : 0, window_s));
  }
  r.in_pps = rate(now.packets_in, then.packets_in, window_s);
  r.out_pps = rate(now.packets_out, then.packets_out, window_s);
  r.drop_pps = rate(now.dropped, then.dropped, window_s);
  return r;
}

}  // namespace fulcrum
