// The IDS content prefilter on a device: the Aho-Corasick DFA of ENGINE ac (src/lib/ids/
// aho_corasick.hh: one caseless automaton, case-sensitive contents verified by the rule engine
// afterwards) uploaded once per device (IdsScanTables: the byte classes and the transition
// table, as the CPU walks them), and the per-packet result of one scan (IdsScanResult).
//
// Kernel ids_ac_scan(bytes, regions, classes, table, results, count) (kernels/ids_ac_scan.cl):
// one work item per packet walks its region with the DFA and records every step into a state with
// outputs as (target state entry, end offset), the first kIdsMaxMatches of them, and how many there
// were. The CPU expands a step into the state's pattern ids (out_begin/out_ids, not uploaded) in
// the order AhoCorasick::scan reports them; a packet with more steps than fit is overflowed and is
// scanned again on the CPU, so no occurrence is lost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/result.hh"
#include "kernels/common/ids_ac_layout.h"
#include "lib/ids/aho_corasick.hh"
#include "offload/device.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

inline constexpr const char* kIdsScanKernel = "ids_ac_scan";
inline constexpr uint32_t kIdsMaxMatches = IDS_AC_MAX_MATCHES;

// What the kernel writes per packet: the write datablock of an offloadable IDS element.
struct IdsScanResult {
  uint32_t count;  // steps into a state with outputs; more than kIdsMaxMatches: overflowed
  struct Step {
    uint32_t state;  // the DFA entry's target (premultiplied by the stride, kMatchBit clear)
    uint32_t end;    // offset one past the last byte of the occurrences, within the region
  } steps[kIdsMaxMatches];

  bool overflowed() const { return count > kIdsMaxMatches; }

  // Calls on_match(id, end) for every occurrence, as ac.scan() over the region would; false
  // (nothing called) when overflowed.
  template <class OnMatch>
  bool expand(const ids::AhoCorasick& ac, OnMatch&& on_match) const {
    if (overflowed()) return false;
    const uint32_t* begin = ac.out_begin().data();
    const uint32_t* ids = ac.out_ids().data();
    for (uint32_t k = 0; k < count; ++k) {
      const uint32_t s = steps[k].state / ac.stride();
      for (uint32_t o = begin[s]; o < begin[s + 1]; ++o) on_match(ids[o], steps[k].end);
    }
    return true;
  }
};
static_assert(sizeof(IdsScanResult) == sizeof(uint32_t) * IDS_AC_RESULT_WORDS);
static_assert(offsetof(IdsScanResult, steps) == sizeof(uint32_t));
static_assert(sizeof(IdsScanResult::Step) == 2 * sizeof(uint32_t));

// A built AhoCorasick's classes and table on one device.
class IdsScanTables {
 public:
  static Result<std::unique_ptr<IdsScanTables>> upload(Device& device, const ids::AhoCorasick& ac);

  Device& device() const { return device_; }
  // The kernel's arguments: the task's bytes and regions, these tables, the results and the
  // count (the layout of offload/task.hh).
  std::vector<TaskArg> args() const;

 private:
  IdsScanTables(Device& d, std::unique_ptr<DeviceBuffer> classes,
                std::unique_ptr<DeviceBuffer> table)
      : device_(d), classes_(std::move(classes)), table_(std::move(table)) {}

  Device& device_;
  std::unique_ptr<DeviceBuffer> classes_;
  std::unique_ptr<DeviceBuffer> table_;
};

}  // namespace fulcrum::offload
