#include "core/graph.hh"

#include <rte_branch_prediction.h>
#include <rte_cycles.h>
#include <rte_mbuf.h>

#include <algorithm>

#include "core/registry.hh"

namespace fulcrum {
namespace {

std::string describe(const ConfigElement& e) {
  return "'" + e.name + "' (" + e.class_name + ")";
}

std::string plural(int n, const char* what) {
  return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
}

// Depth-first search for a cycle; returns the index of a connection on it, or -1. Iterative: a
// chain of any length is searched in constant machine-stack space.
int find_cycle(const PipelineConfig& config) {
  const size_t n = config.elements.size();
  std::vector<std::vector<size_t>> out(n);
  for (size_t c = 0; c < config.connections.size(); ++c)
    out[config.connections[c].from].push_back(c);
  std::vector<int> state(n, 0);                 // 0 new, 1 on the path, 2 done
  std::vector<std::pair<size_t, size_t>> path;  // vertex, index of its next connection
  for (size_t root = 0; root < n; ++root) {
    if (state[root] != 0) continue;
    state[root] = 1;
    path.emplace_back(root, 0);
    while (!path.empty()) {
      auto& [v, next] = path.back();
      if (next == out[v].size()) {
        state[v] = 2;
        path.pop_back();
        continue;
      }
      const size_t c = out[v][next++];
      const size_t w = config.connections[c].to;
      if (state[w] == 1) return static_cast<int>(c);
      if (state[w] == 0) {
        state[w] = 1;
        path.emplace_back(w, 0);
      }
    }
  }
  return -1;
}

}  // namespace

Result<std::unique_ptr<Pipeline>> Pipeline::build(const PipelineConfig& config,
                                                  const InitContext& ctx, BranchMode mode) {
  auto p = std::unique_ptr<Pipeline>(new Pipeline());
  p->mode_ = mode;
  p->nodes_.resize(config.elements.size());

  for (size_t i = 0; i < config.elements.size(); ++i) {
    const ConfigElement& ce = config.elements[i];
    const ElementClassInfo* info = Registry::instance().find(ce.class_name);
    if (info == nullptr)
      return make_error(ce.loc.str() + ": unknown element class '" + ce.class_name + "'");
    Node& node = p->nodes_[i];
    node.element = info->create();
    node.element->set_name(ce.name);
    node.loc = ce.loc;
    node.class_name = ce.class_name;
    Args args(ce.args, ce.loc, ce.name, ce.class_name);
    if (Status s = node.element->configure(args); !s) return make_error(s.error());
    node.next.resize(static_cast<size_t>(node.element->noutputs()));
    node.stats.out_packets.assign(node.next.size(), 0);
    node.stats.drops.assign(std::max<size_t>(1, info->traits->drop_reasons.size()), 0);
    if (node.element->schedulable()) p->schedulable_.push_back(static_cast<int>(i));
    if (node.element->defers()) p->deferring_.push_back(static_cast<int>(i));
    if (ce.class_name == "FromInput") {
      if (p->input_node_ >= 0)
        return make_error(ce.loc.str() +
                          ": a second FromInput; a pipeline has one entry point (first at " +
                          p->nodes_[static_cast<size_t>(p->input_node_)].loc.str() + ")");
      p->input_node_ = static_cast<int>(i);
    }
  }

  for (const ConfigConnection& c : config.connections) {
    const ConfigElement& from = config.elements[c.from];
    const ConfigElement& to = config.elements[c.to];
    Node& src = p->nodes_[c.from];
    const int outputs = src.element->noutputs();
    if (c.from_port < 0 || c.from_port >= outputs)
      return make_error(c.loc.str() + ": output port " + std::to_string(c.from_port) + " of " +
                        describe(from) + " out of range: " + from.class_name + " has " +
                        plural(outputs, "output"));
    const int to_inputs = p->nodes_[c.to].element->traits().inputs;
    if (c.to_port < 0 || c.to_port >= to_inputs)
      return make_error(c.loc.str() + ": input port " + std::to_string(c.to_port) + " of " +
                        describe(to) + " out of range: " + to.class_name + " has " +
                        plural(to_inputs, "input"));
    Node::Edge& e = src.next[static_cast<size_t>(c.from_port)];
    if (e.node >= 0)
      return make_error(c.loc.str() + ": output port " + std::to_string(c.from_port) + " of " +
                        describe(from) + " is already connected to '" +
                        config.elements[static_cast<size_t>(e.node)].name + "'");
    e.node = static_cast<int>(c.to);
    e.port = c.to_port;
    src.element->set_output_connected(c.from_port);
  }

  if (int c = find_cycle(config); c >= 0)
    return make_error(config.connections[static_cast<size_t>(c)].loc.str() +
                      ": connection closes a cycle; pipelines must be acyclic");
  if (p->input_node_ < 0 && p->schedulable_.empty())
    return make_error(config.file + ": pipeline has no FromInput and no source element");

  for (Node& node : p->nodes_) {
    if (Status s = node.element->initialize(ctx); !s) {
      const std::string& msg = s.error();
      if (msg.rfind(node.loc.file, 0) == 0 && !node.loc.file.empty()) return make_error(msg);
      return make_error(node.loc.str() + ": " + msg);
    }
  }
  for (Node& node : p->nodes_)
    node.element->set_feeds_sink(!node.next.empty() && node.next[0].node >= 0 &&
                                 p->nodes_[static_cast<size_t>(node.next[0].node)].class_name ==
                                     "ToOutput");
  p->inputs_.assign(p->nodes_.size(), 0);
  for (const ConfigConnection& c : config.connections) ++p->inputs_[static_cast<size_t>(c.to)];
  for (const auto& [name, pass] : graph_passes())
    if (Status s = pass(*p); !s) return make_error(s.error());
  return p;
}

std::vector<std::string> Pipeline::unconnected_outputs() const {
  std::vector<std::string> out;
  for (const Node& n : nodes_)
    for (size_t port = 0; port < n.next.size(); ++port)
      if (n.next[port].node < 0 && ((n.element->traits().optional_outputs >> port) & 1) == 0)
        out.push_back(n.loc.str() + ": output " + std::to_string(port) + " of '" +
                      n.element->name() + "' (" + n.class_name +
                      ") is not connected: its packets would be dropped (connect it to Discard "
                      "to drop them on purpose)");
  return out;
}

int Pipeline::only_successor(size_t node) const {
  const Node& n = nodes_[node];
  if (n.next.size() != 1 || n.next[0].node < 0 || n.next[0].port != 0) return -1;
  return inputs_[static_cast<size_t>(n.next[0].node)] == 1 ? n.next[0].node : -1;
}

PacketBatch* Pipeline::alloc_batch() {
  if (spare_.empty()) {
    batch_store_.push_back(std::make_unique<PacketBatch>());
    spare_.push_back(batch_store_.back().get());
  }
  PacketBatch* b = spare_.back();
  spare_.pop_back();
  b->clear();
  return b;
}

void Pipeline::inject(PacketBatch& batch) {
  nodes_[static_cast<size_t>(input_node_)].stats.in_packets += batch.live();
  const uint64_t now = rte_rdtsc();
  if (batch.anno().rx_tsc == 0) batch.anno().rx_tsc = now;
  dispatch(input_node_, batch, now);
}

void Pipeline::run_tasks(uint64_t now_ns) {
  for (int idx : schedulable_) {
    Element& e = *nodes_[static_cast<size_t>(idx)].element;
    if (now_ns < e.next_task_ns()) continue;
    PacketBatch* b = alloc_batch();
    current_.store(idx, std::memory_order_relaxed);
    e.run_task(now_ns, *b);
    current_.store(-1, std::memory_order_relaxed);
    created_ += b->count();
    if (!b->empty()) dispatch(idx, *b, rte_rdtsc());
    free_batch(b);
  }
}

uint64_t Pipeline::poll_deferred(uint64_t now_ns) {
  uint64_t handed = 0;
  for (int idx : deferring_) {
    Element& e = *nodes_[static_cast<size_t>(idx)].element;
    for (;;) {
      PacketBatch* b = alloc_batch();
      current_.store(idx, std::memory_order_relaxed);
      e.poll_deferred(now_ns, *b);
      current_.store(-1, std::memory_order_relaxed);
      if (b->empty()) {
        free_batch(b);
        break;
      }
      handed += b->live();
      created_ += b->created();
      dispatch(idx, *b, rte_rdtsc());
      free_batch(b);
    }
  }
  return handed;
}

void Pipeline::keep_entry_points(const std::vector<bool>& runs) {
  auto elsewhere = [&](int node) {
    return static_cast<size_t>(node) >= runs.size() || !runs[static_cast<size_t>(node)];
  };
  std::erase_if(schedulable_, elsewhere);
  std::erase_if(deferring_, elsewhere);
}

uint64_t Pipeline::held() const {
  uint64_t n = 0;
  for (int idx : deferring_) n += nodes_[static_cast<size_t>(idx)].element->held();
  return n;
}

void Pipeline::drain() {
  for (int idx : deferring_) nodes_[static_cast<size_t>(idx)].element->drain();
}

void Pipeline::finish() {
  for (Node& n : nodes_) n.element->finish();
}

std::vector<OutputLoss> Pipeline::output_losses() const {
  std::vector<OutputLoss> losses;
  for (const Node& n : nodes_) n.element->output_losses(losses);
  return losses;
}

void Pipeline::dispatch(int node, PacketBatch& batch, uint64_t t0) {
  // Depth-first, as recursion would go (outputs in port order, the reused batch last), on an
  // explicit stack: a chain of any length runs in constant machine-stack space.
  // One clock read per element run (rdtsc costs tens of cycles on this VM; two reads were most
  // of a NoOp's cost): an element's cycles run from the previous read to the end of the hand-off
  // of its output batch (NodeStats::cycles).
  // A batch every packet of which takes output 0 moves on to the next element without the
  // stack (pass_on): a line of elements runs as one loop.
  std::vector<Step>& stack = steps_;
  const size_t base = stack.size();
  forward(node, batch, false);
  while (stack.size() > base) {
    Step s = stack.back();
    stack.pop_back();
    for (;;) {
      if (s.batch->empty()) {  // a deferring element upstream took every packet
        if (s.owned) free_batch(s.batch);
        break;
      }
      Node& n = nodes_[static_cast<size_t>(s.node)];
      n.stats.in_packets += s.batch->live();
      if (!s.batch->has_mask()) {
        n.stats.sampled_bytes += s.batch->at(0)->pkt_len;
        ++n.stats.byte_samples;
      }
      current_.store(s.node, std::memory_order_relaxed);
      n.element->process_batch(*s.batch);
      const int next = pass_on(n, *s.batch);
      if (next < 0) spread(n, *s.batch, s.owned);
      const uint64_t t1 = rte_rdtsc();
      n.stats.cycles += t1 - t0;
      t0 = t1;
      if (next < 0) break;
      s.node = next;
    }
  }
  current_.store(-1, std::memory_order_relaxed);
}

int Pipeline::pass_on(Node& n, PacketBatch& batch) {
  // Naive mode moves every packet leaving a branch element into a new batch.
  const bool naive = mode_ == BranchMode::kSplit && n.next.size() > 1;
  // Every verdict is output 0 (excluded slots always read 0), and output 0 leads somewhere.
  if (naive || n.next.empty() || n.next[0].node < 0 || batch.empty() || !batch.all_first_output())
    return -1;
  ++n.stats.batches;
  n.stats.out_packets[0] += batch.live();
  return n.next[0].node;
}

void Pipeline::forward(int node, PacketBatch& batch, bool owned) {
  Node& n = nodes_[static_cast<size_t>(node)];
  if (const int next = pass_on(n, batch); next >= 0)
    steps_.push_back({next, &batch, owned});
  else
    spread(n, batch, owned);
}

void Pipeline::spread(Node& n, PacketBatch& batch, bool owned) {
  ++n.stats.batches;
  if (batch.empty()) {  // the element took every packet (ToOutput, a deferring element)
    if (owned) free_batch(&batch);
    return;
  }
  const int nout = static_cast<int>(n.next.size());
  const bool naive = mode_ == BranchMode::kSplit && nout > 1;

  // One pass (NBA's branch prediction): packets for the predicted output stay in this batch;
  // the others move to a new batch per output; drops are freed in bulk.
  const int predicted = naive ? -1 : n.predicted;
  const size_t nreasons = n.stats.drops.size();
  uint32_t counts[kMaxOutputs] = {};
  PacketBatch* outs[kMaxOutputs] = {};
  Packet* dead[kMaxBatch];
  uint32_t ndead = 0;
  batch.for_each([&](uint32_t i, Packet* p) {
    const Verdict v = batch.result(i);
    const int o = v.port();
    if (likely(!v.is_drop() && o < nout && n.next[static_cast<size_t>(o)].node >= 0)) {
      ++counts[o];
      if (o == predicted) return;
      if (outs[o] == nullptr) {
        outs[o] = alloc_batch();
        outs[o]->anno() = batch.anno();
      }
      outs[o]->push(p);
    } else {
      if (v.is_drop())
        ++n.stats.drops[std::min(static_cast<size_t>(v.reason()), nreasons - 1)];
      else
        ++n.stats.unconnected_drops;
      dead[ndead++] = p;
    }
    batch.exclude(i);
  });
  if (ndead > 0) {
    rte_pktmbuf_free_bulk(dead, ndead);
    dropped_.store(dropped_.load(std::memory_order_relaxed) + ndead, std::memory_order_relaxed);
  }

  for (int o = 0; o < nout; ++o) {
    if (counts[o] == 0) continue;
    n.stats.out_packets[static_cast<size_t>(o)] += counts[o];
    if (n.stats.out_packets[static_cast<size_t>(o)] >
        n.stats.out_packets[static_cast<size_t>(n.predicted)])
      n.predicted = o;
  }
  // Pushed in reverse: the stack runs output 0's batch first and the reused batch last.
  if (!batch.empty())
    steps_.push_back({n.next[static_cast<size_t>(predicted)].node, &batch, owned});
  else if (owned)
    free_batch(&batch);
  for (int o = nout - 1; o >= 0; --o)
    if (outs[o] != nullptr) steps_.push_back({n.next[static_cast<size_t>(o)].node, outs[o], true});
}

}  // namespace fulcrum
