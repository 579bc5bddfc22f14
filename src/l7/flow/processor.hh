// Processor: where the proxy hands messages and takes them back. The proxy calls open_flow when
// a client connects, submit() for each complete message, poll() from its event loop (its return
// tells how long epoll may sleep), and close_flow when the connection ends. Messages come back
// from poll() with their verdicts, each flow's messages in submission order per direction.
//
//   InlineProcessor (here)   runs the chain at submit(), on the calling thread: no batching.
//   BatchProcessor           FlowShader's flow manager + batch manager + flow scheduler
//   (flow/batch_processor.hh) (paper 004 §III–IV): batches on a message-count threshold or a
//                            timeout, splits flows between the CPU and a device by size.
#pragma once

#include <cstdint>
#include <limits>
#include <memory>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "l7/flow/message.hh"
#include "l7/nf/chain.hh"

namespace fulcrum::l7 {

inline constexpr uint64_t kNoDeadline = std::numeric_limits<uint64_t>::max();

class Processor {
 public:
  virtual ~Processor() = default;
  virtual void open_flow(FlowId id) = 0;
  // The flow's messages still held are processed and returned by later polls before its state
  // is dropped.
  virtual void close_flow(FlowId id) = 0;
  virtual void submit(Message&& m) = 0;
  // Does the work that is due at `now_ns` (CLOCK_MONOTONIC) and appends finished messages to
  // `out`. Returns the time at which it next has work without new input (kNoDeadline: none).
  virtual uint64_t poll(uint64_t now_ns, std::vector<Message>& out) = 0;
};

class InlineProcessor final : public Processor {
 public:
  explicit InlineProcessor(std::shared_ptr<Chain> chain) : chain_(std::move(chain)) {}

  void open_flow(FlowId id) override { states_[id] = chain_->new_state(); }
  void close_flow(FlowId id) override { states_.erase(id); }
  void submit(Message&& m) override {
    auto it = states_.find(m.flow);
    if (it == states_.end()) it = states_.emplace(m.flow, chain_->new_state()).first;
    chain_->process(m, it->second);
    done_.push_back(std::move(m));
  }
  uint64_t poll(uint64_t, std::vector<Message>& out) override {
    for (auto& m : done_) out.push_back(std::move(m));
    done_.clear();
    return kNoDeadline;
  }
  // The flow's state record; null for an unknown flow (tests compare it with BatchProcessor's).
  const std::vector<uint8_t>* state(FlowId id) const {
    auto it = states_.find(id);
    return it == states_.end() ? nullptr : &it->second;
  }

 private:
  std::shared_ptr<Chain> chain_;
  std::unordered_map<FlowId, std::vector<uint8_t>> states_;
  std::vector<Message> done_;
};

}  // namespace fulcrum::l7
