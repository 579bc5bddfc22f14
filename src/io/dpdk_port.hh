// DpdkPort: a DPDK ethdev (NIC by PCI address, or a virtual device such as net_pcap, net_null,
// net_ring, net_af_packet). One RX/TX queue pair per worker where the device allows it, RSS over
// the RX queues when it has more than one.
#pragma once

#include <rte_ethdev.h>
#include <rte_spinlock.h>

#include <array>

#include "io/port.hh"

namespace fulcrum {

class DpdkPort final : public Port {
 public:
  static Result<std::unique_ptr<Port>> open(const std::string& spec, const PortConfig& config);
  // check_port_spec for a device string: its rx_pcap= and tx_pcap= files.
  static Status check(const std::string& spec);
  ~DpdkPort() override;

  const std::string& spec() const override { return spec_; }
  uint16_t rx_queues() const override { return rxq_; }
  uint16_t tx_queues() const override { return txq_; }
  uint16_t rx_burst(uint16_t queue, Packet** pkts, uint16_t n) override {
    return rte_eth_rx_burst(port_id_, queue, pkts, n);
  }
  uint16_t tx_burst(uint16_t queue, Packet** pkts, uint16_t n) override;
  bool finite_input() const override { return finite_packets_ >= 0; }
  bool input_done(uint64_t received) const override {
    return finite_packets_ >= 0 && received >= static_cast<uint64_t>(finite_packets_);
  }
  void stop() override;
  // The tx_pcap capture files (regular files only) hold fewer packets than were transmitted
  // when a write failed: the DPDK driver does not report its write errors.
  void output_losses(uint64_t transmitted, std::vector<OutputLoss>& out) const override;

 private:
  static constexpr size_t kMaxQueues = 64;
  std::string spec_;
  uint16_t port_id_ = 0;
  uint16_t rxq_ = 1, txq_ = 1;
  bool shared_tx_ = false;
  bool started_ = false;
  int64_t finite_packets_ = -1;  // packets in the rx pcap file(s), -1 when unbounded
  rte_mempool* pool_ = nullptr;
  std::string vdev_name_;              // set when this port created the virtual device
  std::vector<std::string> tx_files_;  // tx_pcap= capture files
  std::array<rte_spinlock_t, kMaxQueues> tx_locks_{};
};

}  // namespace fulcrum
