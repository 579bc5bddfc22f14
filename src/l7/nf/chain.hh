// Chain: NFs run in order on each message (a service chain, paper 004 §III-E). A flow's state for
// the chain is one byte vector: each NF's state_bytes() at its offset, so a flow's whole state
// moves to a device and back as one record.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "l7/nf/nf.hh"

namespace fulcrum::l7 {

class Chain {
 public:
  Chain() = default;
  explicit Chain(std::vector<std::unique_ptr<FlowNf>> nfs) {
    for (auto& nf : nfs) add(std::move(nf));
  }

  void add(std::unique_ptr<FlowNf> nf) {
    offsets_.push_back(state_bytes_);
    state_bytes_ += (nf->state_bytes() + 7) & ~size_t{7};
    nfs_.push_back(std::move(nf));
  }

  size_t size() const { return nfs_.size(); }
  FlowNf& nf(size_t i) const { return *nfs_[i]; }
  size_t state_offset(size_t i) const { return offsets_[i]; }
  size_t state_bytes() const { return state_bytes_; }

  // A new flow's state, each NF's part initialised.
  std::vector<uint8_t> new_state() const {
    std::vector<uint8_t> s(state_bytes_);
    for (size_t i = 0; i < nfs_.size(); ++i) nfs_[i]->init_state(part(s, i));
    return s;
  }

  std::span<uint8_t> part(std::span<uint8_t> state, size_t i) const {
    return state.subspan(offsets_[i], nfs_[i]->state_bytes());
  }

  // Runs the NFs on `m` in order, stopping at the first verdict that is not kForward.
  void process(Message& m, std::span<uint8_t> state) const {
    for (size_t i = 0; i < nfs_.size(); ++i) {
      nfs_[i]->process(m, part(state, i));
      if (m.verdict.action != Action::kForward) return;
    }
  }

  // True when every NF has a device form (the chain can run as one fused kernel).
  bool offloadable() const {
    for (const auto& nf : nfs_)
      if (!nf->device_op()) return false;
    return !nfs_.empty();
  }

 private:
  std::vector<std::unique_ptr<FlowNf>> nfs_;
  std::vector<size_t> offsets_;
  size_t state_bytes_ = 0;
};

}  // namespace fulcrum::l7
