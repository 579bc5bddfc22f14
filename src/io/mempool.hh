// Packet buffer pools. Every pool carrying Fulcrum packets reserves kPacketPrivSize bytes of
// private area per mbuf for the PacketAnno (the annotations beyond the mbuf's first line).
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

Result<rte_mempool*> create_packet_pool(const std::string& name, unsigned size = kDefaultPoolSize,
                                        uint16_t data_room = kDefaultDataRoom,
                                        unsigned cache = kPoolCacheSize);

}  // namespace fulcrum
