#include "plan/measure_handoff.hh"

#include <rte_lcore.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/median.hh"
#include "io/eal.hh"
#include "plan/measure_machine.hh"

namespace fulcrum::plan {
namespace {

constexpr unsigned kHandoffFlows = 1024;
constexpr const char* kHandoffSink = "net_null0,no-rx=1";
constexpr const char* kPipelinerClass = "Pipeliner";
constexpr const char* kProducerElements[] = {"in"};
constexpr const char* kConsumerElements[] = {"check", "route", "scan", "ttl", "out"};
constexpr unsigned kCutWorkers = 2;
// The consumer bounds the cut when at least this share of the producer's bursts met a full ring.
constexpr double kConsumerBoundShare = 0.5;

template <class Names>
bool named(const std::string& name, const Names& names) {
  return std::find(std::begin(names), std::end(names), name) != std::end(names);
}

}  // namespace

Result<HandoffRun> reduce_handoff_run(const RunReport& r, bool cut) {
  if (r.packets_in == 0 || r.duration_s <= 0 || r.tsc_hz <= 0)
    return make_error("the hand-off reference received no packets");
  const unsigned stages = cut ? 2 : 1;
  HandoffRun out;
  double cpu_s[2] = {0, 0}, share[2] = {0, 0}, busy[2] = {0, 0};
  uint64_t packets[2] = {0, 0};
  unsigned workers[2] = {0, 0};
  for (const WorkerReport& w : r.per_worker) {
    if (w.stage >= stages) return make_error("the hand-off reference ran more stages than asked");
    cpu_s[w.stage] += w.cpu_s;
    busy[w.stage] += static_cast<double>(w.busy_cycles);
    out.tx_flush += static_cast<double>(w.tx_flush_cycles);
    packets[w.stage] += w.stage_packets;
    ++workers[w.stage];
  }
  for (unsigned s = 0; s < stages; ++s) {
    if (workers[s] == 0 || packets[s] == 0 || cpu_s[s] <= 0)
      return make_error("stage " + std::to_string(s) + " of the hand-off reference did no work");
    share[s] = std::min(1.0, cpu_s[s] / (r.duration_s * workers[s]));
    out.stage_cycles[s] = cpu_s[s] * r.tsc_hz / static_cast<double>(packets[s]);
  }
  const unsigned consumer = cut ? 1 : 0;
  const auto pkts = static_cast<double>(r.packets_in);
  out.tx_flush *= share[consumer] / pkts;
  if (cut) out.consumer_busy = busy[1] * share[1] / static_cast<double>(packets[1]);
  for (const ElementReport& e : r.elements) {
    const auto wall = static_cast<double>(e.cycles);
    if (e.class_name == kPipelinerClass) {
      out.pipeliner += wall * share[0] / pkts;
      out.producer_elements += wall * share[0] / pkts;
    } else if (named(e.name, kProducerElements)) {
      out.producer_elements += wall * share[0] / pkts;
    } else if (named(e.name, kConsumerElements)) {
      out.consumer_elements += wall * share[consumer] / pkts;
    }
  }
  for (const RingReport& ring : r.rings) {
    out.dequeue += static_cast<double>(ring.dequeue_cycles) * share[consumer] / pkts;
    const double bursts = static_cast<double>(ring.enqueued) / std::max(1u, r.batch);
    out.consumer_bound =
        bursts > 0 && static_cast<double>(ring.back_pressure) >= kConsumerBoundShare * bursts;
  }
  return out;
}

HandoffPoint handoff_point(unsigned frame_bytes, const std::vector<HandoffRun>& clone,
                           const std::vector<HandoffRun>& cut, double ring_enqueue,
                           double ring_dequeue) {
  HandoffPoint p;
  p.frame_bytes = frame_bytes;
  if (clone.empty() || cut.empty()) return p;
  // The cloned run of median cost, whole (its split into elements and RX/TX belongs together).
  std::vector<HandoffRun> sorted = clone;
  std::sort(sorted.begin(), sorted.end(), [](const HandoffRun& a, const HandoffRun& b) {
    return a.stage_cycles[0] < b.stage_cycles[0];
  });
  const HandoffRun& c = sorted[sorted.size() / 2];
  p.clone_cycles_per_packet = c.stage_cycles[0];
  // The cloned run's transmit flushes count with its elements: the model charges the pipeline's
  // own on the last stage (0 for the reference, whose whole batches leave from `out`).
  p.consumer_elements_clone_cycles = c.consumer_elements + c.tx_flush;
  p.clone_io_cycles_per_packet =
      std::max(0.0, c.stage_cycles[0] - c.producer_elements - c.consumer_elements);
  p.consumer_stage_cycles_per_packet =
      median(cut, [](const HandoffRun& r) { return r.stage_cycles[1]; });
  p.producer_io_cycles_per_packet =
      median(cut, [](const HandoffRun& r) { return r.stage_cycles[0] - r.producer_elements; });
  size_t bound = 0;
  for (const HandoffRun& r : cut) bound += r.consumer_bound ? 1 : 0;
  p.consumer_bound = 2 * bound > cut.size();
  // The consumer: what its busy loop iterations (those that took packets: idle polling, when the
  // producer is the slower stage, is not in them) cost beyond its elements' cloned cycles: the
  // dequeue with the prefetch of the packets' lines, the lines still missed in its elements, its
  // own loop and dispatch. Where the runs did not time them (an older runtime), its elements'
  // extra cycles and the dequeue as timed, else the plain ring's.
  const double busy = median(cut, [](const HandoffRun& r) { return r.consumer_busy; });
  const double elements =
      median(cut, [](const HandoffRun& r) { return r.consumer_elements + r.tx_flush; });
  const double dequeue = median(cut, [](const HandoffRun& r) { return r.dequeue; });
  p.consumer_cycles_per_packet = busy > 0
                                     ? std::max(0.0, busy - p.consumer_elements_clone_cycles)
                                     : std::max(0.0, elements - p.consumer_elements_clone_cycles) +
                                           (dequeue > 0 ? dequeue : ring_dequeue);
  // The producer: its work outside elements (RX of buffers that come back from the consumer's
  // core; it never idles: when the ring is full it waits inside the Pipeliner) and the enqueue:
  // the Pipeliner's cycles, unless it waited for room in the ring (then the ring's enqueue).
  const double enqueue = p.consumer_bound
                             ? ring_enqueue
                             : median(cut, [](const HandoffRun& r) { return r.pipeliner; });
  p.producer_cycles_per_packet =
      p.producer_io_cycles_per_packet + enqueue - p.clone_io_cycles_per_packet;
  return p;
}

namespace {

// A file a reference reads (the spread reference's routes, the scan reference's rules): the
// process's own under the temporary directory, removed when the measurement ends.
class OwnFile {
 public:
  OwnFile(const std::string& name, const char* text, const char* what)
      : path_(std::filesystem::temp_directory_path() /
              ("fulcrum-handoff-" + name + "-" + std::to_string(::getpid()) + ".txt")),
        text_(text),
        what_(what) {}
  ~OwnFile() {
    std::error_code ignored;
    std::filesystem::remove(path_, ignored);
  }
  OwnFile(const OwnFile&) = delete;
  OwnFile& operator=(const OwnFile&) = delete;
  Result<std::string> write() const {
    std::ofstream out(path_);
    out << text_;
    out.close();
    if (!out) return make_error(std::string("cannot write the ") + what_ + " to " + path_.string());
    return path_.string();
  }

 private:
  std::filesystem::path path_;
  const char* text_;
  const char* what_;
};

enum class Reference { kPlain, kSpread, kScan };

std::string reference_text(Reference ref, const std::string& file) {
  switch (ref) {
    case Reference::kSpread:
      return "in :: FromInput -> check :: CheckIPHeader -> route :: IPLookup(\"" + file +
             "\") -> ttl :: DecIPTTL -> out :: ToOutput;";
    case Reference::kScan:
      return "in :: FromInput -> check :: CheckIPHeader -> scan :: IDSMatch(\"" + file +
             "\", ENGINE hyperscan) -> ttl :: DecIPTTL -> out :: ToOutput;";
    case Reference::kPlain:
      break;
  }
  return kHandoffReference;
}

// Where a reference's point goes: the spread or the scan point, else the next frame size's.
HandoffPoint& point_of(HandoffCost& h, Reference ref) {
  switch (ref) {
    case Reference::kSpread:
      return h.spread;
    case Reference::kScan:
      return h.scan;
    case Reference::kPlain:
      break;
  }
  return h.points.emplace_back();
}

// The runs of a reference (`file`: the spread reference's routes, the scan reference's rules) at
// one frame size.
Result<HandoffPoint> point_at(unsigned frame, unsigned batch, const RingCost& ring, Reference ref,
                              const std::string& file) {
  RunOptions o;
  o.pipeline_file = "handoff-reference.click";
  o.pipeline_text = reference_text(ref, file);
  o.ports = {"gen:size=" + std::to_string(frame) + ",flows=" + std::to_string(kHandoffFlows),
             kHandoffSink};
  o.batch = batch;
  o.seconds = kHandoffSecondsPerRun;
  o.progress = false;
  o.latency = false;
  std::vector<HandoffRun> clone, cut;
  for (unsigned k = 0; k < kHandoffRuns; ++k)
    for (const bool pipelined : {k % 2 == 1, k % 2 == 0}) {
      o.workers = pipelined ? static_cast<int>(kCutWorkers) : 1;
      o.placement = Placement{};
      if (pipelined) {
        o.placement.cuts = {"check"};
        o.placement.cores = {1, 1};
      }
      Result<RunReport> r = run(o);
      if (!r) return make_error("the hand-off reference: " + r.error());
      Result<HandoffRun> reduced = reduce_handoff_run(r.value(), pipelined);
      if (!reduced) return make_error(reduced.error());
      (pipelined ? cut : clone).push_back(reduced.value());
    }
  return handoff_point(frame, clone, cut, enqueue_cycles(ring, batch), dequeue_cycles(ring, batch));
}

}  // namespace

bool same_regime(double a, double b) {
  return a > 0 && b > 0 && std::max(a, b) < kSameRegime * std::min(a, b);
}

Result<HandoffCost> measure_handoff(unsigned batch, unsigned cpus) {
  HandoffCost h;
  h.batch = batch;
  h.runs = kHandoffRuns;
  if (cpus < kCutWorkers || !eal_ready() || rte_lcore_count() < kCutWorkers + 1) return h;
  h.cross_core = true;
  // The ring before and after every point; all within kSameRegime of each other, or the whole
  // set again (a machine that changes regime meanwhile gives points of both).
  const OwnFile routes_file("routes", kHandoffSpreadRoutes, "hand-off reference's routes");
  Result<std::string> routes = routes_file.write();
  if (!routes) return make_error(routes.error());
  const OwnFile rules_file("rules", kHandoffScanRules, "hand-off reference's rules");
  Result<std::string> rules = rules_file.write();
  if (!rules) return make_error(rules.error());
  struct Job {
    unsigned frame;
    Reference ref;
    std::string file;
  };
  std::vector<Job> jobs;
  for (unsigned frame : kHandoffFrames) jobs.push_back({frame, Reference::kPlain, ""});
  jobs.push_back({kHandoffSpreadFrame, Reference::kSpread, routes.value()});
  jobs.push_back({kHandoffScanFrame, Reference::kScan, rules.value()});
  for (h.attempts = 1; h.attempts <= kHandoffAttempts; ++h.attempts) {
    h.points.clear();
    h.spread = HandoffPoint{};
    h.scan = HandoffPoint{};
    Result<RingCost> before = measure_ring(batch, cpus);
    if (!before) return make_error(before.error());
    double lo = ring_cycles(before.value()), hi = lo;
    for (const Job& job : jobs) {
      Result<HandoffPoint> pt = point_at(job.frame, batch, before.value(), job.ref, job.file);
      if (!pt) return make_error(pt.error());
      Result<RingCost> after = measure_ring(batch, cpus);
      if (!after) return make_error(after.error());
      pt.value().ring_cycles = (ring_cycles(before.value()) + ring_cycles(after.value())) / 2;
      pt.value().line_read_cycles =
          (before.value().line_read_cycles + after.value().line_read_cycles) / 2;
      lo = std::min(lo, ring_cycles(after.value()));
      hi = std::max(hi, ring_cycles(after.value()));
      point_of(h, job.ref) = pt.value();
      before = after;
    }
    h.consistent = same_regime(lo, hi);
    if (h.consistent) break;
  }
  h.attempts = std::min(h.attempts, kHandoffAttempts);
  return h;
}

}  // namespace fulcrum::plan
