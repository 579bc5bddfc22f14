#include "lib/table_memory.hh"

#include <rte_eal.h>
#include <rte_malloc.h>
#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

#include "io/eal.hh"

namespace fulcrum {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kCacheLine = 64;

}  // namespace

std::unique_ptr<TableMemory> TableMemory::allocate(size_t bytes, const char* name) {
  std::unique_ptr<TableMemory> m(new TableMemory());
  m->bytes_ = bytes;
  if (eal_ready() && rte_eal_has_hugepages()) {
    m->ptr_ = rte_zmalloc_socket(name, bytes, kCacheLine, SOCKET_ID_ANY);
    m->from_dpdk_ = m->ptr_ != nullptr;
  }
  if (m->ptr_ == nullptr) {
    const size_t align = bytes >= kHugePageBytes ? kHugePageBytes : kCacheLine;
    const size_t rounded = (bytes + align - 1) / align * align;
    m->ptr_ = std::aligned_alloc(align, rounded);
    if (m->ptr_ == nullptr) return nullptr;
    if (align == kHugePageBytes) madvise(m->ptr_, rounded, MADV_HUGEPAGE);
    std::memset(m->ptr_, 0, rounded);
  }
  return m;
}

TableMemory::~TableMemory() {
  if (from_dpdk_)
    rte_free(ptr_);
  else
    std::free(ptr_);
}

}  // namespace fulcrum
