// Port: a packet source/sink the runtime polls. DPDK ethdevs (NICs and virtual devices), the
// built-in traffic generator and the in-memory capture replay implement it. Port index = order
// of --port flags.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/output_loss.hh"
#include "core/packet.hh"
#include "core/result.hh"

namespace fulcrum {

struct PortConfig {
  uint16_t index = 0;
  int workers = 1;  // one RX and one TX queue per worker where the device allows
  uint32_t burst = 64;
  // Whether the buffers this port receives into are freed on another core (a pipelined
  // placement: the last stage transmits): a port that fills buffers with the CPU then asks for
  // their lines before writing them (io/mempool.hh prefetch_fill_lines). Cloned, a worker frees
  // into its own mempool cache and takes the same buffers back, their lines already in its cache.
  bool buffers_return_from_other_cores = false;
};

class Port {
 public:
  virtual ~Port() = default;

  virtual const std::string& spec() const = 0;
  virtual uint16_t rx_queues() const = 0;
  virtual uint16_t tx_queues() const = 0;
  virtual uint16_t rx_burst(uint16_t queue, Packet** pkts, uint16_t n) = 0;
  virtual uint16_t tx_burst(uint16_t queue, Packet** pkts, uint16_t n) = 0;
  // True when the port has a finite input (a pcap file) and all of it has been received.
  virtual bool input_done(uint64_t received) const {
    (void)received;
    return false;
  }
  virtual bool finite_input() const { return false; }
  virtual void stop() {}
  // After stop(): of the `transmitted` packets the device took, those its output (a capture
  // file) does not hold.
  virtual void output_losses(uint64_t transmitted, std::vector<OutputLoss>& out) const {
    (void)transmitted, (void)out;
  }
};

// Creates the port for one --port SPEC after the EAL is up:
//   gen:KEY=VAL,...        the built-in generator (see io/gen_port.hh)
//   replay:file=PATH,...   a capture preloaded into memory and replayed (see io/replay_port.hh)
//   net_pcap0,rx_pcap=..   any DPDK virtual device string, or a PCI address (0000:01:00.0)
Result<std::unique_ptr<Port>> open_port(const std::string& spec, const PortConfig& config);

// What can be checked of a --port SPEC without the EAL and without opening it (`fulcrum check`):
// a generator spec parses; a device string's rx_pcap= files can be read as captures and its
// tx_pcap= files could be written. Errors start "--port SPEC: ".
Status check_port_spec(const std::string& spec);

// A port list names each DPDK device once ("net_null0" twice is two ports on one device, which
// DPDK cannot configure twice). Errors name both --port positions.
Status check_port_list(const std::vector<std::string>& specs);

// Whether every port of the list copies frames in and out of packet buffers with the CPU (the
// generator, a replay, net_pcap, net_null, net_ring, net_af_packet, net_tap): then packet pools
// may live on memory DPDK did not map for devices (io/mempool.hh). A PCI device or another
// virtual device (virtio_user, af_xdp, ... read buffers through DPDK's memory map) says no.
bool ports_copy_frames(const std::vector<std::string>& specs);

// The EAL arguments a spec needs before initialisation (--vdev, -a).
struct EalDevice {
  bool is_vdev = false;
  bool is_pci = false;
  std::string arg;
};
EalDevice eal_device_for(const std::string& spec);

}  // namespace fulcrum
