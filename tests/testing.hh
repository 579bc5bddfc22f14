// Helpers for tests: building packets into mbufs and running one element on a batch.
#pragma once

#include <cstdint>
#include <vector>

#include "core/batch.hh"
#include "core/packet.hh"

namespace fulcrum::testing {

// A pool shared by all tests in the process.
rte_mempool* test_pool();

// An mbuf holding `bytes`, annotations reset with in_port.
Packet* make_packet(const std::vector<uint8_t>& bytes, uint16_t in_port = 0);

// An Ethernet + IPv4 + UDP frame of `frame_len` bytes (>= 42) with a valid header checksum.
std::vector<uint8_t> ipv4_udp_frame(uint32_t src, uint32_t dst, uint8_t ttl = 64,
                                    uint32_t frame_len = 64);

void free_batch(PacketBatch& batch);

}  // namespace fulcrum::testing
