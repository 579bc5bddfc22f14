// TableMemory: memory for large tables read at random on the fast path (route tables,
// generator templates). DPDK hugepage memory when the EAL runs on hugepages (then it must be
// freed before any rte_eal_cleanup()), otherwise, or when that runs out, anonymous memory
// advised for transparent huge pages: at random access, TLB misses matter. Anonymous memory is
// zero from the kernel and is only committed as the table touches it.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace fulcrum {

class TableMemory {
 public:
  // Zero-filled; nullptr when out of memory or when `bytes` exceeds the machine's physical
  // memory (a table that large could only end with the process killed under overcommit).
  static std::unique_ptr<TableMemory> allocate(size_t bytes, const char* name);
  ~TableMemory();

  // The machine's physical memory in bytes (0 when unknown).
  static size_t physical_memory();
  // "cannot allocate N bytes for WHAT" plus the machine's memory when N exceeds it.
  static std::string allocation_error(size_t bytes, const std::string& what);

  void* data() const { return ptr_; }
  size_t size() const { return bytes_; }

 private:
  TableMemory() = default;
  void* ptr_ = nullptr;
  size_t bytes_ = 0;
  void* map_base_ = nullptr;
  size_t mapped_ = 0;
  bool from_dpdk_ = false;
};

}  // namespace fulcrum
