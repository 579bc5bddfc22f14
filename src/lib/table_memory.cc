#include "lib/table_memory.hh"

#include <rte_eal.h>
#include <rte_malloc.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>

#include "io/eal.hh"

namespace fulcrum {
namespace {

constexpr size_t kHugePageBytes = size_t{2} << 20;
constexpr size_t kCacheLine = 64;

}  // namespace

size_t TableMemory::physical_memory() {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page_size <= 0) return 0;
  return static_cast<size_t>(pages) * static_cast<size_t>(page_size);
}

std::string TableMemory::allocation_error(size_t bytes, const std::string& what) {
  std::string e = "cannot allocate " + std::to_string(bytes) + " bytes for " + what;
  const size_t phys = physical_memory();
  if (phys != 0 && bytes > phys)
    e += " (more than this machine's " + std::to_string(phys) + " bytes of memory)";
  return e;
}

std::unique_ptr<TableMemory> TableMemory::allocate(size_t bytes, const char* name) {
  const size_t phys = physical_memory();
  if (phys != 0 && bytes > phys) return nullptr;
  std::unique_ptr<TableMemory> m(new TableMemory());
  m->bytes_ = bytes;
  if (eal_ready() && rte_eal_has_hugepages()) {
    m->ptr_ = rte_zmalloc_socket(name, bytes, kCacheLine, SOCKET_ID_ANY);
    m->from_dpdk_ = m->ptr_ != nullptr;
  }
  if (m->ptr_ == nullptr && bytes < kHugePageBytes) {
    const size_t rounded = (bytes + kCacheLine - 1) / kCacheLine * kCacheLine;
    m->ptr_ = std::aligned_alloc(kCacheLine, rounded == 0 ? kCacheLine : rounded);
    if (m->ptr_ == nullptr) return nullptr;
    std::memset(m->ptr_, 0, rounded);
  } else if (m->ptr_ == nullptr) {
    const size_t rounded = (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
    // Over-map by one huge page so the table can start on a 2 MiB boundary.
    const size_t mapped = rounded + kHugePageBytes;
    void* p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return nullptr;
    const auto base = reinterpret_cast<uintptr_t>(p);
    const uintptr_t aligned = (base + kHugePageBytes - 1) & ~(uintptr_t{kHugePageBytes} - 1);
    m->ptr_ = reinterpret_cast<void*>(aligned);
    m->map_base_ = p;
    m->mapped_ = mapped;
    madvise(m->ptr_, rounded, MADV_HUGEPAGE);
  }
  return m;
}

TableMemory::~TableMemory() {
  if (from_dpdk_)
    rte_free(ptr_);
  else if (map_base_ != nullptr)
    munmap(map_base_, mapped_);
  else
    std::free(ptr_);
}

}  // namespace fulcrum
