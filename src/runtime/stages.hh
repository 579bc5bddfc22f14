// Stages of a pipelined or hybrid placement (runtime/placement.hh; the pipelining of Dobrescu et
// al., "Controlling Parallelism in a Multicore Software Router"): which stage each element and each
// worker is in, the rings packets cross between stages, and the end of such a run, stage after
// stage.
//
// A cut's stage boundary is a Pipeliner element (elements/standard/pipeliner.hh) on every edge
// into the cut element; a cut that names a Pipeliner is that Pipeliner. Packets cross from a
// worker of the stage before to a worker of the stage after over one single-producer /
// single-consumer rte_ring per (producer worker, consumer worker) pair, whole batches at a
// time; when the stage after has several workers (a hybrid), the flow hash picks the ring, so a
// flow keeps its order. Every worker holds a replica of the whole graph but runs only its
// stage: stage-0 workers poll the ports' RX queues, the others their input rings (the
// Pipeliner's deferred packets), and every stage transmits from its own worker.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/config/ast.hh"
#include "core/result.hh"
#include "runtime/placement.hh"
#include "runtime/stats.hh"

struct rte_ring;

namespace fulcrum {

class SharedStorage;

inline constexpr std::string_view kPipelinerClass = "Pipeliner";
// Entries of a stage ring (a power of two; rte_ring keeps one free): 16 batches of 64. The
// packets a ring holds come from the RX pools (4096 buffers per queue for a DPDK port), so a
// ring of more than a few thousand starves RX.
inline constexpr unsigned kStageRingSize = 1024;
inline constexpr unsigned kMinStageRingSize = 64, kMaxStageRingSize = 16384;

struct StagePlan {
  unsigned stages = 1;
  std::vector<unsigned> element_stage;  // per element of the cut configuration: its first stage
  std::vector<unsigned> worker_stage;   // per worker
  // Per stage, the elements its workers run: those reached from its entry points (stage 0:
  // FromInput and the sources; stage t: the Pipeliners that begin it) without crossing a cut. An
  // element after a merge of two stages (both branches reach it) runs in each.
  std::vector<std::vector<bool>> reach;
  // A stage boundary: the Pipeliner `element`, fed by the stages `from`, beginning stage `to`.
  struct Link {
    size_t element = 0;
    std::vector<unsigned> from;
    unsigned to = 0;
  };
  std::vector<Link> links;

  bool pipelined() const { return stages > 1; }
  std::vector<int> workers_of(unsigned stage) const;
};

// Cuts `config` as `placement` says for a run of `workers` workers: a Pipeliner goes on every
// edge into a cut element (named "ELEMENT/ring", "ELEMENT/ring2", ...), and every element gets
// the stage of the cut it follows. A clone placement leaves `config` as it is (its Pipeliners
// pass packets through). Errors name the placement item and, where one is involved, the
// element's FILE:LINE:COL: an unknown element, a cut with no input, cuts out of order, cores
// that do not add up to `workers`. `auto` is for the planner to resolve before this.
// A cut names an element, or an element class of which the pipeline has exactly one.
Result<StagePlan> plan_stages(PipelineConfig& config, const Placement& placement, int workers);

// One ring between two workers, and what crossed it. The producer writes enqueued,
// back_pressure (enqueues that found the ring full and waited) and max_occupancy; the consumer
// writes dequeued and dequeue_cycles (its TSC cycles in dequeues that took packets, with the
// prefetch of their lines: the consumer's side of the hand-off outside any element).
struct StageRing {
  rte_ring* ring = nullptr;
  std::string link;  // the Pipeliner's name
  int producer = 0, consumer = 0;
  unsigned capacity = 0;
  LiveCounter enqueued, back_pressure, max_occupancy;
  alignas(64) LiveCounter dequeued;  // the consumer's, on a line of its own
  LiveCounter dequeue_cycles;
};

// The rings of a run (shared storage key kSharedKey): every Pipeliner replica finds its own.
class StageLinks {
 public:
  static constexpr const char* kSharedKey = "stage-links";

  static Result<std::shared_ptr<StageLinks>> create(const StagePlan& plan,
                                                    const PipelineConfig& config,
                                                    unsigned ring_size = kStageRingSize);
  ~StageLinks();
  StageLinks(const StageLinks&) = delete;
  StageLinks& operator=(const StageLinks&) = delete;

  // What the replica of Pipeliner `element` on `worker` does: enqueues into `out` (one ring per
  // consumer worker, in worker order) when the worker is in the stage that feeds it, dequeues
  // from `in` (one ring per producer) when it is in the stage it starts; neither otherwise.
  struct Endpoint {
    std::vector<StageRing*> out;
    std::vector<StageRing*> in;
  };
  Endpoint endpoint(const std::string& element, int worker) const;

  const std::vector<std::unique_ptr<StageRing>>& rings() const { return rings_; }
  const StagePlan& plan() const { return plan_; }

 private:
  StageLinks() = default;
  StagePlan plan_;
  std::vector<std::string> link_names_;                 // per plan_.links
  std::vector<std::vector<StageRing*>> rings_by_link_;  // per link: producer-major
  std::vector<std::unique_ptr<StageRing>> rings_;
};

// The stage part of one run: the plan, the rings and the stop flags. A pipelined run ends stage
// by stage: stage 0 stops with the run; stage t once every worker of the stages before it has
// finished, so that nothing more enters its rings, and it empties them before it finishes.
class StageRun {
 public:
  // `config` is cut in place; the rings go into `shared` (the Pipeliners find them there).
  static Result<std::unique_ptr<StageRun>> create(PipelineConfig& config,
                                                  const Placement& placement, int workers,
                                                  SharedStorage& shared,
                                                  unsigned ring_size = kStageRingSize);

  bool pipelined() const { return plan_.pipelined(); }
  unsigned stage_of(int worker) const { return plan_.worker_stage[static_cast<size_t>(worker)]; }
  // The workers that poll the ports' RX queues: stage 0's.
  std::vector<int> receivers() const { return plan_.workers_of(0); }
  // The elements worker `w` runs as entry points (Pipeline::keep_entry_points).
  std::vector<bool> stage_elements(int worker) const;
  // The stop flag of worker `w`: `run_stop` for stage 0.
  const std::atomic<bool>* stop_flag(int worker, const std::atomic<bool>& run_stop) const;
  // Sets the stop flag of every stage whose predecessors have all finished (`finished(w)`).
  void advance(const std::function<bool(size_t)>& finished);
  // The placement, each worker's stage and stage packets, and the rings, into `r`.
  void report(const Placement& placement, RunReport& r) const;

 private:
  StagePlan plan_;
  std::shared_ptr<const StageLinks> links_;
  std::unique_ptr<std::atomic<bool>[]> stop_;  // per stage; [0] unused (the run's own flag)
};

}  // namespace fulcrum
