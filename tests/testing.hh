// Helpers for tests: building packets into mbufs and running one element on a batch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/batch.hh"
#include "core/element.hh"
#include "core/packet.hh"
#include "core/shared_storage.hh"

namespace fulcrum::testing {

// A pool shared by all tests in the process.
rte_mempool* test_pool();

// An mbuf holding `bytes`, annotations reset with in_port.
Packet* make_packet(const std::vector<uint8_t>& bytes, uint16_t in_port = 0);

// An Ethernet + IPv4 + UDP frame of `frame_len` bytes (>= 42) with a valid header checksum.
std::vector<uint8_t> ipv4_udp_frame(uint32_t src, uint32_t dst, uint8_t ttl = 64,
                                    uint32_t frame_len = 64);

void free_batch(PacketBatch& batch);

// Every prefix of `frame` of length 0..max_len (robustness tests feed truncated frames).
std::vector<std::vector<uint8_t>> prefixes(const std::vector<uint8_t>& frame, uint32_t max_len);

// make_element that records a test failure (with the configuration error) when it fails.
std::unique_ptr<Element> make_or_fail(const std::string& class_name,
                                      const std::vector<std::string>& args = {}, int ports = 4);

// Creates element class `class_name` from the registry and configures it with `args` (as the
// pipeline file would pass them); initialises it with `ports` output ports. Returns nullptr and
// stores the message in *error when configuration fails.
std::unique_ptr<Element> make_element(const std::string& class_name,
                                      const std::vector<std::string>& args,
                                      std::string* error = nullptr, int ports = 4);

// Runs `element` on one batch made of `frames` and returns the verdict per packet. Packets that
// were not dropped stay owned by the returned batch (free them with free_batch).
std::vector<Verdict> run_batch(Element& element, PacketBatch& batch,
                               const std::vector<std::vector<uint8_t>>& frames,
                               uint16_t in_port = 0);

// Like make_element, but connects only the outputs whose bit is set in `connected` (bit i:
// output i), as a pipeline that leaves the others open would.
std::unique_ptr<Element> make_element_connected(const std::string& class_name,
                                                const std::vector<std::string>& args,
                                                uint64_t connected, std::string* error = nullptr,
                                                int ports = 4);

// The shared storage of make_element's elements (offload services among them) dropped: a test
// that needs the devices to itself (a CUDA GPU that another device object of the process holds
// is not releasable) calls it first; elements from make_element must be gone by then.
void reset_element_storage();

// The name of the drop reason in `v`, as `element` declares it; "(not dropped)" for an output.
std::string_view drop_reason(const Element& element, Verdict v);

// The value of `element`'s counter `name`; a test failure (and 0) when it has none.
uint64_t counter(const Element& element, const std::string& name);

// The bytes of a packet's first segment.
std::vector<uint8_t> packet_bytes(Packet* m);

// An Ethernet frame of `frame_len` bytes (>= 14) with ethertype `ethertype`, the MAC addresses of
// ipv4_udp_frame and a zero payload.
std::vector<uint8_t> ether_frame(uint16_t ethertype, uint32_t frame_len = 64);

// A scratch file path unique to this test process (ctest runs test processes in parallel):
// TempDir()/fulcrum-PID/STEM, a folder removed when the process exits.
std::string temp_path(std::string_view stem);

// The message make_element reports for this configuration; "(no error)" when it succeeds.
std::string config_error(const std::string& class_name, const std::vector<std::string>& args,
                         int ports = 4);

}  // namespace fulcrum::testing
