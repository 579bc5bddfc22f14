#include "runtime/stages.hh"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <numeric>

#include "core/packet.hh"
#include "core/shared_storage.hh"
#include "core/suggest.hh"

namespace fulcrum {
namespace {

std::string describe(const ConfigElement& e) {
  return "'" + e.name + "' (" + e.class_name + ")";
}

// The element cut `name` names: an element of that name, or the only element of that class.
Result<size_t> find_cut(const PipelineConfig& config, const std::string& name) {
  for (size_t i = 0; i < config.elements.size(); ++i)
    if (config.elements[i].name == name) return i;
  std::vector<size_t> of_class;
  std::vector<std::string> names;
  for (size_t i = 0; i < config.elements.size(); ++i) {
    if (config.elements[i].class_name == name) of_class.push_back(i);
    names.push_back(config.elements[i].name);
    names.push_back(config.elements[i].class_name);
  }
  if (of_class.size() == 1) return of_class.front();
  if (of_class.size() > 1) {
    std::string list;
    for (size_t i : of_class) list += (list.empty() ? "" : ", ") + config.elements[i].name;
    return make_error("--placement: cut=" + name + ": " + config.file + " has " +
                      std::to_string(of_class.size()) + " " + name +
                      " elements; name one: " + list);
  }
  return make_error("--placement: cut=" + name + ": " + config.file + " has no element '" + name +
                    "'" + did_you_mean(name, names));
}

std::string cores_text(const std::vector<unsigned>& cores) {
  std::string out;
  for (size_t i = 0; i < cores.size(); ++i) out += (i ? "+" : "") + std::to_string(cores[i]);
  return out;
}

}  // namespace

std::vector<int> StagePlan::workers_of(unsigned stage) const {
  std::vector<int> out;
  for (size_t w = 0; w < worker_stage.size(); ++w)
    if (worker_stage[w] == stage) out.push_back(static_cast<int>(w));
  return out;
}

Result<StagePlan> plan_stages(PipelineConfig& config, const Placement& placement, int workers) {
  StagePlan plan;
  plan.worker_stage.assign(static_cast<size_t>(std::max(workers, 0)), 0);
  if (placement.automatic)
    return make_error(
        "--placement auto: the planner (fulcrum plan) must choose the placement "
        "before the run is built");
  if (placement.cloned()) {
    plan.element_stage.assign(config.elements.size(), 0);
    plan.reach.assign(1, std::vector<bool>(config.elements.size(), true));
    return plan;
  }
  const std::string spec = to_string(placement);
  if (placement.cores.size() != placement.stages())
    return make_error("--placement " + spec + ": " + std::to_string(placement.stages()) +
                      " stages but cores= names " + std::to_string(placement.cores.size()));
  for (size_t s = 0; s < placement.cores.size(); ++s)
    if (placement.cores[s] == 0)
      return make_error("--placement " + spec + ": stage " + std::to_string(s) + " has no cores");
  const unsigned sum = std::accumulate(placement.cores.begin(), placement.cores.end(), 0U);
  if (static_cast<int>(sum) != workers)
    return make_error("--placement " + spec + ": cores=" + cores_text(placement.cores) +
                      " adds up to " + std::to_string(sum) + " workers but the run has " +
                      std::to_string(workers) + " (--workers)");
  plan.stages = static_cast<unsigned>(placement.stages());
  for (unsigned s = 0, w = 0; s < plan.stages; ++s)
    for (unsigned k = 0; k < placement.cores[s]; ++k) plan.worker_stage[w++] = s;

  // The cut elements, then a Pipeliner on every edge into each (unless it is one).
  std::vector<size_t> cut_elements;
  for (const std::string& cut : placement.cuts) {
    Result<size_t> e = find_cut(config, cut);
    if (!e) return make_error(e.error());
    const ConfigElement& ce = config.elements[e.value()];
    if (std::find(cut_elements.begin(), cut_elements.end(), e.value()) != cut_elements.end())
      return make_error(ce.loc.str() + ": --placement " + spec + ": " + describe(ce) +
                        " is cut twice");
    const bool fed = std::any_of(config.connections.begin(), config.connections.end(),
                                 [&](const ConfigConnection& c) { return c.to == e.value(); });
    if (!fed)
      return make_error(ce.loc.str() + ": --placement " + spec + ": cut=" + cut + ": " +
                        describe(ce) +
                        " has no input connection: a stage begins at an element packets flow "
                        "into");
    cut_elements.push_back(e.value());
  }
  std::vector<int> link_of(config.elements.size(), -1);  // index into plan.links
  for (size_t i = 0; i < cut_elements.size(); ++i) {
    const size_t x = cut_elements[i];
    const auto stage = static_cast<unsigned>(i + 1);
    if (config.elements[x].class_name == kPipelinerClass) {
      link_of[x] = static_cast<int>(plan.links.size());
      plan.links.push_back({x, {}, stage});
      continue;
    }
    const size_t edges = config.connections.size();
    int n = 0;
    for (size_t c = 0; c < edges; ++c) {
      if (config.connections[c].to != x) continue;
      ConfigElement p;
      p.name = config.elements[x].name + "/ring" + (n++ == 0 ? "" : std::to_string(n));
      p.class_name = std::string(kPipelinerClass);
      p.loc = config.connections[c].loc;
      p.anonymous = true;
      const size_t pi = config.elements.size();
      config.elements.push_back(std::move(p));
      ConfigConnection& in = config.connections[c];
      const ConfigConnection out{pi, 0, x, in.to_port, in.loc};
      in.to = pi;
      in.to_port = 0;
      config.connections.push_back(out);
      link_of.push_back(static_cast<int>(plan.links.size()));
      plan.links.push_back({pi, {}, stage});
    }
  }

  // What each stage runs: everything reached from its entry points (stage 0: FromInput and the
  // sources; stage t: the Pipeliners that begin it) without crossing into a Pipeliner of a cut.
  const size_t n = config.elements.size();
  std::vector<std::vector<size_t>> succ(n);
  std::vector<bool> has_pred(n, false);
  for (const ConfigConnection& c : config.connections) {
    succ[c.from].push_back(c.to);
    has_pred[c.to] = true;
  }
  plan.reach.assign(plan.stages, std::vector<bool>(n, false));
  for (unsigned s = 0; s < plan.stages; ++s) {
    std::vector<size_t> todo;
    for (size_t e = 0; e < n; ++e) {
      const bool entry =
          s == 0 ? !has_pred[e] && link_of[e] < 0
                 : link_of[e] >= 0 && plan.links[static_cast<size_t>(link_of[e])].to == s;
      if (entry) {
        plan.reach[s][e] = true;
        todo.push_back(e);
      }
    }
    while (!todo.empty()) {
      const size_t e = todo.back();
      todo.pop_back();
      for (size_t next : succ[e]) {
        if (link_of[next] >= 0) {
          std::vector<unsigned>& from = plan.links[static_cast<size_t>(link_of[next])].from;
          if (std::find(from.begin(), from.end(), s) == from.end()) from.push_back(s);
          continue;
        }
        if (plan.reach[s][next]) continue;
        plan.reach[s][next] = true;
        todo.push_back(next);
      }
    }
  }
  for (const StagePlan::Link& l : plan.links) {
    const ConfigElement& p = config.elements[l.element];
    const std::string cut = placement.cuts[l.to - 1];
    if (l.from.empty())
      return make_error(p.loc.str() + ": --placement " + spec + ": cut=" + cut +
                        ": no stage before it reaches " + describe(p));
    const unsigned late = *std::max_element(l.from.begin(), l.from.end());
    if (late >= l.to)
      return make_error(p.loc.str() + ": --placement " + spec + ": cut=" + cut + " begins stage " +
                        std::to_string(l.to) + " but packets reach it from stage " +
                        std::to_string(late) + " (after cut=" + placement.cuts[late - 1] +
                        "): list the cuts in the order packets reach them");
  }
  plan.element_stage.assign(n, 0);
  for (size_t e = 0; e < n; ++e)
    for (unsigned s = plan.stages; s-- > 0;)
      if (plan.reach[s][e]) plan.element_stage[e] = s;
  return plan;
}

Result<std::shared_ptr<StageLinks>> StageLinks::create(const StagePlan& plan,
                                                       const PipelineConfig& config,
                                                       unsigned ring_size) {
  static std::atomic<unsigned> made{0};
  auto links = std::shared_ptr<StageLinks>(new StageLinks());
  links->plan_ = plan;
  for (const StagePlan::Link& l : plan.links) {
    links->link_names_.push_back(config.elements[l.element].name);
    std::vector<int> producers;
    for (unsigned s : l.from)
      for (int w : plan.workers_of(s)) producers.push_back(w);
    std::sort(producers.begin(), producers.end());
    std::vector<StageRing*>& by_link = links->rings_by_link_.emplace_back();
    for (int p : producers) {
      for (int c : plan.workers_of(l.to)) {
        auto r = std::make_unique<StageRing>();
        const std::string name = "fulcrum_stage" + std::to_string(made++);
        r->ring = rte_ring_create(name.c_str(), ring_size, static_cast<int>(rte_socket_id()),
                                  RING_F_SP_ENQ | RING_F_SC_DEQ);
        if (r->ring == nullptr)
          return make_error("cannot create the stage ring of " + links->link_names_.back() +
                            " (worker " + std::to_string(p) + " to " + std::to_string(c) +
                            "): " + rte_strerror(rte_errno));
        r->link = links->link_names_.back();
        r->producer = p;
        r->consumer = c;
        r->capacity = rte_ring_get_capacity(r->ring);
        by_link.push_back(r.get());
        links->rings_.push_back(std::move(r));
      }
    }
  }
  return links;
}

StageLinks::~StageLinks() {
  for (const auto& r : rings_) {
    void* m = nullptr;
    while (rte_ring_sc_dequeue(r->ring, &m) == 0) rte_pktmbuf_free(static_cast<Packet*>(m));
    rte_ring_free(r->ring);
  }
}

StageLinks::Endpoint StageLinks::endpoint(const std::string& element, int worker) const {
  Endpoint e;
  for (size_t l = 0; l < link_names_.size(); ++l) {
    if (link_names_[l] != element) continue;
    for (StageRing* r : rings_by_link_[l]) {
      if (r->producer == worker) e.out.push_back(r);
      if (r->consumer == worker) e.in.push_back(r);
    }
  }
  return e;
}

Result<std::unique_ptr<StageRun>> StageRun::create(PipelineConfig& config,
                                                   const Placement& placement, int workers,
                                                   SharedStorage& shared, unsigned ring_size) {
  Result<StagePlan> plan = plan_stages(config, placement, workers);
  if (!plan) return make_error(plan.error());
  auto run = std::unique_ptr<StageRun>(new StageRun());
  run->plan_ = std::move(plan.value());
  run->stop_ = std::make_unique<std::atomic<bool>[]>(run->plan_.stages);
  if (!run->plan_.pipelined()) return run;
  const StageLinks* made = nullptr;
  Result<std::shared_ptr<const StageLinks>> links = shared.get_or_build<StageLinks>(
      StageLinks::kSharedKey, [&]() -> Result<std::shared_ptr<StageLinks>> {
        Result<std::shared_ptr<StageLinks>> l = StageLinks::create(run->plan_, config, ring_size);
        if (l) made = l.value().get();
        return l;
      });
  if (!links) return make_error(links.error());
  if (made == nullptr) return make_error("the stage rings were made twice in one run");
  run->links_ = links.value();
  return run;
}

std::vector<bool> StageRun::stage_elements(int worker) const {
  std::vector<bool> runs = plan_.reach[stage_of(worker)];
  // A Pipeliner polls its rings on the workers of the stage it begins only.
  for (const StagePlan::Link& l : plan_.links) runs[l.element] = l.to == stage_of(worker);
  return runs;
}

const std::atomic<bool>* StageRun::stop_flag(int worker, const std::atomic<bool>& run_stop) const {
  const unsigned s = stage_of(worker);
  return s == 0 ? &run_stop : &stop_[s];
}

void StageRun::advance(const std::function<bool(size_t)>& finished) {
  bool before_done = true;  // every worker of the stages before s has finished
  for (unsigned s = 0; s < plan_.stages; ++s) {
    if (s > 0 && before_done) stop_[s].store(true, std::memory_order_relaxed);
    for (int w : plan_.workers_of(s)) before_done &= finished(static_cast<size_t>(w));
  }
}

void StageRun::report(const Placement& placement, RunReport& r) const {
  r.placement = to_string(placement);
  r.stages = plan_.stages;
  for (size_t w = 0; w < r.per_worker.size() && w < plan_.worker_stage.size(); ++w) {
    r.per_worker[w].stage = plan_.worker_stage[w];
    r.per_worker[w].stage_packets = r.per_worker[w].rx_packets;
  }
  if (!links_) return;
  for (const auto& ring : links_->rings()) {
    RingReport rr;
    rr.link = ring->link;
    rr.producer = ring->producer;
    rr.consumer = ring->consumer;
    rr.capacity = ring->capacity;
    rr.enqueued = ring->enqueued.get();
    rr.dequeued = ring->dequeued.get();
    rr.dequeue_cycles = ring->dequeue_cycles.get();
    rr.back_pressure = ring->back_pressure.get();
    rr.max_occupancy = ring->max_occupancy.get();
    if (static_cast<size_t>(ring->consumer) < r.per_worker.size())
      r.per_worker[static_cast<size_t>(ring->consumer)].stage_packets += rr.dequeued;
    r.rings.push_back(std::move(rr));
  }
}

}  // namespace fulcrum
