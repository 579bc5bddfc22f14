#include "io/mempool.hh"

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>
#include <rte_mbuf_pool_ops.h>
#include <sys/mman.h>

#include <atomic>
#include <cstdint>
#include <new>

#include "core/packet.hh"
#include "io/eal.hh"

namespace fulcrum {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// The mapping a pool's objects live in, described at the mapping's own start (before the first
// 2 MiB boundary, where the objects begin): nothing on the heap that only DPDK's memory points
// to (LeakSanitizer does not look there). Unmapped when the pool has freed its last chunk.
struct PoolMemory {
  void* base;
  size_t bytes;
  unsigned chunks;
};

std::atomic<bool> g_packed_allowed{true};

// The memory of the last pool made (packet_pool_memory()).
std::atomic<const char*> g_pool_memory{"none"};

void release_chunk(rte_mempool_memhdr*, void* opaque) {
  auto* m = static_cast<PoolMemory*>(opaque);
  if (--m->chunks > 0) return;
  munmap(m->base, m->bytes);  // m lives in the mapping: nothing is read after this
}

// Without reserved hugepages DPDK lays a pool out on 4 KiB pages with objects that may not cross
// a page (it must be able to give each one an IO address): a 2.4 KiB mbuf takes a page of its
// own, so every mbuf header sits at the same offset in its page, and so does every frame. All
// 64 headers of a batch then fall into one set of the 8-way L1 cache (all frames into another):
// every element's pass over a batch misses L1 on each packet (tests/mempool_test.cc; the router
// ran at 14 Mpps instead of 40, docs/benchmarks.md "Packet pools without hugepages"). Such a
// pool goes on private anonymous memory instead, objects packed (DPDK's odd-line spread between
// them), 2 MiB aligned and advised for transparent huge pages where the kernel grants them
// (TLB reach). Only when every port copies frames with the CPU (allow_packed_pools; never with a
// PCI device in use): a NIC, virtio_user or af_xdp would reach the buffers through DPDK's memory
// map, which does not hold this memory. nullptr: not applicable or not possible; the caller
// takes DPDK's pool.
rte_mempool* create_packed_pool(const std::string& name, unsigned size, unsigned cache,
                                uint16_t data_room) {
  if (rte_eal_has_hugepages() || eal_has_pci() || !g_packed_allowed) return nullptr;
  const unsigned elt_size = sizeof(rte_mbuf) + kPacketPrivSize + data_room;
  rte_mempool* mp = rte_mempool_create_empty(name.c_str(), size, elt_size, cache,
                                             sizeof(rte_pktmbuf_pool_private), SOCKET_ID_ANY,
                                             RTE_MEMPOOL_F_NO_IOVA_CONTIG);
  if (mp == nullptr) return nullptr;
  rte_pktmbuf_pool_private priv{};
  priv.mbuf_data_room_size = data_room;
  priv.mbuf_priv_size = kPacketPrivSize;
  rte_mempool_objsz sz{};
  const uint32_t obj_bytes = rte_mempool_calc_obj_size(elt_size, mp->flags, &sz);
  if (obj_bytes == 0 || obj_bytes > kHugePage ||
      rte_mempool_set_ops_byname(mp, rte_mbuf_best_mempool_ops(), nullptr) != 0) {
    rte_mempool_free(mp);
    return nullptr;
  }
  const size_t need = (size_t{size} * obj_bytes + kHugePage - 1) / kHugePage * kHugePage;
  rte_pktmbuf_pool_init(mp, &priv);
  const size_t bytes = need + kHugePage;  // room for the description and to align the start
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) {
    rte_mempool_free(mp);
    return nullptr;
  }
  auto* mem = new (p) PoolMemory{p, bytes, 0};
  auto* start = reinterpret_cast<char*>(
      (reinterpret_cast<uintptr_t>(p) + sizeof(PoolMemory) + kHugePage - 1) &
      ~(uintptr_t{kHugePage} - 1));
  const size_t usable = bytes - static_cast<size_t>(start - static_cast<char*>(p));
  madvise(start, usable, MADV_HUGEPAGE);
  const int added = rte_mempool_populate_virt(mp, start, usable, kHugePage, release_chunk, mem);
  if (added < 0 || mp->populated_size != size) {
    mem->chunks = mp->nb_mem_chunks;
    const bool unmap_here = mem->chunks == 0;
    rte_mempool_free(mp);  // releases the chunks added, the last one unmapping
    if (unmap_here) munmap(p, bytes);
    return nullptr;
  }
  mem->chunks = mp->nb_mem_chunks;
  rte_mempool_obj_iter(mp, rte_pktmbuf_init, nullptr);
  return mp;
}

}  // namespace

Result<rte_mempool*> create_packet_pool(const std::string& name, unsigned size, uint16_t data_room,
                                        unsigned cache) {
  static std::atomic<unsigned> serial{0};
  // Pool names are global in DPDK; a serial number keeps them unique across runs in one process.
  const std::string unique = name + "_" + std::to_string(serial++);
  if (rte_mempool* mp = create_packed_pool(unique, size, cache, data_room)) {
    g_pool_memory = "packed on transparent huge pages";
    return mp;
  }
  rte_mempool* mp = rte_pktmbuf_pool_create(unique.c_str(), size, cache, kPacketPrivSize, data_room,
                                            static_cast<int>(rte_socket_id()));
  if (mp == nullptr)
    return make_error("cannot create packet pool '" + name + "': " + rte_strerror(rte_errno));
  g_pool_memory = rte_eal_has_hugepages() ? "hugepages" : "4 KiB pages, one mbuf a page";
  return mp;
}

void allow_packed_pools(bool allow) {
  g_packed_allowed = allow;
}

const char* packet_pool_memory() {
  return g_pool_memory.load();
}

}  // namespace fulcrum
