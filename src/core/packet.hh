// Packets are DPDK mbufs. Fulcrum's per-packet annotations live in the mbuf private area
// (rte_mbuf_to_priv), one cache line, so they travel with the buffer between elements, workers
// and devices without a side table.
#pragma once

#include <rte_mbuf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fulcrum {

using Packet = rte_mbuf;

inline constexpr uint16_t kNoPort = 0xFFFF;

// Per-packet annotation slots. Layout (64 bytes, one cache line):
//   0  in_port       u16  port index the packet arrived on (order of --port)
//   2  out_port      u16  port to transmit on; kNoPort = echo through in_port
//   4  flow_hash     u32  RSS / generator flow hash
//   8  timestamp_ns  u64  RX time (TSC-derived ns), 0 when not taken
//  16  flow_id       u32  application flow id (e.g. IPsec SA index)
//  20  batch_id      u32  free for elements that track batches (the RX path does not set it)
//  24  user[5]       u64  free slots for elements (documented by the element that sets them);
//                         user[3] by convention the next-hop MTU of an ICMP error about the
//                         packet (kMtuAnnoSlot: set by IPsecESPEncap, read by ICMPError(MTU anno))
struct alignas(64) PacketAnno {
  uint16_t in_port;
  uint16_t out_port;
  uint32_t flow_hash;
  uint64_t timestamp_ns;
  uint32_t flow_id;
  uint32_t batch_id;
  uint64_t user[5];
};
static_assert(sizeof(PacketAnno) == 64, "PacketAnno must be exactly one cache line");
static_assert(offsetof(PacketAnno, out_port) == 2);
static_assert(offsetof(PacketAnno, flow_hash) == 4);
static_assert(offsetof(PacketAnno, timestamp_ns) == 8);
static_assert(offsetof(PacketAnno, user) == 24);

inline constexpr uint32_t kMtuAnnoSlot = 3;

// Mempools that carry Fulcrum packets are created with this private size (see io/mempool.hh).
inline constexpr uint16_t kPacketPrivSize = sizeof(PacketAnno);

inline PacketAnno& anno(Packet* m) {
  return *static_cast<PacketAnno*>(rte_mbuf_to_priv(m));
}

// The RX path's annotation write: in_port, out_port = kNoPort and flow_hash in one 8-byte store
// (the other slots are left as they are; elements that use them set them first).
inline void set_rx_anno(Packet* m, uint16_t in_port, uint32_t flow_hash) {
  const uint64_t word = uint64_t{in_port} | (uint64_t{kNoPort} << 16) | (uint64_t{flow_hash} << 32);
  std::memcpy(&anno(m), &word, sizeof word);
}

inline void reset_anno(Packet* m, uint16_t in_port) {
  PacketAnno& a = anno(m);
  a = PacketAnno{};
  a.in_port = in_port;
  a.out_port = kNoPort;
}

// The port a packet leaves through: the one a routing element set, else the one it came in on.
inline uint16_t effective_out_port(Packet* m) {
  const PacketAnno& a = anno(m);
  return a.out_port == kNoPort ? a.in_port : a.out_port;
}

inline uint8_t* data(Packet* m) {
  return rte_pktmbuf_mtod(m, uint8_t*);
}
inline uint32_t length(const Packet* m) {
  return rte_pktmbuf_data_len(m);
}

}  // namespace fulcrum
