// What the lookup elements ask of the batch model (batch_model.hh) for `PREFETCH auto`, and how
// they measure themselves for it: a lookup's compute cycles with its data in L1, its per-call and
// per-group overheads (paper 003's C_K + C_P + C_L and the loop costs of Algorithm 1).
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "core/args.hh"
#include "core/memory_profile.hh"
#include "core/result.hh"
#include "plan/calibration.hh"

namespace fulcrum::plan {

// Keys for probe_lookup's run_hot: kDraws draws from the first kDistinct of `keys` (real keys,
// their branches and hashes, whose table lines stay in L1 over the probe), each call taking the
// next n (at most kDraws) from a cursor. Calls that repeated the same keys would let the branch
// predictor learn which of them take which branch (a MAC address in its first bucket or its
// second, a trie walk's depth), and the probe would miss the mispredictions traffic pays.
template <class K>
class ProbeDraws {
 public:
  static constexpr size_t kDraws = 2048;
  static constexpr size_t kDistinct = 256;
  // `keys` must not be empty.
  explicit ProbeDraws(const std::vector<K>& keys) : draws_(kDraws) {
    std::mt19937_64 rng(kDraws);
    const size_t distinct = std::min(kDistinct, keys.size());
    for (K& k : draws_) k = keys[rng() % distinct];
  }
  const K* next(size_t n) {
    if (at_ + n > draws_.size()) at_ = 0;
    const K* p = &draws_[at_];
    at_ += n;
    return p;
  }

 private:
  std::vector<K> draws_;
  size_t at_ = 0;
};

// Runs `run_hot(n, group)` (n lookups of keys whose table data is in L1, in groups of `group`)
// and fills m.compute_cycles, call_cycles and group_cycles from three shapes:
//   t(256, 16) = c + o_b/256 + o_g/16,  t(256, 1) = c + o_b/256 + o_g,  t(1, 1) = c + o_b + o_g,
// and m.hot_cycles: t(B, g) for every batch B and group g <= B of the grid.
void probe_lookup(const std::function<void(size_t n, unsigned group)>& run_hot, MemoryProfile& m);

// The machine part of a calibration for models run inside elements: the file named by the
// environment variable FULCRUM_CALIBRATION when set (an error there is returned), else a quick
// built-in measurement (sysfs, pointer chases, group reads; about a second, once per process).
Result<Calibration> process_calibration();

// The prefetch group the batch model picks for `m` at batch size `batch`.
unsigned auto_prefetch_group(const Calibration& c, const MemoryProfile& m, unsigned batch);

// PREFETCH's value: "auto" (true in `automatic`) or a power of two 1..64 into `group`; false
// when it is neither.
bool parse_prefetch(const std::string& text, unsigned& group, bool& automatic);

// The PREFETCH key of a group-prefetching lookup element (IPLookup, IP6Lookup, L2Switch,
// NDNLookup): a fixed group, or `auto`, resolved when the element initializes.
struct PrefetchOption {
  static constexpr std::string_view kHelp =
      "lookups per prefetch group (the prefetch distance), a power of two from 1 to 64, or auto: "
      "chosen by paper 003's batch model (src/plan/batch_model.hh) for the run's batch size, from "
      "the calibration file named by $FULCRUM_CALIBRATION or a quick built-in one";
  std::string text;
  unsigned group;
  bool automatic = false;

  explicit PrefetchOption(unsigned default_group)
      : text(std::to_string(default_group)), group(default_group) {}
  // Declares and reads the key (configure()).
  void read(Args& args) { args.key("PREFETCH", text, kHelp); }
  // Checks what was read; the error is args.error's ("FILE:LINE: NAME :: Class: PREFETCH: ...").
  Status check(const Args& args);
  // For auto: the group the model picks at `batch` for the profile `profile()` returns
  // (initialize()); called only for auto, since an element's profile times its lookups.
  template <class ProfileFn>
  Status resolve(ProfileFn&& profile, unsigned batch) {
    return automatic ? resolve_auto(profile(), batch) : Status{};
  }
  Status resolve_auto(const MemoryProfile& m, unsigned batch);
};

}  // namespace fulcrum::plan
