// Packet buffer pools. Every pool carrying Fulcrum packets reserves kPacketPrivSize bytes of
// private area per mbuf for the PacketAnno (the annotations beyond the mbuf's first line).
// Without reserved hugepages (and without PCI devices) a pool lives on Fulcrum's own memory,
// objects packed and on transparent huge pages where the kernel grants them (mempool.cc).
#pragma once

#include <rte_mbuf.h>
#include <rte_mempool.h>

#include <memory>
#include <string>

#include "core/result.hh"

namespace fulcrum {

inline constexpr unsigned kDefaultPoolSize = 16383;
inline constexpr unsigned kPoolCacheSize = 256;
inline constexpr uint16_t kDefaultDataRoom = 2048 + RTE_PKTMBUF_HEADROOM;

struct PoolDeleter {
  void operator()(rte_mempool* mp) const { rte_mempool_free(mp); }
};
using PoolHandle = std::unique_ptr<rte_mempool, PoolDeleter>;

// Whether pools made from now on may be packed on Fulcrum's own memory (default: yes, unless
// PCI devices are in use). A run whose ports read buffers through DPDK's memory map (a NIC, a
// virtio_user or af_xdp device; io/port.hh ports_copy_frames) turns it off before its pools.
void allow_packed_pools(bool allow);

// Where the packet pools made so far live, for run reports: "hugepages" (DPDK's), "packed on
// transparent huge pages" (Fulcrum's memory, THP advised), "4 KiB pages, one mbuf a page"
// (DPDK's without hugepages, when Fulcrum's could not be used), "none" before the first pool.
const char* packet_pool_memory();

Result<rte_mempool*> create_packet_pool(const std::string& name, unsigned size = kDefaultPoolSize,
                                        uint16_t data_room = kDefaultDataRoom,
                                        unsigned cache = kPoolCacheSize);

// For a port that fills buffers with the CPU (the generator, a replayed capture) whose buffers
// are freed on other cores (PortConfig::buffers_return_from_other_cores), right after taking `n`
// of them from `pool`: asks for the lines the fill writes (the mbuf's two, the
// frame's first) for writing, all before the first store. Buffers come back from whichever
// core freed them (in a pipelined placement, the last stage's), their lines in that core's
// cache; asked for at once, the transfers overlap instead of each store waiting for its line.
// The frame's address follows from the pool's layout (fill_frame_offset), so no line is read
// to find it.
inline size_t fill_frame_offset(const rte_mempool* pool) {
  // rte_pktmbuf_init puts the buffer right after the private area; the fill sets data_off to
  // the headroom.
  return sizeof(rte_mbuf) + rte_pktmbuf_priv_size(const_cast<rte_mempool*>(pool)) +
         RTE_PKTMBUF_HEADROOM;
}
inline void prefetch_fill_lines(const rte_mempool* pool, rte_mbuf* const* pkts, uint16_t n) {
  const size_t frame = fill_frame_offset(pool);
  for (uint16_t i = 0; i < n; ++i) {
    const char* m = reinterpret_cast<const char*>(pkts[i]);
    __builtin_prefetch(m, 1, 3);
    __builtin_prefetch(m + RTE_CACHE_LINE_SIZE, 1, 3);
    __builtin_prefetch(m + frame, 1, 3);
  }
}

}  // namespace fulcrum
