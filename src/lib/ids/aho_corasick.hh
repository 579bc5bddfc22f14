// AhoCorasick: a multi-pattern literal matcher compiled to a full DFA in flat arrays, so that
// the same buffers can be copied to a device as they are (docs/ids.md, "DFA layout").
//
//   AhoCorasick ac(/*caseless=*/true);
//   ac.add("GET /", 7);  ac.add("|0d 0a|", 8);  ...
//   ac.build();
//   ac.scan(data, len, [](uint32_t id, uint32_t end) { ... });  // every occurrence
//
// Layout (all uint32 unless noted):
//   classes[256]  u8   byte -> alphabet class. Bytes that occur in no pattern share class 0;
//                      with caseless, 'A' and 'a' share a class (the input is folded by it).
//   table[states * stride]  next-state entry for (state, class) at state * stride + class,
//                      stride = number of classes. An entry is the target state premultiplied
//                      by stride (so it indexes the table directly), with kMatchBit set when
//                      the target state has outputs. State 0 is the root.
//   out_begin[states + 1], out_ids[]  the pattern ids ending at state s are
//                      out_ids[out_begin[s] .. out_begin[s + 1]), the ids of its suffix
//                      states (failure chain) included.
// Construction: a trie (goto function) over the classes, failure links in breadth-first order,
// then every missing transition is filled from the failure state: a complete DFA, one load per
// input byte, no failure walks while scanning.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/result.hh"
#include "kernels/common/ids_ac_layout.h"

namespace fulcrum::ids {

class AhoCorasick {
 public:
  // The entry encoding the device kernel walks too (kernels/common/ids_ac_layout.h).
  static constexpr uint32_t kMatchBit = IDS_AC_MATCH_BIT;
  static constexpr uint32_t kStateMask = IDS_AC_STATE_MASK;
  static constexpr uint32_t kAlphabet = IDS_AC_ALPHABET;

  explicit AhoCorasick(bool caseless = false) : caseless_(caseless) {}

  // Adds a pattern (non-empty) reported as `id`; several patterns may share an id.
  void add(std::string_view pattern, uint32_t id);
  // Builds the DFA. Fails when the table would not fit (more than kStateMask entries).
  Status build();

  // Calls on_match(id, end) for every occurrence of every pattern in data[0, len), where `end`
  // is the offset one past the occurrence's last byte, in increasing order of end.
  template <class OnMatch>
  void scan(const uint8_t* data, size_t len, OnMatch&& on_match) const {
    const uint32_t* table = table_.data();
    const uint8_t* classes = classes_.data();
    uint32_t s = 0;
    for (size_t i = 0; i < len; ++i) {
      const uint32_t e = table[s + classes[data[i]]];
      s = e & kStateMask;
      if (e & kMatchBit) [[unlikely]]
        report(s, static_cast<uint32_t>(i + 1), on_match);
    }
  }

  // Scans up to kLanes buffers at once, interleaving their state walks so that the table loads
  // of one buffer overlap those of the others. on_match(lane, id, end).
  static constexpr uint32_t kLanes = 4;
  template <class OnMatch>
  void scan_lanes(const uint8_t* const* data, const uint32_t* len, uint32_t lanes,
                  OnMatch&& on_match) const {
    const uint32_t* table = table_.data();
    const uint8_t* classes = classes_.data();
    uint32_t s[kLanes] = {};
    uint32_t common = UINT32_MAX;
    for (uint32_t l = 0; l < lanes; ++l) common = std::min(common, len[l]);
    if (lanes == 0) common = 0;
    for (uint32_t i = 0; i < common; ++i) {
      for (uint32_t l = 0; l < kLanes; ++l) {
        if (l >= lanes) break;
        const uint32_t e = table[s[l] + classes[data[l][i]]];
        s[l] = e & kStateMask;
        if (e & kMatchBit) [[unlikely]]
          report(s[l], i + 1, [&](uint32_t id, uint32_t end) { on_match(l, id, end); });
      }
    }
    for (uint32_t l = 0; l < lanes; ++l) {
      uint32_t st = s[l];
      for (uint32_t i = common; i < len[l]; ++i) {
        const uint32_t e = table[st + classes[data[l][i]]];
        st = e & kStateMask;
        if (e & kMatchBit) [[unlikely]]
          report(st, i + 1, [&](uint32_t id, uint32_t end) { on_match(l, id, end); });
      }
    }
  }

  bool caseless() const { return caseless_; }
  uint32_t states() const { return states_; }
  uint32_t stride() const { return stride_; }
  size_t patterns() const { return patterns_.size(); }
  std::span<const uint8_t> classes() const { return classes_; }
  std::span<const uint32_t> table() const { return table_; }
  std::span<const uint32_t> out_begin() const { return out_begin_; }
  std::span<const uint32_t> out_ids() const { return out_ids_; }
  size_t memory_bytes() const {
    return classes_.size() + (table_.size() + out_begin_.size() + out_ids_.size()) * 4;
  }

 private:
  template <class OnMatch>
  void report(uint32_t premultiplied, uint32_t end, OnMatch&& on_match) const {
    const uint32_t state = premultiplied / stride_;
    for (uint32_t k = out_begin_[state]; k < out_begin_[state + 1]; ++k) on_match(out_ids_[k], end);
  }

  bool caseless_;
  std::vector<std::pair<std::string, uint32_t>> patterns_;
  std::array<uint8_t, kAlphabet> classes_{};
  uint32_t stride_ = 1;
  uint32_t states_ = 1;
  std::vector<uint32_t> table_ = std::vector<uint32_t>(1, 0);
  std::vector<uint32_t> out_begin_ = std::vector<uint32_t>(2, 0);
  std::vector<uint32_t> out_ids_;
};

}  // namespace fulcrum::ids
