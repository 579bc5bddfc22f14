// For the IPv4 and IPv6 lookup kernel tests: every address through a device in aggregated
// tasks (batches of `batch`, as many per task as the task takes), synchronously, and the
// comparison of each device's next hops with the CPU function's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "offload/discovery.hh"
#include "offload/task.hh"

namespace fulcrum::testing {

// Tables::upload(device, table) and Task::create(tables, capacity) as in offload/ipv4_lookup.hh
// and offload/ipv6_lookup.hh.
template <class Tables, class Task, class Table, class Addr>
std::vector<uint16_t> lookup_on_device(offload::Device& device, const Table& table,
                                       const Addr* addrs, size_t count, uint32_t batch) {
  auto tables = Tables::upload(device, table);
  EXPECT_TRUE(tables.ok()) << tables.error();
  if (!tables) return {};
  auto task = Task::create(*tables.value(), batch * offload::kDefaultAggregateBatches);
  EXPECT_TRUE(task.ok()) << task.error();
  auto exec = offload::TaskExecutor::create(device);
  EXPECT_TRUE(exec.ok()) << exec.error();
  if (!task || !exec) return {};
  std::vector<uint16_t> out;
  Task& t = *task.value();
  auto flush = [&] {
    EXPECT_EQ(offload::run_task_sync(*exec.value(), t.task), offload::TaskStatus::kOk)
        << t.task.error;
    out.insert(out.end(), t.next_hops(), t.next_hops() + t.task.items);
    t.task.reset();
  };
  for (size_t i = 0; i < count; i += batch) {
    const auto n = static_cast<uint32_t>(std::min<size_t>(batch, count - i));
    if (!t.add_batch(addrs + i, n)) {
      flush();
      EXPECT_TRUE(t.add_batch(addrs + i, n));
    }
  }
  flush();
  return out;
}

// On every device of `backend`, lookup(device) equals `cpu` hop for hop.
template <class Lookup>
void expect_devices_match(offload::Backend backend, const std::vector<uint16_t>& cpu,
                          Lookup&& lookup) {
  offload::DiscoverOptions only;
  only.only = backend;
  for (const auto& dev : offload::discover_devices(only)) {
    SCOPED_TRACE(dev->label());
    const std::vector<uint16_t> got = lookup(*dev);
    ASSERT_EQ(got.size(), cpu.size());
    size_t mismatches = 0;
    for (size_t i = 0; i < got.size(); ++i) mismatches += got[i] != cpu[i];
    EXPECT_EQ(mismatches, 0u);
  }
}

}  // namespace fulcrum::testing
