// Pipeline: one worker's replica of the element graph, and the batch-forwarding engine.
//
// After an element processed a batch, the graph reads the per-packet verdicts: drops are freed
// and counted by reason, and the packets are forwarded per output. When every live packet takes
// output 0 the batch moves on as it is. Otherwise (a branch), in the default "reuse" mode the
// batch is reused for the predicted output (the one most packets took so far, NBA §3.2) and
// only the other packets move into new batches, leaving masked slots behind; the "split" mode
// moves every packet leaving a branch element into a new batch per output (the naive approach
// NBA compares against).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/batch.hh"
#include "core/config/ast.hh"
#include "core/element.hh"
#include "core/graph_pass.hh"
#include "core/result.hh"

namespace fulcrum {

enum class BranchMode { kReuse, kSplit };

// Drop reasons owned by the graph itself.
inline constexpr std::string_view kUnconnectedOutput = "unconnected-output";

struct NodeStats {
  uint64_t in_packets = 0;
  uint64_t batches = 0;
  std::vector<uint64_t> out_packets;  // per output port
  std::vector<uint64_t> drops;        // per drop reason of the element class
  uint64_t unconnected_drops = 0;
  // TSC cycles of process_batch and of the graph's hand-off of its output (verdict scan, drops
  // freed, batches split) (VPP's "show runtime" clocks): one clock read per element run, the
  // element's cycles running from the read after the previous one; device work that runs
  // asynchronously is not in it.
  uint64_t cycles = 0;
  // The length of the first packet of each batch the element ran on (batches without excluded
  // slots), summed, and how many were summed: the mean size of the frames the element receives
  // (the frame at a pipelining cut, plan::ChainElement::frame_bytes).
  uint64_t sampled_bytes = 0;
  uint64_t byte_samples = 0;
};

struct Node {
  std::unique_ptr<Element> element;
  SourceLoc loc;
  std::string class_name;
  struct Edge {
    int node = -1;  // -1: unconnected
    int port = 0;
  };
  std::vector<Edge> next;  // per output port
  int predicted = 0;       // the output most packets took so far (branch prediction)
  NodeStats stats;
};

class Pipeline {
 public:
  // Instantiates, configures and initialises every element of `config`, checks port numbers,
  // and wires the graph. Every error names the file:line:column it comes from.
  static Result<std::unique_ptr<Pipeline>> build(const PipelineConfig& config,
                                                 const InitContext& ctx,
                                                 BranchMode mode = BranchMode::kReuse);

  bool has_input() const { return input_node_ >= 0; }
  // A received batch enters at FromInput's output 0 (only when has_input()). The pipeline runs it
  // to completion; on return every packet was transmitted (through the sink) or dropped. The
  // clock read that starts the first element's cycles is the batch's rx_tsc, unless the worker
  // set one.
  void inject(PacketBatch& batch);
  // Runs the tasks of schedulable elements whose timer expired.
  void run_tasks(uint64_t now_ns);
  bool has_tasks() const { return !schedulable_.empty(); }
  // Hands the packets that deferring elements have finished (or made) on to their outputs;
  // returns how many.
  uint64_t poll_deferred(uint64_t now_ns);
  bool has_deferring() const { return !deferring_.empty(); }
  // A stage of a pipelined placement (runtime/stages.hh): of the schedulable and deferring
  // elements, only those with `runs[node]` set run their tasks and hand on packets on this
  // replica; the others are left to the workers of their stages.
  void keep_entry_points(const std::vector<bool>& runs);
  // Packets deferring elements hold (taken or made, not yet handed back).
  uint64_t held() const;
  // The input has ended: deferring elements give up what waits for more input (Element::drain).
  void drain();
  // The run ended: every element writes out its buffered output (Element::finish).
  void finish();
  // What elements could not write (Element::output_losses).
  std::vector<OutputLoss> output_losses() const;

  const std::vector<Node>& nodes() const { return nodes_; }
  // "FILE:LINE:COL: output N of 'name' (Class) is not connected ..." for every output with no
  // connection that is not optional (ElementTraits::optional_outputs): its packets are dropped
  // (counted as unconnected-output). Click refuses such a
  // pipeline, and so do `fulcrum check` and `fulcrum run`.
  std::vector<std::string> unconnected_outputs() const;
  Element& element(size_t node) { return *nodes_[node].element; }
  // The node `node`'s only output feeds, when that one has no other input; -1 otherwise (graph
  // passes follow such lines of elements).
  int only_successor(size_t node) const;
  // Packets dropped inside the pipeline; safe to read from another thread while it runs.
  uint64_t dropped() const { return dropped_.load(std::memory_order_relaxed); }
  // Packets made inside the pipeline: by source elements (run_task) and the copies deferring
  // elements hand over with PacketBatch::push_created (Tee).
  uint64_t created() const { return created_; }
  BranchMode mode() const { return mode_; }
  // The element the worker is running now, -1 when none (for the watchdog; any thread).
  int current_node() const { return current_.load(std::memory_order_relaxed); }

 private:
  // Runs `batch`, which left `node`, through the rest of the graph; `t0`: the clock read the
  // first element's cycles start from.
  void dispatch(int node, PacketBatch& batch, uint64_t t0);
  // Counts and frees the drops of a batch `node` processed and queues its packets for the
  // elements after it (steps_); `owned`: the batch came from alloc_batch().
  void forward(int node, PacketBatch& batch, bool owned);
  // forward's common case: every live packet takes output 0, which leads to an element. Counts
  // the batch and returns that element's node, or -1 for any other case.
  int pass_on(Node& n, PacketBatch& batch);
  // forward's other cases, once pass_on said -1: drops, branches, an emptied batch.
  void spread(Node& n, PacketBatch& batch, bool owned);
  PacketBatch* alloc_batch();
  void free_batch(PacketBatch* b) { spare_.push_back(b); }

  std::vector<Node> nodes_;
  std::vector<int> inputs_;  // connections into each node
  int input_node_ = -1;
  std::vector<int> schedulable_;
  std::vector<int> deferring_;
  BranchMode mode_ = BranchMode::kReuse;
  std::atomic<uint64_t> dropped_{0};
  std::atomic<int> current_{-1};
  uint64_t created_ = 0;
  struct Step {
    int node;
    PacketBatch* batch;
    bool owned;
  };
  std::vector<Step> steps_;  // dispatch's work stack: batches waiting for an element
  std::vector<std::unique_ptr<PacketBatch>> batch_store_;
  std::vector<PacketBatch*> spare_;
};

}  // namespace fulcrum
