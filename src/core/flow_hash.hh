// The flow hash of a packet, for spreading flows over workers or devices while keeping each flow
// on one of them: the RX annotation (`flow_hash`, the NIC's RSS hash or the generator's) where it
// is set, else a CRC of the headers: the IPv4 or IPv6 addresses, the protocol and, for TCP, UDP and
// SCTP (first fragments and unfragmented IPv4), the ports; behind one VLAN tag too; a packet
// whose Ethernet header a stage stripped hashes as it did with it. Anything else: the MAC pair.
// Used by Pipeliner (hybrid stages) and the offload stage's flow affinity.
#pragma once

#include <cstdint>

#include "core/packet.hh"

namespace fulcrum {

// The annotation where it is not 0, else the headers' hash (never reads past the frame).
uint32_t flow_hash(Packet* p);

// The headers' hash alone, whatever the annotation says.
uint32_t header_flow_hash(Packet* p);

// The same hash of a frame's bytes [b, b + len) (a capture's record before it is a packet).
uint32_t frame_flow_hash(const uint8_t* b, uint32_t len);

}  // namespace fulcrum
