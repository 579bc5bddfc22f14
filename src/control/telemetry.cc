#include "control/telemetry.hh"

#include <rte_telemetry.h>

#include <atomic>
#include <cctype>
#include <charconv>
#include <mutex>
#include <string>

namespace fulcrum::control {
namespace {

std::atomic<LiveView*> g_view{nullptr};

// The latest state, or nullptr (the command then answers an error).
std::shared_ptr<const LiveState> latest() {
  LiveView* v = g_view.load();
  return v == nullptr ? nullptr : v->latest();
}

// DPDK copies names and strings into fixed buffers: longer ones are cut, never overflowed.
std::string fit(const std::string& s) {
  return s.size() < RTE_TEL_MAX_STRING_LEN ? s : s.substr(0, RTE_TEL_MAX_STRING_LEN - 1);
}

// A dict key as DPDK takes it: letters, digits, '_' and '/' only (it silently refuses others),
// so "IPLookup@3/no-route" is answered as "IPLookup_3/no_route".
std::string key(const std::string& s) {
  std::string k = fit(s);
  for (char& c : k)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '/') c = '_';
  return k;
}

int info(const char*, const char*, rte_tel_data* d) {
  const auto s = latest();
  if (!s) return -1;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "version", fit(s->report.meta.version).c_str());
  rte_tel_data_add_dict_string(d, "git_hash", fit(s->report.meta.git_hash).c_str());
  rte_tel_data_add_dict_string(d, "pipeline", fit(s->report.meta.pipeline).c_str());
  rte_tel_data_add_dict_int(d, "workers", s->report.workers);
  rte_tel_data_add_dict_u64(d, "uptime_ms", static_cast<uint64_t>(s->elapsed_s * 1e3));
  rte_tel_data_add_dict_int(d, "running", s->running ? 1 : 0);
  rte_tel_data_add_dict_u64(d, "snapshot", s->seq);
  return 0;
}

int stats(const char*, const char*, rte_tel_data* d) {
  const auto s = latest();
  if (!s) return -1;
  const RunReport& r = s->report;
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_u64(d, "packets_received", r.packets_in);
  rte_tel_data_add_dict_u64(d, "packets_created", r.packets_created);
  rte_tel_data_add_dict_u64(d, "packets_transmitted", r.packets_out);
  rte_tel_data_add_dict_u64(d, "packets_dropped", r.dropped);
  rte_tel_data_add_dict_u64(d, "packets_in_flight", r.queued);
  return 0;
}

int ports(const char*, const char*, rte_tel_data* d) {
  const auto s = latest();
  if (!s) return -1;
  rte_tel_data_start_array(d, RTE_TEL_INT_VAL);
  for (size_t p = 0; p < s->report.ports.size(); ++p)
    rte_tel_data_add_array_int(d, static_cast<int>(p));
  return 0;
}

int port(const char*, const char* params, rte_tel_data* d) {
  const auto s = latest();
  if (!s || params == nullptr) return -1;
  const std::string_view text(params);
  size_t index = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), index);
  if (ec != std::errc() || p != text.data() + text.size() || index >= s->report.ports.size())
    return -1;
  const PortReport& pr = s->report.ports[index];
  rte_tel_data_start_dict(d);
  rte_tel_data_add_dict_string(d, "spec", fit(pr.spec).c_str());
  rte_tel_data_add_dict_u64(d, "rx_packets", pr.rx_packets);
  rte_tel_data_add_dict_u64(d, "rx_bytes", pr.rx_bytes);
  rte_tel_data_add_dict_u64(d, "tx_packets", pr.tx_packets);
  rte_tel_data_add_dict_u64(d, "tx_bytes", pr.tx_bytes);
  return 0;
}

// A dict of up to RTE_TEL_MAX_DICT_ENTRIES of `items`, each as key(name_of(item)): count_of(item).
template <class Items, class NameOf, class CountOf>
int count_dict(rte_tel_data* d, const Items& items, NameOf name_of, CountOf count_of) {
  rte_tel_data_start_dict(d);
  size_t n = 0;
  for (const auto& item : items)
    if (n++ < RTE_TEL_MAX_DICT_ENTRIES)
      rte_tel_data_add_dict_u64(d, key(name_of(item)).c_str(), count_of(item));
  return 0;
}

int drops(const char*, const char*, rte_tel_data* d) {
  const auto s = latest();
  if (!s) return -1;
  return count_dict(
      d, s->report.drops, [](const auto& p) { return p.first; },
      [](const auto& p) { return p.second; });
}

int elements(const char*, const char*, rte_tel_data* d) {
  const auto s = latest();
  if (!s) return -1;
  return count_dict(
      d, s->report.elements, [](const ElementReport& e) { return e.name; },
      [](const ElementReport& e) { return e.in_packets; });
}

}  // namespace

void register_telemetry(LiveView& live) {
  g_view.store(&live);
  static std::once_flag once;
  std::call_once(once, [] {
    rte_telemetry_register_cmd("/fulcrum/info", info,
                               "Fulcrum's version, pipeline, workers and uptime");
    rte_telemetry_register_cmd("/fulcrum/stats", stats,
                               "The packet balance: received, created, transmitted, dropped, in "
                               "flight");
    rte_telemetry_register_cmd("/fulcrum/ports", ports, "Fulcrum's port indices");
    rte_telemetry_register_cmd("/fulcrum/port", port,
                               "One port's counters and device string. Parameter: port index");
    rte_telemetry_register_cmd("/fulcrum/drops", drops, "Drops by element and reason");
    rte_telemetry_register_cmd("/fulcrum/elements", elements, "Packets into each element");
  });
}

}  // namespace fulcrum::control
