// Flow affinity (paper 001 §4.3.1): a packet whose flow has packets in flight on a device
// follows them there even when its batch was given to the CPU, so no flow runs on two
// processors at once and per-flow order is kept. Flows are told apart by a hash of the IPv4
// addresses and ports (the RSS hash when the NIC gave one) into kBuckets buckets.
#pragma once

#include <rte_hash_crc.h>

#include <array>
#include <cstdint>
#include <cstring>

#include "core/packet.hh"

namespace fulcrum::offload {

class FlowAffinity {
 public:
  static constexpr uint32_t kBuckets = 4096;

  static uint16_t bucket_of(Packet* p) {
    uint32_t h = anno(p).flow_hash;
    if (h == 0) {
      constexpr uint32_t kAddrsOffset = 26, kAddrsAndPorts = 12;
      if (length(p) >= kAddrsOffset + kAddrsAndPorts) {
        alignas(8) uint8_t key[kAddrsAndPorts];  // rte_hash_crc loads whole words
        std::memcpy(key, data(p) + kAddrsOffset, kAddrsAndPorts);
        h = rte_hash_crc(key, kAddrsAndPorts, 0);
      }
    }
    return static_cast<uint16_t>(h % kBuckets);
  }

  // The device bucket b's flows are on, -1 when none of their packets is in flight.
  int32_t device_of(uint16_t b) const { return flows_[b].in_flight != 0 ? flows_[b].device : -1; }
  void taken(uint16_t b, int32_t device) {
    ++flows_[b].in_flight;
    flows_[b].device = device;
  }
  void released(uint16_t b) { --flows_[b].in_flight; }

 private:
  struct Bucket {
    uint32_t in_flight = 0;
    int32_t device = 0;
  };
  std::array<Bucket, kBuckets> flows_{};
};

}  // namespace fulcrum::offload
