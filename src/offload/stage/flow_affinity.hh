// Flow affinity (paper 001 §4.3.1): a packet whose flow has packets in flight on a device
// follows them there even when its batch was given to the CPU, so no flow runs on two
// processors at once and per-flow order is kept. Flows are told apart by their flow hash
// (core/flow_hash.hh: the RSS hash when the NIC gave one, else the IPv4/IPv6 addresses, protocol
// and ports, behind a VLAN tag too) into kBuckets buckets.
#pragma once

#include <array>
#include <cstdint>

#include "core/flow_hash.hh"
#include "core/packet.hh"

namespace fulcrum::offload {

class FlowAffinity {
 public:
  static constexpr uint32_t kBuckets = 4096;

  static uint16_t bucket_of(Packet* p) { return static_cast<uint16_t>(flow_hash(p) % kBuckets); }

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
