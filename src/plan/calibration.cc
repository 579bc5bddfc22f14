#include "plan/calibration.hh"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/text_file.hh"

namespace fulcrum::plan {
namespace {

using nlohmann::json;

json memory_json(const MemoryProfile& m) {
  json j = {{"working_set_bytes", m.working_set_bytes},
            {"accesses_per_packet", m.accesses_per_packet},
            {"per_worker", m.per_worker}};
  if (m.table_bytes > 0) j["table_bytes"] = m.table_bytes;
  if (m.prefetch_group > 0)
    j["lookup"] = {{"prefetch_group", m.prefetch_group},
                   {"compute_cycles", m.compute_cycles},
                   {"call_cycles", m.call_cycles},
                   {"group_cycles", m.group_cycles},
                   {"levels", m.levels},
                   {"lines_per_level", m.lines_per_level},
                   {"state_bytes_per_packet", m.state_bytes_per_packet},
                   {"hot_cycles", m.hot_cycles}};
  if (m.prefetch_group > 0 && m.within_group_levels > 0)
    j["lookup"]["within_group_levels"] = m.within_group_levels;
  return j;
}

// Reads the fields of one JSON object, each error naming the field by its dotted path.
class Reader {
 public:
  Reader(const json& j, std::string path, std::string where)
      : j_(j), path_(std::move(path)), where_(std::move(where)) {}

  const json* field(const char* key) {
    if (!error_.empty()) return nullptr;
    if (!j_.is_object()) {
      fail(where_.empty() ? "the file" : where_, "must be an object");
      return nullptr;
    }
    const auto it = j_.find(key);
    if (it == j_.end()) {
      fail(name(key), "missing");
      return nullptr;
    }
    return &*it;
  }
  // A finite number >= `min` (> `min` when `strict`).
  void number(const char* key, double& out, double min = 0, bool strict = false) {
    const json* v = field(key);
    if (v == nullptr) return;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < min ||
        (strict && v->get<double>() == min)) {
      fail(name(key), std::string("must be a number ") + (strict ? "> " : ">= ") + fmt(min));
      return;
    }
    out = v->get<double>();
  }
  // Any finite number.
  void signed_number(const char* key, double& out) {
    const json* v = field(key);
    if (v == nullptr) return;
    if (!v->is_number() || !std::isfinite(v->get<double>()))
      return fail(name(key), "must be a number");
    out = v->get<double>();
  }
  template <class U>
  void count(const char* key, U& out, U min = 0) {
    const json* v = field(key);
    if (v == nullptr) return;
    if (!v->is_number_unsigned() || v->get<uint64_t>() < static_cast<uint64_t>(min)) {
      fail(name(key), "must be an integer >= " + std::to_string(min));
      return;
    }
    out = static_cast<U>(v->get<uint64_t>());
  }
  void boolean(const char* key, bool& out) {
    const json* v = field(key);
    if (v == nullptr) return;
    if (!v->is_boolean()) return fail(name(key), "must be true or false");
    out = v->get<bool>();
  }
  void string(const char* key, std::string& out) {
    const json* v = field(key);
    if (v == nullptr) return;
    if (!v->is_string()) return fail(name(key), "must be a string");
    out = v->get<std::string>();
  }
  Reader sub(const char* key) {
    const json* v = field(key);
    static const json kNull;
    Reader r(v != nullptr ? *v : kNull, path_, name(key));
    if (v == nullptr) r.error_ = error_;
    return r;
  }
  void take(const Reader& r) {
    if (error_.empty()) error_ = r.error_;
  }
  const std::string& error() const { return error_; }
  const json& value() const { return j_; }
  // Whether the object holds `key` (an optional field).
  bool has(const char* key) const { return j_.is_object() && j_.contains(key); }
  std::string name(const std::string& key) const {
    return where_.empty() ? key : where_ + "." + key;
  }
  void fail(const std::string& field, const std::string& what) {
    if (error_.empty()) error_ = path_ + ": field " + field + ": " + what;
  }

 private:
  static std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }
  const json& j_;
  std::string path_;
  std::string where_;
  std::string error_;
};

// A JSON array of out.size() numbers >= 0 into out; else the reader fails, naming `name`.
template <size_t N>
void read_numbers(Reader& r, const json& row, const std::string& name, std::array<double, N>& out) {
  if (!row.is_array() || row.size() != N) {
    r.fail(name, "must be an array of " + std::to_string(N) + " numbers");
    return;
  }
  for (size_t i = 0; r.error().empty() && i < N; ++i) {
    if (!row[i].is_number() || row[i].get<double>() < 0)
      r.fail(name + "[" + std::to_string(i) + "]", "must be a number >= 0");
    else
      out[i] = row[i].get<double>();
  }
}

void read_memory_profile(Reader& r, MemoryProfile& m) {
  r.count("working_set_bytes", m.working_set_bytes);
  r.number("accesses_per_packet", m.accesses_per_packet);
  r.boolean("per_worker", m.per_worker);
  if (r.error().empty() && r.has("table_bytes")) r.count("table_bytes", m.table_bytes);
  if (!r.error().empty() || !r.value().is_object() || !r.value().contains("lookup")) return;
  Reader l = r.sub("lookup");
  l.count("prefetch_group", m.prefetch_group, 1u);
  l.number("compute_cycles", m.compute_cycles);
  l.number("call_cycles", m.call_cycles);
  l.number("group_cycles", m.group_cycles);
  l.number("levels", m.levels);
  l.number("lines_per_level", m.lines_per_level);
  l.number("state_bytes_per_packet", m.state_bytes_per_packet);
  if (const json* hot = l.field("hot_cycles"); hot != nullptr) {
    const std::string name = l.name("hot_cycles");
    if (!hot->is_array() || hot->size() != m.hot_cycles.size())
      l.fail(name, "must be an array of " + std::to_string(m.hot_cycles.size()) + " rows");
    for (size_t b = 0; l.error().empty() && b < m.hot_cycles.size(); ++b)
      read_numbers(l, (*hot)[b], name + "[" + std::to_string(b) + "]", m.hot_cycles[b]);
  }
  if (l.error().empty() && l.has("within_group_levels"))
    l.number("within_group_levels", m.within_group_levels);
  r.take(l);
}

// Line and column of byte `offset` of `text` (1-based).
std::pair<size_t, size_t> line_col(const std::string& text, size_t offset) {
  size_t line = 1, col = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// The frame's cache lines (at least one).
double frame_lines(double frame_bytes, size_t line_bytes) {
  const double line = static_cast<double>(std::max<size_t>(line_bytes, 1));
  return std::max(1.0, std::ceil(frame_bytes / line));
}

// Linear in the frame's lines through the points (side: a point's cost), the end segments
// extended.
template <class Side>
double interpolate(const HandoffCost& h, double frame_bytes, size_t line_bytes, Side side) {
  const std::vector<HandoffPoint>& pts = h.points;
  if (pts.size() == 1 || frame_bytes <= 0) return side(pts.front());
  const double x = frame_lines(frame_bytes, line_bytes);
  size_t hi = 1;
  while (hi + 1 < pts.size() && frame_lines(pts[hi].frame_bytes, line_bytes) < x) ++hi;
  const double x0 = frame_lines(pts[hi - 1].frame_bytes, line_bytes);
  const double x1 = frame_lines(pts[hi].frame_bytes, line_bytes);
  const double y0 = side(pts[hi - 1]), y1 = side(pts[hi]);
  if (x1 <= x0) return y1;
  return y0 + (y1 - y0) * (x - x0) / (x1 - x0);
}

// A point's cost (`cost`: which side) carried into the cross-CPU regime of the ring `now`: the
// share that moves with the ring, the smallest point's cost over its ring (at least 0), follows
// the ring; the rest (a larger frame's lines, the spread's and the scan's extra work) stays as
// measured. As measured without `now`, or where the point or the smallest point has no ring.
template <class Cost>
double carried(const HandoffCost& h, const HandoffPoint& p, const RingCost* now, Cost cost) {
  const double r = now != nullptr ? ring_cycles(*now) : 0;
  const HandoffPoint& smallest = h.points.front();
  if (r <= 0 || p.ring_cycles <= 0 || smallest.ring_cycles <= 0) return cost(p);
  const double share = std::max(0.0, cost(smallest)) / smallest.ring_cycles;
  return cost(p) + share * (r - p.ring_cycles);
}

double producer_cost(const HandoffPoint& p) {
  return p.producer_cycles_per_packet;
}
double consumer_cost(const HandoffPoint& p) {
  return p.consumer_cycles_per_packet;
}

json point_json(const HandoffPoint& p) {
  return {{"frame_bytes", p.frame_bytes},
          {"producer_cycles_per_packet", p.producer_cycles_per_packet},
          {"consumer_cycles_per_packet", p.consumer_cycles_per_packet},
          {"clone_cycles_per_packet", p.clone_cycles_per_packet},
          {"clone_io_cycles_per_packet", p.clone_io_cycles_per_packet},
          {"consumer_stage_cycles_per_packet", p.consumer_stage_cycles_per_packet},
          {"consumer_elements_clone_cycles", p.consumer_elements_clone_cycles},
          {"producer_io_cycles_per_packet", p.producer_io_cycles_per_packet},
          {"consumer_bound", p.consumer_bound},
          {"ring_cycles", p.ring_cycles},
          {"line_read_cycles", p.line_read_cycles}};
}

json handoff_json(const HandoffCost& h) {
  json points = json::array();
  for (const HandoffPoint& p : h.points) points.push_back(point_json(p));
  json out = {{"cross_core", h.cross_core}, {"batch", h.batch},           {"runs", h.runs},
              {"attempts", h.attempts},     {"consistent", h.consistent}, {"points", points}};
  if (h.spread.frame_bytes != 0) out["spread"] = point_json(h.spread);
  if (h.scan.frame_bytes != 0) out["scan"] = point_json(h.scan);
  return out;
}

void read_point(Reader& pr, HandoffPoint& pt) {
  pr.count("frame_bytes", pt.frame_bytes, 1u);
  pr.signed_number("producer_cycles_per_packet", pt.producer_cycles_per_packet);
  pr.number("consumer_cycles_per_packet", pt.consumer_cycles_per_packet);
  pr.number("clone_cycles_per_packet", pt.clone_cycles_per_packet);
  pr.number("clone_io_cycles_per_packet", pt.clone_io_cycles_per_packet);
  pr.number("consumer_stage_cycles_per_packet", pt.consumer_stage_cycles_per_packet);
  pr.number("consumer_elements_clone_cycles", pt.consumer_elements_clone_cycles);
  pr.number("producer_io_cycles_per_packet", pt.producer_io_cycles_per_packet);
  pr.boolean("consumer_bound", pt.consumer_bound);
  pr.number("ring_cycles", pt.ring_cycles);
  if (pr.has("line_read_cycles")) pr.number("line_read_cycles", pt.line_read_cycles);
}

}  // namespace

double handoff_producer_cycles(const HandoffCost& h, const RingCost& ring, double frame_bytes,
                               size_t line_bytes, unsigned batch, const RingCost* now) {
  if (h.points.empty()) return enqueue_cycles(ring, batch);
  return interpolate(h, frame_bytes, line_bytes,
                     [&](const HandoffPoint& p) { return carried(h, p, now, producer_cost); });
}

double handoff_consumer_cycles(const HandoffCost& h, const RingCost& ring, double frame_bytes,
                               size_t line_bytes, unsigned batch, const RingCost* now) {
  if (h.points.empty()) return dequeue_cycles(ring, batch);
  return std::max(0.0, interpolate(h, frame_bytes, line_bytes, [&](const HandoffPoint& p) {
                    return carried(h, p, now, consumer_cost);
                  }));
}

double handoff_spread_cycles(const HandoffCost& h, const RingCost& ring, size_t line_bytes,
                             unsigned batch, const RingCost* now) {
  if (h.points.empty() || h.spread.frame_bytes == 0) return 0;
  const double spread = carried(h, h.spread, now, consumer_cost);
  return std::max(
      0.0, spread - handoff_consumer_cycles(h, ring, h.spread.frame_bytes, line_bytes, batch, now));
}

double handoff_scan_line_cycles(const HandoffCost& h, const RingCost& ring, size_t line_bytes,
                                unsigned batch, const RingCost* now) {
  if (h.points.empty() || h.scan.frame_bytes == 0 || line_bytes == 0) return -1;
  const double lines =
      std::ceil(static_cast<double>(h.scan.frame_bytes) / static_cast<double>(line_bytes)) - 1;
  if (lines <= 0) return -1;
  const double scan = carried(h, h.scan, now, consumer_cost);
  return std::max(
      0.0, (scan - handoff_consumer_cycles(h, ring, h.scan.frame_bytes, line_bytes, batch, now)) /
               lines);
}

double ring_cycles(const RingCost& r) {
  return r.enqueue_cycles_per_packet + r.dequeue_cycles_per_packet;
}

double enqueue_cycles(const RingCost& r, unsigned b) {
  if (b == 0 || r.batch == 0) return r.enqueue_cycles_per_packet;
  return std::max(
      0.0, r.enqueue_cycles_per_packet + r.enqueue_cycles_per_burst * (1.0 / b - 1.0 / r.batch));
}

double dequeue_cycles(const RingCost& r, unsigned b) {
  if (b == 0 || r.batch == 0) return r.dequeue_cycles_per_packet;
  return std::max(
      0.0, r.dequeue_cycles_per_packet + r.dequeue_cycles_per_burst * (1.0 / b - 1.0 / r.batch));
}

std::string calibration_json(const Calibration& c) {
  json elements = json::array();
  for (const ElementMeasure& e : c.pipeline.elements) {
    json el = {{"name", e.name},
               {"class", e.class_name},
               {"cycles_per_packet", e.cycles_per_packet},
               {"cycles_per_batch", e.cycles_per_batch},
               {"packet_share", e.packet_share},
               {"memory", memory_json(e.memory)}};
    if (e.frame_bytes > 0) el["frame_bytes"] = e.frame_bytes;
    elements.push_back(std::move(el));
  }
  json j = {{"format", kCalibrationFormat},
            {"created", c.created},
            {"machine",
             {{"cpus", c.machine.cpus},
              {"tsc_hz", c.machine.tsc_hz},
              {"line_bytes", c.machine.line_bytes},
              {"l1d_bytes", c.machine.l1d_bytes},
              {"l2_bytes", c.machine.l2_bytes},
              {"llc_bytes", c.machine.llc_bytes},
              {"llc_sysfs_bytes", c.machine.llc_sysfs_bytes},
              {"llc_shared_cpus", c.machine.llc_shared_cpus}}},
            {"memory",
             {{"l1_cycles", c.memory.l1_cycles},
              {"l2_cycles", c.memory.l2_cycles},
              {"llc_cycles", c.memory.llc_cycles},
              {"dram_cycles", c.memory.dram_cycles},
              {"parallel_misses", c.memory.parallel_misses}}},
            {"ring",
             {{"cross_core", c.ring.cross_core},
              {"batch", c.ring.batch},
              {"enqueue_cycles_per_packet", c.ring.enqueue_cycles_per_packet},
              {"dequeue_cycles_per_packet", c.ring.dequeue_cycles_per_packet},
              {"same_core_cycles_per_packet", c.ring.same_core_cycles_per_packet},
              {"enqueue_cycles_per_burst", c.ring.enqueue_cycles_per_burst},
              {"dequeue_cycles_per_burst", c.ring.dequeue_cycles_per_burst},
              {"line_read_cycles", c.ring.line_read_cycles},
              {"line_rewrite_cycles", c.ring.line_rewrite_cycles}}},
            {"handoff", handoff_json(c.handoff)},
            {"pipeline",
             {{"file", c.pipeline.file},
              {"batch", c.pipeline.batch},
              {"workers", c.pipeline.workers},
              {"seconds", c.pipeline.seconds},
              {"mpps", c.pipeline.mpps},
              {"io_cycles_per_packet", c.pipeline.io_cycles_per_packet},
              {"tx_cycles_per_packet", c.pipeline.tx_cycles_per_packet},
              {"frame_bytes", c.pipeline.frame_bytes},
              {"out_ports", c.pipeline.out_ports},
              {"elements", elements}}}};
  if (c.ring.line_scan_cycles >= 0) j["ring"]["line_scan_cycles"] = c.ring.line_scan_cycles;
  if (c.memory.has_group_lines()) {
    j["memory"]["group_ahead_line_cycles"] = c.memory.group_ahead_line_cycles;
    j["memory"]["group_within_line_cycles"] = c.memory.group_within_line_cycles;
  }
  return j.dump(2) + "\n";
}

Result<Calibration> parse_calibration(const std::string& text, const std::string& path) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const auto [line, col] = line_col(text, e.byte > 0 ? e.byte - 1 : 0);
    std::string what = e.what();
    // nlohmann's message: "[json.exception.parse_error.101] parse error at line L, column C: ..."
    if (const size_t colon = what.find(": "); colon != std::string::npos)
      what = what.substr(colon + 2);
    return make_error(path + ":" + std::to_string(line) + ":" + std::to_string(col) +
                      ": not JSON: " + what);
  }
  Calibration c;
  Reader r(j, path, "");
  r.count("format", c.format, 1);
  if (r.error().empty() && (c.format < kOldestCalibrationFormat || c.format > kCalibrationFormat))
    r.fail("format", "is " + std::to_string(c.format) + ", this fulcrum reads " +
                         std::to_string(kOldestCalibrationFormat) + " to " +
                         std::to_string(kCalibrationFormat));
  const bool has_handoff = c.format >= 2;
  if (r.has("created")) r.string("created", c.created);

  Reader m = r.sub("machine");
  m.count("cpus", c.machine.cpus, 1u);
  m.number("tsc_hz", c.machine.tsc_hz, 0, true);
  m.count("line_bytes", c.machine.line_bytes, size_t{1});
  m.count("l1d_bytes", c.machine.l1d_bytes, size_t{1});
  m.count("l2_bytes", c.machine.l2_bytes, size_t{1});
  m.count("llc_bytes", c.machine.llc_bytes, size_t{1});
  m.count("llc_sysfs_bytes", c.machine.llc_sysfs_bytes, size_t{1});
  m.count("llc_shared_cpus", c.machine.llc_shared_cpus, 1u);
  r.take(m);

  Reader mem = r.sub("memory");
  mem.number("l1_cycles", c.memory.l1_cycles, 0, true);
  mem.number("l2_cycles", c.memory.l2_cycles, 0, true);
  mem.number("llc_cycles", c.memory.llc_cycles, 0, true);
  mem.number("dram_cycles", c.memory.dram_cycles, 0, true);
  mem.number("parallel_misses", c.memory.parallel_misses, 1);
  // Optional (files written before they were measured: the batch model uses the latencies).
  for (auto [key, out] :
       {std::pair{"group_ahead_line_cycles", &c.memory.group_ahead_line_cycles},
        std::pair{"group_within_line_cycles", &c.memory.group_within_line_cycles}})
    if (const json* row = mem.has(key) ? mem.field(key) : nullptr; row != nullptr) {
      read_numbers(mem, *row, mem.name(key), *out);
      if (mem.error().empty() && (*out)[0] == 0) mem.fail(mem.name(key), "must start above 0");
    }
  if (mem.error().empty() &&
      (c.memory.group_ahead_line_cycles[0] > 0) != (c.memory.group_within_line_cycles[0] > 0))
    mem.fail(mem.name("group_within_line_cycles"),
             "group_ahead_line_cycles and group_within_line_cycles come together");
  r.take(mem);

  Reader ring = r.sub("ring");
  ring.boolean("cross_core", c.ring.cross_core);
  ring.count("batch", c.ring.batch, 1u);
  ring.number("enqueue_cycles_per_packet", c.ring.enqueue_cycles_per_packet);
  ring.number("dequeue_cycles_per_packet", c.ring.dequeue_cycles_per_packet);
  ring.number("same_core_cycles_per_packet", c.ring.same_core_cycles_per_packet);
  ring.number("enqueue_cycles_per_burst", c.ring.enqueue_cycles_per_burst);
  ring.number("dequeue_cycles_per_burst", c.ring.dequeue_cycles_per_burst);
  // Optional (files written before they were measured: no charge for a frame's lines).
  if (ring.has("line_read_cycles")) {
    ring.number("line_read_cycles", c.ring.line_read_cycles);
    ring.number("line_rewrite_cycles", c.ring.line_rewrite_cycles);
  }
  if (ring.has("line_scan_cycles")) ring.number("line_scan_cycles", c.ring.line_scan_cycles);
  r.take(ring);

  if (has_handoff) {
    Reader h = r.sub("handoff");
    h.boolean("cross_core", c.handoff.cross_core);
    h.count("batch", c.handoff.batch);
    h.count("runs", c.handoff.runs);
    h.count("attempts", c.handoff.attempts);
    h.boolean("consistent", c.handoff.consistent);
    if (const json* pts = h.field("points"); pts != nullptr) {
      if (!pts->is_array()) h.fail(h.name("points"), "must be an array");
      for (size_t i = 0; h.error().empty() && pts->is_array() && i < pts->size(); ++i) {
        HandoffPoint pt;
        Reader pr((*pts)[i], path, h.name("points") + "[" + std::to_string(i) + "]");
        read_point(pr, pt);
        if (pr.error().empty() && !c.handoff.points.empty() &&
            pt.frame_bytes <= c.handoff.points.back().frame_bytes)
          pr.fail(pr.name("frame_bytes"), "must be above the previous point's");
        h.take(pr);
        c.handoff.points.push_back(pt);
      }
    }
    if (h.error().empty() && h.has("spread")) {
      Reader sr = h.sub("spread");
      read_point(sr, c.handoff.spread);
      h.take(sr);
    }
    if (h.error().empty() && h.has("scan")) {
      Reader sr = h.sub("scan");
      read_point(sr, c.handoff.scan);
      h.take(sr);
    }
    r.take(h);
  }

  Reader p = r.sub("pipeline");
  p.string("file", c.pipeline.file);
  p.count("batch", c.pipeline.batch);
  p.count("workers", c.pipeline.workers);
  p.number("seconds", c.pipeline.seconds);
  p.number("mpps", c.pipeline.mpps);
  p.number("io_cycles_per_packet", c.pipeline.io_cycles_per_packet);
  if (p.has("tx_cycles_per_packet"))
    p.number("tx_cycles_per_packet", c.pipeline.tx_cycles_per_packet);  // absent: written before
  if (c.pipeline.tx_cycles_per_packet > c.pipeline.io_cycles_per_packet)
    p.fail(p.name("tx_cycles_per_packet"),
           "must not exceed io_cycles_per_packet (it is part of it)");
  if (has_handoff) p.number("frame_bytes", c.pipeline.frame_bytes);
  if (p.has("out_ports")) p.count("out_ports", c.pipeline.out_ports, 1u);  // absent: written before
  if (const json* els = p.field("elements"); els != nullptr) {
    if (!els->is_array()) p.fail(p.name("elements"), "must be an array");
    for (size_t i = 0; p.error().empty() && els->is_array() && i < els->size(); ++i) {
      ElementMeasure e;
      Reader er((*els)[i], path, p.name("elements") + "[" + std::to_string(i) + "]");
      er.string("name", e.name);
      er.string("class", e.class_name);
      er.number("cycles_per_packet", e.cycles_per_packet);
      er.number("cycles_per_batch", e.cycles_per_batch);
      er.number("packet_share", e.packet_share);
      if (er.has("frame_bytes")) er.number("frame_bytes", e.frame_bytes);  // absent: written before
      Reader mr = er.sub("memory");
      read_memory_profile(mr, e.memory);
      er.take(mr);
      p.take(er);
      c.pipeline.elements.push_back(std::move(e));
    }
  }
  r.take(p);
  if (r.error().empty() && c.machine.l2_bytes < c.machine.l1d_bytes)
    r.fail("machine.l2_bytes", "is below machine.l1d_bytes");
  if (r.error().empty() && c.machine.llc_bytes < c.machine.l2_bytes)
    r.fail("machine.llc_bytes", "is below machine.l2_bytes");
  if (!r.error().empty()) return make_error(r.error());
  return c;
}

Result<Calibration> read_calibration(const std::string& path) {
  Result<std::string> text = read_input_file(path, "calibration");
  if (!text) return make_error(text.error());
  return parse_calibration(text.value(), path);
}

Status write_calibration(const Calibration& c, const std::string& path) {
  std::ofstream out(path);
  out << calibration_json(c);
  out.close();
  if (!out) return make_error("cannot write the calibration " + path);
  return {};
}

}  // namespace fulcrum::plan
