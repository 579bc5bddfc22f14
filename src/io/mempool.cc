#include "io/mempool.hh"

#include <rte_errno.h>
#include <rte_lcore.h>
#include <rte_mbuf.h>

#include <atomic>

#include "core/packet.hh"

namespace fulcrum {

Result<rte_mempool*> create_packet_pool(const std::string& name, unsigned size, uint16_t data_room,
                                        unsigned cache) {
  static std::atomic<unsigned> serial{0};
  // Pool names are global in DPDK; a serial number keeps them unique across runs in one process.
  const std::string unique = name + "_" + std::to_string(serial++);
  rte_mempool* mp = rte_pktmbuf_pool_create(unique.c_str(), size, cache, kPacketPrivSize, data_room,
                                            static_cast<int>(rte_socket_id()));
  if (mp == nullptr)
    return make_error("cannot create packet pool '" + name + "': " + rte_strerror(rte_errno));
  return mp;
}

}  // namespace fulcrum
