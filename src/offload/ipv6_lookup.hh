// IPv6 longest-prefix match on a device: the compressed trie of paper 003 §3.6 (Ip6Trie, whose
// flat arrays with 32-bit indices are uploaded once: Ipv6LookupTables); each task of
// IP6LookupOffload carries addresses (16 bytes each, network byte order, as in the packet) in and
// one 16-bit next hop per address out, exactly what Ip6Trie::lookup_bulk computes on the CPU.
// Kernel: kernels/ipv6_trie_lookup.cl.
#pragma once

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/result.hh"
#include "lib/ip6_trie.hh"
#include "offload/device.hh"
#include "offload/task.hh"

namespace fulcrum::offload {

inline constexpr const char* kIpv6LookupKernel = "ipv6_trie_lookup";
inline constexpr uint32_t kIpv6AddrBytes = Ip6Trie::kAddrBytes;

// An Ip6Trie's TBL24, groups and group headers on one device (64 MiB plus 1 KiB per group).
class Ipv6LookupTables {
 public:
  static Result<std::unique_ptr<Ipv6LookupTables>> upload(Device& device, const Ip6Trie& trie);

  Device& device() const { return device_; }
  const DeviceBuffer& tbl24() const { return *tbl24_; }
  const DeviceBuffer& groups() const { return *groups_; }
  const DeviceBuffer& headers() const { return *headers_; }
  // The kernel's resident arguments, in parameter order (after the addresses and next hops).
  std::vector<TaskArg> args() const;

 private:
  Ipv6LookupTables(Device& d, std::unique_ptr<DeviceBuffer> t24, std::unique_ptr<DeviceBuffer> g,
                   std::unique_ptr<DeviceBuffer> h)
      : device_(d), tbl24_(std::move(t24)), groups_(std::move(g)), headers_(std::move(h)) {}

  Device& device_;
  std::unique_ptr<DeviceBuffer> tbl24_;
  std::unique_ptr<DeviceBuffer> groups_;
  std::unique_ptr<DeviceBuffer> headers_;
};

}  // namespace fulcrum::offload
