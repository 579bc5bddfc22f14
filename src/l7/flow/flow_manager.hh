// The flow manager (paper 004 §III-A "Buffering"): one flow operator per flow, keyed by FlowId
// (the proxy's connection), holding the flow's message queue (messages not yet dispatched, in
// arrival order) and its state record (the chain's state, l7/nf/chain.hh). Created when the flow
// opens (or at its first message), expired once it is closed and has nothing queued or in flight.
#pragma once

#include <cstdint>
#include <deque>
#include <unordered_map>
#include <utility>
#include <vector>

#include "l7/flow/message.hh"
#include "l7/nf/chain.hh"

namespace fulcrum::l7 {

struct FlowOperator {
  FlowId id = 0;
  std::deque<Message> queue;   // not yet dispatched, in arrival order
  uint64_t queued_bytes = 0;   // body bytes in `queue` (the flow's size for the scheduler)
  std::vector<uint8_t> state;  // the chain's state record
  bool closing = false;        // closed by the proxy; expires when drained
  bool in_flight = false;      // messages of it are on the device
};

class FlowManager {
 public:
  explicit FlowManager(const Chain& chain) : chain_(chain) {}

  // The flow's operator, created with a fresh state when absent.
  FlowOperator& open(FlowId id) {
    auto it = flows_.find(id);
    if (it == flows_.end()) {
      it = flows_.emplace(id, FlowOperator{}).first;
      it->second.id = id;
      it->second.state = chain_.new_state();
      ++created_;
    }
    return it->second;
  }
  FlowOperator* find(FlowId id) {
    auto it = flows_.find(id);
    return it == flows_.end() ? nullptr : &it->second;
  }

  // Queues a message on its flow (opening the flow when needed).
  void enqueue(Message&& m) {
    FlowOperator& f = open(m.flow);
    f.queued_bytes += m.body.size();
    f.queue.push_back(std::move(m));
    ++unprocessed_;
  }
  // Takes the flow's queued messages (for a round).
  std::vector<Message> take(FlowOperator& f) {
    std::vector<Message> out;
    out.reserve(f.queue.size());
    for (Message& m : f.queue) out.push_back(std::move(m));
    unprocessed_ -= f.queue.size();
    f.queue.clear();
    f.queued_bytes = 0;
    return out;
  }

  // Marks the flow closed; it expires now if nothing of it is held.
  void close(FlowId id) {
    if (FlowOperator* f = find(id)) {
      f->closing = true;
      expire_if_done(*f);
    }
  }
  // Drops a closed flow with nothing queued or in flight. Returns true when it did.
  bool expire_if_done(FlowOperator& f) {
    if (!f.closing || f.in_flight || !f.queue.empty()) return false;
    flows_.erase(f.id);
    ++expired_;
    return true;
  }

  uint64_t unprocessed() const { return unprocessed_; }
  size_t size() const { return flows_.size(); }
  uint64_t created() const { return created_; }
  uint64_t expired() const { return expired_; }
  template <class F>
  void for_each(F&& f) {
    for (auto& [id, op] : flows_) f(op);
  }

 private:
  const Chain& chain_;
  std::unordered_map<FlowId, FlowOperator> flows_;
  uint64_t unprocessed_ = 0;
  uint64_t created_ = 0;
  uint64_t expired_ = 0;
};

}  // namespace fulcrum::l7
