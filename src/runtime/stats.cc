#include "runtime/stats.hh"

#include <cstdio>
#include <sstream>

namespace fulcrum {
namespace {

std::string quoted(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      out += buf;
      continue;
    }
    out += c;
  }
  return out + "\"";
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

double per(uint64_t total, uint64_t n) {
  return n > 0 ? static_cast<double>(total) / static_cast<double>(n) : 0;
}

std::string pairs_json(const std::vector<std::pair<std::string, uint64_t>>& pairs) {
  std::string out = "{";
  for (size_t i = 0; i < pairs.size(); ++i)
    out += (i ? ", " : "") + quoted(pairs[i].first) + ": " + std::to_string(pairs[i].second);
  return out + "}";
}

double mpps(uint64_t packets, double seconds) {
  return seconds > 0 ? static_cast<double>(packets) / seconds / 1e6 : 0;
}

const char* pages(const RunMeta& m) {
  return m.hugepages ? "hugepages" : "4 KiB pages";
}

}  // namespace

std::string report_json(const RunReport& r) {
  std::ostringstream o;
  o << "{\n  \"duration_s\": " << number(r.duration_s) << ",\n  \"workers\": " << r.workers
    << ",\n  \"batch\": " << r.batch << ",\n  \"placement\": " << quoted(r.placement)
    << ",\n  \"stages\": " << r.stages << ",\n  \"version\": " << quoted(r.meta.version)
    << ",\n  \"git_hash\": " << quoted(r.meta.git_hash)
    << ",\n  \"pages\": " << quoted(pages(r.meta))
    << ",\n  \"packet_pools\": " << quoted(r.meta.packet_pools)
    << ",\n  \"pipeline\": " << quoted(r.meta.pipeline) << ",\n  \"notes\": [";
  for (size_t i = 0; i < r.meta.notes.size(); ++i) o << (i ? ", " : "") << quoted(r.meta.notes[i]);
  o << "],\n  \"packets_in\": " << r.packets_in << ",\n  \"bytes_in\": " << r.bytes_in
    << ",\n  \"packets_created\": " << r.packets_created
    << ",\n  \"packets_out\": " << r.packets_out << ",\n  \"bytes_out\": " << r.bytes_out
    << ",\n  \"dropped\": " << r.dropped << ",\n  \"queued\": " << r.queued
    << ",\n  \"stalls\": " << r.stalls << ",\n  \"reloads\": " << r.reloads
    << ",\n  \"reload_failures\": " << r.reload_failures
    << ",\n  \"mpps_in\": " << number(r.mpps_in()) << ",\n  \"mpps_out\": " << number(r.mpps_out())
    << ",\n  \"gbps_in\": " << number(r.gbps_in()) << ",\n  \"gbps_out\": " << number(r.gbps_out())
    << ",\n  \"balanced\": " << (r.balanced() ? "true" : "false") << ",\n  \"ports\": [";
  for (size_t i = 0; i < r.ports.size(); ++i) {
    const PortReport& p = r.ports[i];
    o << (i ? "," : "") << "\n    {\"index\": " << i << ", \"spec\": " << quoted(p.spec)
      << ", \"rx_packets\": " << p.rx_packets << ", \"rx_bytes\": " << p.rx_bytes
      << ", \"tx_packets\": " << p.tx_packets << ", \"tx_bytes\": " << p.tx_bytes << "}";
  }
  o << "\n  ],\n  \"per_worker\": [";
  for (size_t i = 0; i < r.per_worker.size(); ++i) {
    const WorkerReport& w = r.per_worker[i];
    o << (i ? "," : "") << "\n    {\"worker\": " << i << ", \"lcore\": " << w.lcore
      << ", \"cpu\": " << w.cpu << ", \"rx_packets\": " << w.rx_packets
      << ", \"tx_packets\": " << w.tx_packets << ", \"dropped\": " << w.dropped
      << ", \"stage\": " << w.stage << ", \"stage_packets\": " << w.stage_packets
      << ", \"stage_mpps\": " << number(mpps(w.stage_packets, r.duration_s))
      << ", \"cpu_s\": " << number(w.cpu_s) << ", \"tx_flush_cycles\": " << w.tx_flush_cycles
      << ", \"busy_cycles\": " << w.busy_cycles
      << ", \"stage_mpps_per_cpu\": " << number(mpps(w.stage_packets, w.cpu_s)) << "}";
  }
  o << "\n  ],\n  \"rings\": [";
  for (size_t i = 0; i < r.rings.size(); ++i) {
    const RingReport& g = r.rings[i];
    o << (i ? "," : "") << "\n    {\"link\": " << quoted(g.link) << ", \"producer\": " << g.producer
      << ", \"consumer\": " << g.consumer << ", \"capacity\": " << g.capacity
      << ", \"enqueued\": " << g.enqueued << ", \"dequeued\": " << g.dequeued
      << ", \"back_pressure\": " << g.back_pressure << ", \"max_occupancy\": " << g.max_occupancy
      << ", \"dequeue_cycles_per_packet\": " << number(per(g.dequeue_cycles, g.dequeued)) << "}";
  }
  o << (r.rings.empty() ? "]" : "\n  ]") << ",\n  \"elements\": [";
  for (size_t i = 0; i < r.elements.size(); ++i) {
    const ElementReport& e = r.elements[i];
    o << (i ? "," : "") << "\n    {\"name\": " << quoted(e.name)
      << ", \"class\": " << quoted(e.class_name) << ", \"in_packets\": " << e.in_packets
      << ", \"batches\": " << e.batches << ", \"cycles\": " << e.cycles
      << ", \"cycles_per_packet\": " << per(e.cycles, e.in_packets)
      << ", \"cycles_per_batch\": " << per(e.cycles, e.batches) << ", \"ns_per_packet\": "
      << (r.tsc_hz > 0 ? per(e.cycles, e.in_packets) * 1e9 / r.tsc_hz : 0)
      << ", \"out_packets\": [";
    for (size_t k = 0; k < e.out_packets.size(); ++k) o << (k ? ", " : "") << e.out_packets[k];
    o << "], \"drops\": " << pairs_json(e.drops) << ", \"counters\": " << pairs_json(e.counters)
      << "}";
  }
  o << "\n  ],\n  \"devices\": [";
  for (size_t i = 0; i < r.devices.size(); ++i) {
    const DeviceReport& d = r.devices[i];
    o << (i ? "," : "") << "\n    {\"device\": " << quoted(d.label)
      << ", \"emulated\": " << (d.emulated ? "true" : "false") << ", \"batches\": " << d.batches
      << ", \"packets\": " << d.packets << ", \"tasks_ok\": " << d.tasks_ok
      << ", \"tasks_failed\": " << d.tasks_failed << ", \"task_us\": " << d.task_us
      << ", \"queue_us\": " << d.queue_us << ", \"device_us\": " << d.device_us
      << ", \"return_us\": " << d.return_us << ", \"busy_s\": " << d.busy_s
      << ", \"releases\": " << d.releases << ", \"reacquires\": " << d.reacquires
      << ", \"released_s\": " << d.released_s << "}";
  }
  o << (r.devices.empty() ? "]" : "\n  ]")
    << ",\n  \"energy\": {\"measured\": " << (r.energy.measured ? "true" : "false")
    << ", \"basis\": " << quoted(r.energy.basis()) << ", \"source\": " << quoted(r.energy.source)
    << ", \"joules\": " << r.energy.joules << ", \"watts\": " << r.energy.watts
    << ", \"joules_per_mbit\": " << r.energy.joules_per_mbit
    << ", \"unused_devices_joules\": " << r.energy.unused_joules
    << ", \"joules_per_mbit_unused_off\": " << r.energy.joules_per_mbit_unused_off
    << ", \"devices\": [";
  for (size_t i = 0; i < r.energy.devices.size(); ++i) {
    const DeviceEnergy& d = r.energy.devices[i];
    o << (i ? ", " : "") << "{\"device\": " << quoted(d.device)
      << ", \"basis\": " << quoted(d.measured ? "measured" : "modelled")
      << ", \"source\": " << quoted(d.source)
      << ", \"why_not_measured\": " << quoted(d.why_not_measured) << ", \"joules\": " << d.joules
      << ", \"watts\": " << d.watts << ", \"joules_per_mbit\": " << d.joules_per_mbit
      << ", \"unused\": " << (d.unused ? "true" : "false") << "}";
  }
  o << "]}"
    << ",\n  \"drops\": " << pairs_json(r.drops) << ",\n  \"output_losses\": [";
  for (size_t i = 0; i < r.output_losses.size(); ++i) {
    const OutputLoss& l = r.output_losses[i];
    o << (i ? "," : "") << "\n    {\"what\": " << quoted(l.what) << ", \"unit\": " << quoted(l.unit)
      << ", \"lost\": " << l.lost << ", \"error\": " << quoted(l.error) << "}";
  }
  o << (r.output_losses.empty() ? "]" : "\n  ]") << "\n}\n";
  return o.str();
}

std::string report_text(const RunReport& r) {
  std::ostringstream o;
  char line[256];
  std::snprintf(line, sizeof line, "%.3f s, %d worker(s), batch %u", r.duration_s, r.workers,
                r.batch);
  o << line << (r.stages > 1 ? ", placement " + r.placement : std::string()) << "\n";
  o << "fulcrum " << r.meta.version << " (git " << r.meta.git_hash << "), " << pages(r.meta)
    << (r.meta.hugepages || r.meta.packet_pools.empty()
            ? ""
            : " (packet pools " + r.meta.packet_pools + ")")
    << (r.meta.pipeline.empty() ? "" : ", " + r.meta.pipeline) << "\n";
  std::snprintf(line, sizeof line, "in   %12llu packets  %8.2f Mpps  %8.2f Gbps\n",
                static_cast<unsigned long long>(r.packets_in), r.mpps_in(), r.gbps_in());
  o << line;
  std::snprintf(line, sizeof line, "out  %12llu packets  %8.2f Mpps  %8.2f Gbps\n",
                static_cast<unsigned long long>(r.packets_out), r.mpps_out(), r.gbps_out());
  o << line;
  o << "ports:\n";
  for (size_t i = 0; i < r.ports.size(); ++i) {
    const PortReport& p = r.ports[i];
    std::snprintf(line, sizeof line, "  [%zu] rx %12llu  tx %12llu  %s\n", i,
                  static_cast<unsigned long long>(p.rx_packets),
                  static_cast<unsigned long long>(p.tx_packets), p.spec.c_str());
    o << line;
  }
  if (r.per_worker.size() > 1) {
    o << "workers:\n";
    for (size_t i = 0; i < r.per_worker.size(); ++i) {
      const WorkerReport& w = r.per_worker[i];
      std::snprintf(line, sizeof line, "  [%zu] cpu %-3d rx %12llu  tx %12llu  dropped %llu", i,
                    w.cpu, static_cast<unsigned long long>(w.rx_packets),
                    static_cast<unsigned long long>(w.tx_packets),
                    static_cast<unsigned long long>(w.dropped));
      o << line;
      if (r.stages > 1) {
        std::snprintf(line, sizeof line, "  stage %u: in %llu (%.2f Mpps; %.2f per CPU-second)",
                      w.stage, static_cast<unsigned long long>(w.stage_packets),
                      mpps(w.stage_packets, r.duration_s), mpps(w.stage_packets, w.cpu_s));
        o << line;
      }
      o << "\n";
    }
  }
  if (!r.rings.empty()) o << "rings:\n";
  for (const RingReport& g : r.rings) {
    std::snprintf(line, sizeof line,
                  "  %-24s worker %d -> %d  enqueued %llu  dequeued %llu (%.1f cyc/pkt)  "
                  "back-pressure %llu  max %llu of %u\n",
                  g.link.c_str(), g.producer, g.consumer,
                  static_cast<unsigned long long>(g.enqueued),
                  static_cast<unsigned long long>(g.dequeued), per(g.dequeue_cycles, g.dequeued),
                  static_cast<unsigned long long>(g.back_pressure),
                  static_cast<unsigned long long>(g.max_occupancy), g.capacity);
    o << line;
  }
  o << "elements:\n";
  for (const ElementReport& e : r.elements) {
    std::snprintf(line, sizeof line, "  %-24s %-16s in %12llu  %6.1f cyc/pkt", e.name.c_str(),
                  e.class_name.c_str(), static_cast<unsigned long long>(e.in_packets),
                  per(e.cycles, e.in_packets));
    o << line;
    for (size_t k = 0; k < e.out_packets.size(); ++k)
      o << "  out[" << k << "] " << e.out_packets[k];
    for (const auto& c : e.counters) o << "  " << c.first << " " << c.second;
    o << "\n";
  }
  for (const DeviceReport& d : r.devices) {
    if (d.tasks_ok + d.tasks_failed == 0) continue;
    std::snprintf(line, sizeof line,
                  "device %s%s: %llu tasks (%llu failed), per task %.1f us = queue %.1f + device "
                  "%.1f + return %.1f\n",
                  d.label.c_str(), d.emulated ? " [emulated: a model, not a GPU]" : "",
                  static_cast<unsigned long long>(d.tasks_ok + d.tasks_failed),
                  static_cast<unsigned long long>(d.tasks_failed), d.task_us, d.queue_us,
                  d.device_us, d.return_us);
    o << line;
  }
  for (const DeviceReport& d : r.devices) {
    if (d.releases == 0) continue;
    std::snprintf(line, sizeof line,
                  "device %s: released %llu times when idle, taken back %llu times, %.2f s "
                  "released\n",
                  d.label.c_str(), static_cast<unsigned long long>(d.releases),
                  static_cast<unsigned long long>(d.reacquires), d.released_s);
    o << line;
  }
  if (r.energy.devices.empty()) {
    o << "energy: not measured (" << r.energy.source << ")\n";
  } else {
    std::snprintf(line, sizeof line, "energy: %s (%s): %.2f J, %.1f W, %.4f J/Mbit out\n",
                  r.energy.basis(), r.energy.source.c_str(), r.energy.joules, r.energy.watts,
                  r.energy.joules_per_mbit);
    o << line;
    for (const DeviceEnergy& d : r.energy.devices) {
      std::snprintf(line, sizeof line, "  %s: %s (%s), %.2f J, %.1f W, %.4f J/Mbit out\n",
                    d.device.c_str(), d.measured ? "measured" : "modelled", d.source.c_str(),
                    d.joules, d.watts, d.joules_per_mbit);
      o << line;
      if (!d.measured) o << "    not measured: " << d.why_not_measured << "\n";
    }
    if (r.energy.unused_joules > 0) {
      std::snprintf(line, sizeof line,
                    "  unused devices drew %.2f J idle; powered off: %.4f J/Mbit out\n",
                    r.energy.unused_joules, r.energy.joules_per_mbit_unused_off);
      o << line;
    }
  }
  if (!r.drops.empty()) {
    o << "drops:\n";
    for (const auto& d : r.drops) {
      std::snprintf(line, sizeof line, "  %-40s %12llu\n", d.first.c_str(),
                    static_cast<unsigned long long>(d.second));
      o << line;
    }
  }
  std::snprintf(
      line, sizeof line, "balance: in %llu = out %llu + dropped %llu + queued %llu  [%s]\n",
      static_cast<unsigned long long>(r.packets_in) + r.packets_created,
      static_cast<unsigned long long>(r.packets_out), static_cast<unsigned long long>(r.dropped),
      static_cast<unsigned long long>(r.queued), r.balanced() ? "ok" : "MISMATCH");
  o << line;
  if (r.stalls > 0) o << "watchdog: " << r.stalls << " worker stall(s) reported\n";
  if (r.reloads + r.reload_failures > 0)
    o << "reloads: " << r.reloads << " table(s) replaced, " << r.reload_failures << " refused\n";
  for (const OutputLoss& l : r.output_losses)
    o << "output lost: " << l.what << ": " << l.lost << " " << l.unit << " not written"
      << (l.error.empty() ? "" : " (" + l.error + ")") << "\n";
  return o.str();
}

}  // namespace fulcrum
