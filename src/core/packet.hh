// Packets are DPDK mbufs. Fulcrum's per-packet annotations travel with the buffer between
// elements, workers and devices without a side table: the fast-path ones in the mbuf's first
// cache line, the others in the mbuf private area (rte_mbuf_to_priv), one cache line.
#pragma once

#include <rte_mbuf.h>

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace fulcrum {

using Packet = rte_mbuf;

inline constexpr uint16_t kNoPort = 0xFFFF;

// Per-packet annotations, in two places.
//
// The fast-path slots live in the mbuf's first cache line, which the driver's RX writes and its
// TX frees read anyway, so a pipeline that only moves packets touches no line beyond the mbuf's
// own and the frame (issue 16; docs/benchmarks.md, "L2 echo: transmit path, annotation
// layout, EtherMirror"). Read and write them only through the functions below:
//   in_port    u16  rte_mbuf::port            port index the packet arrived on (order of
//                                              --port; the RX path replaces the driver's DPDK
//                                              port id with it); kNoPort for a packet made here
//   flow_hash  u32  rte_mbuf::hash.rss        RSS / generator flow hash (0: none)
//   out_port   u16  rte_mbuf::hash.fdir.hi    port to transmit on; kNoPort = echo through
//                   bits 0-15                  in_port
//   stamped    bit  rte_mbuf::hash.fdir.hi    timestamp_ns below holds the RX time
//                   bit 16
// (hash.fdir.hi is the flow director's ID on RX, which Fulcrum does not use; the RX path
// overwrites it, rte_pktmbuf_copy copies it with port and hash.)
//
// The other slots live in the mbuf private area (rte_mbuf_to_priv), one cache line, read only by
// the elements that use them. Layout (64 bytes):
//   0  timestamp_ns  u64  RX time (TSC-derived ns); valid only while `stamped` is set: read it
//                         with timestamp_ns(m), set it with set_timestamp_ns(m, ns)
//   8  flow_id       u32  application flow id (e.g. IPsec SA index)
//  12  batch_id      u32  free for elements that track batches (the RX path does not set it)
//  16  user[6]       u64  free slots for elements (documented by the element that sets them);
//                         user[3] by convention the next-hop MTU of an ICMP error about the
//                         packet (kMtuAnnoSlot: set by IPsecESPEncap, read by ICMPError(MTU anno))
struct alignas(64) PacketAnno {
  uint64_t timestamp_ns;
  uint32_t flow_id;
  uint32_t batch_id;
  uint64_t user[6];
};
static_assert(sizeof(PacketAnno) == 64, "PacketAnno must be exactly one cache line");
static_assert(offsetof(PacketAnno, flow_id) == 8);
static_assert(offsetof(PacketAnno, user) == 16);

inline constexpr uint32_t kMtuAnnoSlot = 3;

// Mempools that carry Fulcrum packets are created with this private size (see io/mempool.hh).
inline constexpr uint16_t kPacketPrivSize = sizeof(PacketAnno);

inline PacketAnno& anno(Packet* m) {
  return *static_cast<PacketAnno*>(rte_mbuf_to_priv(m));
}

// The first-line slots (see above).
inline constexpr uint32_t kStampedBit = uint32_t{1} << 16;
static_assert(offsetof(rte_mbuf, hash) + sizeof(rte_mbuf::hash) <= RTE_CACHE_LINE_MIN_SIZE,
              "the fast-path annotations must stay in the mbuf's first cache line");

inline uint16_t in_port(const Packet* m) {
  return m->port;
}
inline void set_in_port(Packet* m, uint16_t port) {
  m->port = port;
}
inline uint16_t out_port(const Packet* m) {
  return static_cast<uint16_t>(m->hash.fdir.hi);
}
inline void set_out_port(Packet* m, uint16_t port) {
  m->hash.fdir.hi = (m->hash.fdir.hi & ~uint32_t{0xFFFF}) | port;
}
inline uint32_t anno_flow_hash(const Packet* m) {
  return m->hash.rss;
}
inline void set_anno_flow_hash(Packet* m, uint32_t hash) {
  m->hash.rss = hash;
}
inline bool stamped(const Packet* m) {
  return (m->hash.fdir.hi & kStampedBit) != 0;
}
// The RX time, 0 when the packet was not stamped.
inline uint64_t timestamp_ns(Packet* m) {
  return stamped(m) ? anno(m).timestamp_ns : 0;
}
// ns == 0 clears the stamp.
inline void set_timestamp_ns(Packet* m, uint64_t ns) {
  anno(m).timestamp_ns = ns;
  m->hash.fdir.hi = ns != 0 ? m->hash.fdir.hi | kStampedBit : m->hash.fdir.hi & ~kStampedBit;
}

// The RX path's annotation write: in_port, and flow_hash with out_port = kNoPort, not stamped in
// one 8-byte store, all in the mbuf's first line (the private area is left as it is; elements
// that use its slots set them first).
inline void set_rx_anno(Packet* m, uint16_t port, uint32_t flow_hash) {
  m->port = port;
  const uint64_t word = uint64_t{flow_hash} | (uint64_t{kNoPort} << 32);
  std::memcpy(&m->hash, &word, sizeof word);
}

// A packet made here: every slot cleared, in_port set, out_port kNoPort.
inline void reset_anno(Packet* m, uint16_t port) {
  anno(m) = PacketAnno{};
  set_rx_anno(m, port, 0);
}

// All of src's annotations (both places) onto dst.
inline void copy_anno(Packet* dst, Packet* src) {
  anno(dst) = anno(src);
  dst->port = src->port;
  dst->hash = src->hash;
}

// The port a packet leaves through: the one a routing element set, else the one it came in on.
inline uint16_t effective_out_port(const Packet* m) {
  const uint16_t out = out_port(m);
  return out == kNoPort ? m->port : out;
}

inline uint8_t* data(Packet* m) {
  return rte_pktmbuf_mtod(m, uint8_t*);
}
inline uint32_t length(const Packet* m) {
  return rte_pktmbuf_data_len(m);
}

}  // namespace fulcrum
