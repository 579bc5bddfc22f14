// TableMemory: memory for large tables read at random on the fast path (route tables,
// generator templates). DPDK hugepage memory when the EAL runs on hugepages (then it must be
// freed before any rte_eal_cleanup()), otherwise, or when that runs out, 2 MiB-aligned heap
// memory advised for transparent huge pages: at random access, TLB misses matter.
#pragma once

#include <cstddef>
#include <memory>

namespace fulcrum {

class TableMemory {
 public:
  // Zero-filled; nullptr when out of memory.
  static std::unique_ptr<TableMemory> allocate(size_t bytes, const char* name);
  ~TableMemory();

  void* data() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  TableMemory() = default;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  bool from_dpdk_ = false;
};

}  // namespace fulcrum
