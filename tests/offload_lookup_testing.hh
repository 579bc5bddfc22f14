// For the IPv4 and IPv6 lookup kernel tests: every address through a device the way an
// offloadable lookup element's tasks carry it (the element's OffloadSpec, the task buffers of
// offload/stage/task_pool.hh, the kernel arguments of its device tables), in aggregated tasks
// (batches of `batch`, as many per task as the task takes), synchronously, and the comparison of
// each device's next hops with the CPU function's.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "offload/discovery.hh"
#include "offload/stage/task_pool.hh"
#include "offload/task.hh"

namespace fulcrum::testing {

// Element is IPLookupOffload or IP6LookupOffload, Tables its device tables (upload(device,
// table), args()); `addrs` holds `count` items of Element::kOffload.read_bytes each.
template <class Element, class Tables, class Table>
std::vector<uint16_t> lookup_on_device(offload::Device& device, const Table& table,
                                       const void* addrs, size_t count, uint32_t batch) {
  constexpr offload::OffloadSpec kSpec = Element::kOffload;
  static_assert(kSpec.write_bytes == sizeof(uint16_t), "a lookup writes a 16-bit next hop");
  auto tables = Tables::upload(device, table);
  EXPECT_TRUE(tables.ok()) << tables.error();
  if (!tables) return {};
  auto task = offload::make_task(device, 0, kSpec, offload::kDefaultAggregateBatches, 0, false,
                                 tables.value()->args());
  EXPECT_TRUE(task.ok()) << task.error();
  auto exec = offload::TaskExecutor::create(device);
  EXPECT_TRUE(exec.ok()) << exec.error();
  if (!task || !exec) return {};
  std::vector<uint16_t> out;
  offload::TaskBuffers& t = *task.value();
  auto flush = [&] {
    EXPECT_EQ(offload::run_task_sync(*exec.value(), t.task), offload::TaskStatus::kOk)
        << t.task.error;
    const auto* hops = t.out->as<const uint16_t>();
    out.insert(out.end(), hops, hops + t.task.items);
    t.task.reset();
  };
  const auto* in = static_cast<const uint8_t*>(addrs);
  for (size_t i = 0; i < count; i += batch) {
    const auto n = static_cast<uint32_t>(std::min<size_t>(batch, count - i));
    if (!t.task.fits(n)) {
      flush();
      EXPECT_TRUE(t.task.fits(n));
    }
    std::memcpy(t.in_item(t.task.items), in + i * kSpec.read_bytes, size_t{n} * kSpec.read_bytes);
    t.task.add_batch(n);
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
