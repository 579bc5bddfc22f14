#include "control/prometheus.hh"

#include <cstdio>
#include <map>

namespace fulcrum::control {
namespace {

// Samples of one metric family, written after its HELP and TYPE lines.
class Family {
 public:
  Family(std::string& out, std::string_view name, std::string_view type, std::string_view help)
      : out_(out), name_(name) {
    out_ += "# HELP " + name_ + " " + std::string(help) + "\n# TYPE " + name_ + " " +
            std::string(type) + "\n";
  }

  using Labels = std::initializer_list<std::pair<std::string_view, std::string>>;

  void sample(Labels labels, double value) {
    char num[40];
    std::snprintf(num, sizeof num, "%.17g", value);
    line(labels, num);
  }
  void sample(Labels labels, uint64_t value) { line(labels, std::to_string(value)); }

 private:
  void line(Labels labels, const std::string& value) {
    out_ += name_;
    if (labels.size() > 0) {
      out_ += "{";
      bool first = true;
      for (const auto& [k, v] : labels) {
        out_ += (first ? "" : ",") + std::string(k) + "=\"" + prometheus_label(v) + "\"";
        first = false;
      }
      out_ += "}";
    }
    out_ += " " + value + "\n";
  }

  std::string& out_;
  std::string name_;
};

void run_metrics(std::string& out, const LiveState& s) {
  const RunReport& r = s.report;
  Family(out, "fulcrum_build_info", "gauge", "The running binary and pipeline (value 1).")
      .sample({{"version", r.meta.version},
               {"git_hash", r.meta.git_hash},
               {"pipeline", r.meta.pipeline},
               {"pages", r.meta.hugepages ? "hugepages" : "4k"},
               {"packet_pools", r.meta.packet_pools}},
              uint64_t{1});
  Family(out, "fulcrum_running", "gauge", "1 while the run goes on, 0 once it has ended.")
      .sample({}, uint64_t{s.running ? 1u : 0u});
  Family(out, "fulcrum_uptime_seconds", "gauge", "Seconds since the run started.")
      .sample({}, s.elapsed_s);
  Family(out, "fulcrum_snapshot_sequence", "gauge",
         "Live states published so far (this one's number).")
      .sample({}, s.seq);
  Family(out, "fulcrum_workers", "gauge", "Worker threads, one per core.")
      .sample({}, static_cast<uint64_t>(r.workers));
  Family(out, "fulcrum_batch_size", "gauge", "Packets per received batch at most.")
      .sample({}, uint64_t{r.batch});
  Family(out, "fulcrum_tsc_hertz", "gauge", "The TSC rate cycle counts are measured in.")
      .sample({}, r.tsc_hz);
  Family reloads(out, "fulcrum_table_reloads_total", "counter",
                 "Hot reloads of tables: done (the new table in service) or refused (the file "
                 "did not load; the old table stayed).");
  reloads.sample({{"result", "done"}}, r.reloads);
  reloads.sample({{"result", "refused"}}, r.reload_failures);
}

void balance_metrics(std::string& out, const RunReport& r) {
  Family(out, "fulcrum_packets_received_total", "counter", "Packets received on all ports.")
      .sample({}, r.packets_in);
  Family(out, "fulcrum_packets_created_total", "counter",
         "Packets made inside the pipeline (source elements, copies).")
      .sample({}, r.packets_created);
  Family(out, "fulcrum_packets_transmitted_total", "counter", "Packets sent on all ports.")
      .sample({}, r.packets_out);
  Family(out, "fulcrum_packets_dropped_total", "counter",
         "Packets dropped, every element and reason.")
      .sample({}, r.dropped);
  Family(out, "fulcrum_packets_in_flight", "gauge",
         "Packets neither sent nor dropped yet (on a device). received + created = transmitted "
         "+ dropped + in flight.")
      .sample({}, r.queued);
}

void port_metrics(std::string& out, const RunReport& r) {
  auto per_port = [&](std::string_view name, std::string_view help, auto field) {
    Family f(out, name, "counter", help);
    for (size_t p = 0; p < r.ports.size(); ++p)
      f.sample({{"port", std::to_string(p)}, {"spec", r.ports[p].spec}}, field(r.ports[p]));
  };
  per_port("fulcrum_port_received_packets_total", "Packets received on the port.",
           [](const PortReport& p) { return p.rx_packets; });
  per_port("fulcrum_port_received_bytes_total", "Bytes received on the port.",
           [](const PortReport& p) { return p.rx_bytes; });
  per_port("fulcrum_port_transmitted_packets_total", "Packets sent on the port.",
           [](const PortReport& p) { return p.tx_packets; });
  per_port("fulcrum_port_transmitted_bytes_total", "Bytes sent on the port.",
           [](const PortReport& p) { return p.tx_bytes; });
  auto per_worker = [&](std::string_view name, std::string_view help, auto field) {
    Family f(out, name, "counter", help);
    for (size_t w = 0; w < r.per_worker.size(); ++w)
      f.sample({{"worker", std::to_string(w)}, {"cpu", std::to_string(r.per_worker[w].cpu)}},
               field(r.per_worker[w]));
  };
  per_worker("fulcrum_worker_received_packets_total", "Packets the worker received.",
             [](const WorkerReport& w) { return w.rx_packets; });
  per_worker("fulcrum_worker_transmitted_packets_total", "Packets the worker sent.",
             [](const WorkerReport& w) { return w.tx_packets; });
  per_worker("fulcrum_worker_dropped_packets_total", "Packets the worker dropped.",
             [](const WorkerReport& w) { return w.dropped; });
}

void element_metrics(std::string& out, const RunReport& r) {
  auto per_element = [&](std::string_view name, std::string_view type, std::string_view help,
                         auto field) {
    Family f(out, name, type, help);
    for (const ElementReport& e : r.elements)
      f.sample({{"element", e.name}, {"class", e.class_name}}, field(e));
  };
  per_element("fulcrum_element_packets_total", "counter", "Packets into the element.",
              [](const ElementReport& e) { return e.in_packets; });
  per_element("fulcrum_element_batches_total", "counter", "Batches the element processed.",
              [](const ElementReport& e) { return e.batches; });
  per_element("fulcrum_element_cycles_total", "counter",
              "TSC cycles inside the element's batch function, all workers.",
              [](const ElementReport& e) { return e.cycles; });
  per_element("fulcrum_element_cycles_per_packet", "gauge",
              "Mean TSC cycles per packet since the start (VPP's clocks per packet).",
              [](const ElementReport& e) {
                return e.in_packets > 0
                           ? static_cast<double>(e.cycles) / static_cast<double>(e.in_packets)
                           : 0.0;
              });
  {
    Family f(out, "fulcrum_element_output_packets_total", "counter",
             "Packets the element sent on an output (an edge of the graph).");
    for (const ElementReport& e : r.elements)
      for (size_t o = 0; o < e.out_packets.size(); ++o)
        f.sample({{"element", e.name}, {"class", e.class_name}, {"output", std::to_string(o)}},
                 e.out_packets[o]);
  }
  {
    Family f(out, "fulcrum_element_counter", "untyped",
             "Element-specific figures (named by the element, e.g. alerts, fraction).");
    for (const ElementReport& e : r.elements)
      for (const auto& [name, value] : e.counters)
        f.sample({{"element", e.name}, {"class", e.class_name}, {"name", name}}, value);
  }
  Family f(out, "fulcrum_drops_total", "counter",
           "Packets dropped, by element (\"runtime\" for the ports) and reason.");
  for (const auto& [where, n] : r.drops) {
    const size_t slash = where.rfind('/');
    f.sample({{"element", where.substr(0, slash)},
              {"reason", slash == std::string::npos ? "" : where.substr(slash + 1)}},
             n);
  }
}

void device_metrics(std::string& out, const LiveState& s) {
  const RunReport& r = s.report;
  constexpr double kSecondsPerUs = 1e-6;
  {
    Family f(out, "fulcrum_device_tasks_total", "counter", "Offload tasks by outcome.");
    for (const DeviceReport& d : r.devices) {
      const std::string emu = d.emulated ? "true" : "false";
      f.sample({{"device", d.label}, {"emulated", emu}, {"result", "ok"}}, d.tasks_ok);
      f.sample({{"device", d.label}, {"emulated", emu}, {"result", "failed"}}, d.tasks_failed);
    }
  }
  {
    Family f(out, "fulcrum_device_packets_total", "counter", "Packets sent to the device.");
    for (const DeviceReport& d : r.devices) f.sample({{"device", d.label}}, d.packets);
  }
  {
    Family f(out, "fulcrum_device_task_seconds", "gauge",
             "Mean time per completed task, by phase (queue, device, return, total).");
    for (const DeviceReport& d : r.devices) {
      f.sample({{"device", d.label}, {"phase", "queue"}}, d.queue_us * kSecondsPerUs);
      f.sample({{"device", d.label}, {"phase", "device"}}, d.device_us * kSecondsPerUs);
      f.sample({{"device", d.label}, {"phase", "return"}}, d.return_us * kSecondsPerUs);
      f.sample({{"device", d.label}, {"phase", "total"}}, d.task_us * kSecondsPerUs);
    }
  }
  Family size(out, "fulcrum_mempool_size", "gauge", "Buffers in the DPDK mempool.");
  for (const MempoolUse& m : s.mempools) size.sample({{"pool", m.name}}, m.size);
  Family use(out, "fulcrum_mempool_in_use", "gauge", "Buffers of the mempool in use.");
  for (const MempoolUse& m : s.mempools) use.sample({{"pool", m.name}}, m.in_use);
}

}  // namespace

std::string prometheus_label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out;
}

std::string prometheus_text(const LiveState& state) {
  std::string out;
  run_metrics(out, state);
  balance_metrics(out, state.report);
  port_metrics(out, state.report);
  element_metrics(out, state.report);
  device_metrics(out, state);
  return out;
}

}  // namespace fulcrum::control
