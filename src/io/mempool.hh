// Packet buffer pools. Every pool carrying Fulcrum packets reserves kPacketPrivSize bytes of
// private area per mbuf for the PacketAnno (the annotations beyond the mbuf's first line).
// Without reserved hugepages (and without PCI devices) a pool lives on Fulcrum's own memory,
// objects packed and on transparent huge pages where the kernel grants them (mempool.cc).
#pragma once

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

}  // namespace fulcrum
