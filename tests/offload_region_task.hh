// For the kernel tests of whole-packet datablocks: packs messages into one task the way an
// offloadable element's task carries them (offload/task.hh: kBytesInput, each region starting
// at a multiple of `align`, plus `skew` bytes to reach unaligned paths; kRegionsInput {offset,
// length} per message; kResultsOutput `result_bytes` per message) and runs it synchronously.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "offload/device.hh"
#include "offload/task.hh"

namespace fulcrum::testing {

struct RegionRun {
  uint32_t align = 16;
  uint32_t skew = 0;
  uint32_t item_bytes = 0;  // kItemsInput bytes per message, all zero
  // TaskExecutor::warm first (asserted to succeed and to leave the results untouched).
  bool warm = false;
};

// The kernel's results for messages[first, first + n), or an empty vector after a failure.
inline std::vector<uint8_t> run_regions(offload::Device& dev, offload::TaskExecutor& exec,
                                        const std::string& kernel,
                                        const std::vector<offload::TaskArg>& args,
                                        const std::vector<std::vector<uint8_t>>& messages,
                                        size_t first, size_t n, uint32_t result_bytes,
                                        RegionRun layout = {}) {
  std::vector<offload::Region> regions(n);
  size_t bytes = 0;
  for (size_t k = 0; k < n; ++k) {
    bytes = (bytes + layout.align - 1) / layout.align * layout.align + layout.skew;
    regions[k] = {static_cast<uint32_t>(bytes), static_cast<uint32_t>(messages[first + k].size())};
    bytes += messages[first + k].size();
  }
  auto packed = dev.alloc_host(std::max<size_t>(bytes, 1));
  auto where = dev.alloc_host(n * sizeof(offload::Region));
  auto results = dev.alloc_host(n * result_bytes);
  auto items = dev.alloc_host(std::max<size_t>(n * layout.item_bytes, 1));
  EXPECT_TRUE(packed.ok() && where.ok() && results.ok() && items.ok());
  if (!packed || !where || !results || !items) return {};
  std::memset(items.value()->data(), 0, items.value()->size());
  for (size_t k = 0; k < n; ++k)
    if (!messages[first + k].empty())
      std::memcpy(packed.value()->as<uint8_t>() + regions[k].offset, messages[first + k].data(),
                  messages[first + k].size());
  std::memcpy(where.value()->data(), regions.data(), n * sizeof(offload::Region));
  std::memset(results.value()->data(), 0xA5, n * result_bytes);  // stale bytes must be rewritten
  offload::OffloadTask task;
  task.inputs = {{items.value().get(), layout.item_bytes},
                 {packed.value().get(), 0, static_cast<uint32_t>(bytes)},
                 {where.value().get(), sizeof(offload::Region)}};
  task.outputs = {{results.value().get(), result_bytes}};
  task.launches = {{kernel, args}};
  task.capacity = static_cast<uint32_t>(n);
  task.items = static_cast<uint32_t>(n);
  task.batches = 1;
  if (layout.warm) {
    const Status s = exec.warm(task);
    EXPECT_TRUE(s.ok()) << s.error();
    const auto* r = results.value()->as<const uint8_t>();
    EXPECT_TRUE(std::all_of(r, r + n * result_bytes, [](uint8_t b) { return b == 0xA5; }))
        << "warming copied results back";
  }
  EXPECT_EQ(offload::run_task_sync(exec, task), offload::TaskStatus::kOk) << task.error;
  if (task.status != offload::TaskStatus::kOk) return {};
  const auto* r = results.value()->as<const uint8_t>();
  return {r, r + n * result_bytes};
}

}  // namespace fulcrum::testing
