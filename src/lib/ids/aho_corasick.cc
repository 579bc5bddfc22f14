#include "lib/ids/aho_corasick.hh"

#include <cctype>
#include <deque>

namespace fulcrum::ids {
namespace {

constexpr uint32_t kNone = UINT32_MAX;

uint8_t fold(uint8_t c, bool caseless) {
  return caseless ? static_cast<uint8_t>(std::tolower(c)) : c;
}

}  // namespace

void AhoCorasick::add(std::string_view pattern, uint32_t id) {
  patterns_.emplace_back(std::string(pattern), id);
}

Status AhoCorasick::build() {
  // Alphabet classes: one per distinct (folded) pattern byte, class 0 for the rest.
  std::array<uint16_t, kAlphabet> cls{};
  uint32_t nclasses = 1;
  for (const auto& [p, id] : patterns_) {
    if (p.empty()) return make_error("empty pattern (id " + std::to_string(id) + ")");
    for (char ch : p) {
      const uint8_t c = fold(static_cast<uint8_t>(ch), caseless_);
      if (cls[c] == 0) cls[c] = static_cast<uint16_t>(nclasses++);
    }
  }
  for (uint32_t c = 0; c < kAlphabet; ++c)
    classes_[c] = static_cast<uint8_t>(cls[fold(static_cast<uint8_t>(c), caseless_)]);
  if (nclasses > kAlphabet) return make_error("more than 255 distinct pattern bytes");
  stride_ = nclasses;

  // Trie: go[state * stride + class], kNone where there is no edge.
  std::vector<uint32_t> go(stride_, kNone);
  std::vector<std::vector<uint32_t>> outs(1);
  uint32_t nstates = 1;
  for (const auto& [p, id] : patterns_) {
    uint32_t s = 0;
    for (char ch : p) {
      const uint32_t c = classes_[static_cast<uint8_t>(ch)];
      if (go[size_t{s} * stride_ + c] == kNone) {
        if (size_t{nstates + 1} * stride_ > kStateMask)
          return make_error("the DFA would exceed " + std::to_string(kStateMask) + " entries");
        go[size_t{s} * stride_ + c] = nstates++;
        go.resize(size_t{nstates} * stride_, kNone);
        outs.emplace_back();
      }
      s = go[size_t{s} * stride_ + c];
    }
    outs[s].push_back(id);
  }

  // Failure links breadth first; each missing edge takes the failure state's edge, and each
  // state inherits the outputs of its failure state (already complete: it is shallower).
  std::vector<uint32_t> fail(nstates, 0);
  std::deque<uint32_t> queue;
  for (uint32_t c = 0; c < stride_; ++c) {
    uint32_t& t = go[c];
    if (t == kNone) {
      t = 0;
    } else {
      fail[t] = 0;
      queue.push_back(t);
    }
  }
  while (!queue.empty()) {
    const uint32_t s = queue.front();
    queue.pop_front();
    const std::vector<uint32_t>& inherited = outs[fail[s]];
    outs[s].insert(outs[s].end(), inherited.begin(), inherited.end());
    for (uint32_t c = 0; c < stride_; ++c) {
      uint32_t& t = go[size_t{s} * stride_ + c];
      const uint32_t via_fail = go[size_t{fail[s]} * stride_ + c];
      if (t == kNone) {
        t = via_fail;
      } else {
        fail[t] = via_fail;
        queue.push_back(t);
      }
    }
  }

  states_ = nstates;
  table_.assign(go.size(), 0);
  for (size_t i = 0; i < go.size(); ++i)
    table_[i] = go[i] * stride_ | (outs[go[i]].empty() ? 0 : kMatchBit);
  out_begin_.assign(size_t{nstates} + 1, 0);
  out_ids_.clear();
  for (uint32_t s = 0; s < nstates; ++s) {
    out_begin_[s] = static_cast<uint32_t>(out_ids_.size());
    out_ids_.insert(out_ids_.end(), outs[s].begin(), outs[s].end());
  }
  out_begin_[nstates] = static_cast<uint32_t>(out_ids_.size());
  return {};
}

}  // namespace fulcrum::ids
