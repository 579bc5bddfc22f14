#include "io/dpdk_port.hh"

#include <pcap/pcap.h>
#include <rte_bus_vdev.h>
#include <rte_errno.h>
#include <rte_lcore.h>
#include <sys/stat.h>

#include <algorithm>

#include "core/text_file.hh"
#include "io/dpdk_drivers.hh"
#include "io/eal.hh"
#include "io/mempool.hh"

namespace fulcrum {
namespace {

constexpr uint16_t kRxDesc = 1024;
constexpr uint16_t kTxDesc = 1024;
constexpr unsigned kPoolPerQueue = 4096;

std::string device_name(const std::string& spec) {
  return spec.substr(0, spec.find(','));
}

// Values of `key=` in a device string ("net_pcap0,rx_pcap=a.pcap,rx_pcap=b.pcap").
std::vector<std::string> devarg_values(const std::string& spec, const std::string& key) {
  std::vector<std::string> values;
  size_t pos = spec.find(',');
  while (pos != std::string::npos) {
    size_t next = spec.find(',', pos + 1);
    std::string kv =
        spec.substr(pos + 1, next == std::string::npos ? std::string::npos : next - pos - 1);
    if (kv.rfind(key + "=", 0) == 0) values.push_back(kv.substr(key.size() + 1));
    pos = next;
  }
  return values;
}

Result<int64_t> count_pcap_packets(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE];
  pcap_t* p = pcap_open_offline(path.c_str(), err);
  if (p == nullptr) return make_error(err);
  int64_t n = 0;
  pcap_pkthdr* hdr;
  const u_char* bytes;
  while (pcap_next_ex(p, &hdr, &bytes) == 1) ++n;
  pcap_close(p);
  return n;
}

}  // namespace

Status DpdkPort::check(const std::string& spec) {
  if (eal_device_for(spec).is_vdev)
    if (std::string problem = vdev_spec_problem(spec); !problem.empty())
      return make_error("--port " + spec + ": " + problem);
  for (const std::string& f : devarg_values(spec, "rx_pcap")) {
    struct stat st {};
    if (::stat(f.c_str(), &st) == 0 && !S_ISREG(st.st_mode))
      return make_error("--port " + spec + ": pcap file " + f + " is not a regular file");
    if (Result<int64_t> n = count_pcap_packets(f); !n)
      return make_error("--port " + spec + ": cannot read pcap file: " + n.error());
  }
  for (const std::string& f : devarg_values(spec, "tx_pcap"))
    if (Status s = check_output_file(f, "capture file"); !s)
      return make_error("--port " + spec + ": " + s.error());
  return {};
}

Result<std::unique_ptr<Port>> DpdkPort::open(const std::string& spec, const PortConfig& config) {
  auto port = std::unique_ptr<DpdkPort>(new DpdkPort());
  port->spec_ = spec;
  const std::string name = device_name(spec);
  // Read the pcap inputs first: a missing file is reported by name, not by the driver.
  std::vector<std::string> infinite = devarg_values(spec, "infinite_rx");
  bool loops = !infinite.empty() && infinite.back() != "0";
  std::vector<std::string> rx_files = devarg_values(spec, "rx_pcap");
  int64_t pcap_packets = 0;
  for (const std::string& f : rx_files) {
    Result<int64_t> n = count_pcap_packets(f);
    if (!n) return make_error("--port " + spec + ": cannot read pcap file: " + n.error());
    pcap_packets += n.value();
  }
  if (!rx_files.empty() && !loops) port->finite_packets_ = pcap_packets;
  port->tx_files_ = devarg_values(spec, "tx_pcap");
  // With infinite_rx the driver keeps the whole capture in mbufs of the RX pool.
  const unsigned replay_mbufs = loops ? static_cast<unsigned>(pcap_packets) : 0;
  if (rte_eth_dev_get_port_by_name(name.c_str(), &port->port_id_) != 0 &&
      eal_device_for(spec).is_vdev) {
    const size_t comma = spec.find(',');
    const std::string args = comma == std::string::npos ? "" : spec.substr(comma + 1);
    DpdkLogCapture log;
    if (int rc = rte_vdev_init(name.c_str(), args.c_str()); rc != 0) {
      return make_error("--port " + spec + ": cannot create virtual device '" + name +
                        "': " + explain_vdev_failure(spec, log.reason(), rte_strerror(-rc)));
    }
    port->vdev_name_ = name;
  }
  if (rte_eth_dev_get_port_by_name(name.c_str(), &port->port_id_) != 0)
    return make_error("--port " + spec + ": no DPDK device '" + name +
                      "' (is the driver available? for a PCI NIC, is it bound to a DPDK driver?)");
  const uint16_t pid = port->port_id_;
  rte_eth_dev_info info{};
  if (int rc = rte_eth_dev_info_get(pid, &info); rc != 0)
    return make_error("--port " + spec + ": cannot query device: " + rte_strerror(-rc));

  const auto workers = static_cast<uint16_t>(std::max(1, config.workers));
  port->rxq_ = std::min<uint16_t>(workers, info.max_rx_queues);
  port->txq_ = std::min<uint16_t>(workers, std::min<uint16_t>(info.max_tx_queues, kMaxQueues));
  port->shared_tx_ = port->txq_ < workers;
  for (auto& lock : port->tx_locks_) rte_spinlock_init(&lock);

  rte_eth_conf conf{};
  if (port->rxq_ > 1 && info.flow_type_rss_offloads != 0) {
    conf.rxmode.mq_mode = RTE_ETH_MQ_RX_RSS;
    conf.rx_adv_conf.rss_conf.rss_hf =
        (RTE_ETH_RSS_IP | RTE_ETH_RSS_UDP | RTE_ETH_RSS_TCP) & info.flow_type_rss_offloads;
  }
  if (int rc = rte_eth_dev_configure(pid, port->rxq_, port->txq_, &conf); rc != 0)
    return make_error("--port " + spec + ": cannot configure device: " + rte_strerror(-rc));
  uint16_t nrx = kRxDesc, ntx = kTxDesc;
  rte_eth_dev_adjust_nb_rx_tx_desc(pid, &nrx, &ntx);

  auto pool = create_packet_pool(
      "port" + std::to_string(config.index),
      kPoolPerQueue * std::max<unsigned>(1, port->rxq_) + nrx * port->rxq_ + replay_mbufs - 1);
  if (!pool) return make_error("--port " + spec + ": " + pool.error());
  port->pool_ = pool.value();
  const int socket = rte_eth_dev_socket_id(pid);
  for (uint16_t q = 0; q < port->rxq_; ++q)
    if (int rc = rte_eth_rx_queue_setup(pid, q, nrx, static_cast<unsigned>(socket), nullptr,
                                        port->pool_);
        rc != 0)
      return make_error("--port " + spec + ": cannot set up RX queue: " + rte_strerror(-rc));
  for (uint16_t q = 0; q < port->txq_; ++q)
    if (int rc = rte_eth_tx_queue_setup(pid, q, ntx, static_cast<unsigned>(socket), nullptr);
        rc != 0)
      return make_error("--port " + spec + ": cannot set up TX queue: " + rte_strerror(-rc));
  if (int rc = rte_eth_dev_start(pid); rc != 0)
    return make_error("--port " + spec + ": cannot start device: " + rte_strerror(-rc));
  port->started_ = true;
  rte_eth_promiscuous_enable(pid);

  return std::unique_ptr<Port>(std::move(port));
}

uint16_t DpdkPort::tx_burst(uint16_t queue, Packet** pkts, uint16_t n) {
  if (!shared_tx_) return rte_eth_tx_burst(port_id_, queue, pkts, n);
  rte_spinlock_lock(&tx_locks_[queue]);
  uint16_t sent = rte_eth_tx_burst(port_id_, queue, pkts, n);
  rte_spinlock_unlock(&tx_locks_[queue]);
  return sent;
}

void DpdkPort::stop() {
  if (started_) {
    started_ = false;
    rte_eth_dev_stop(port_id_);
    rte_eth_dev_close(port_id_);
  }
  if (!vdev_name_.empty()) {
    rte_vdev_uninit(vdev_name_.c_str());
    vdev_name_.clear();
  }
  if (pool_ != nullptr) {
    rte_mempool_free(pool_);
    pool_ = nullptr;
  }
}

void DpdkPort::output_losses(uint64_t transmitted, std::vector<OutputLoss>& out) const {
  uint64_t held = 0;
  std::string files;
  for (const std::string& f : tx_files_) {
    struct stat st {};
    if (::stat(f.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return;  // /dev/null, a FIFO
    Result<int64_t> n = count_pcap_packets(f);
    held += n ? static_cast<uint64_t>(n.value()) : 0;
    files += (files.empty() ? "" : ",") + f;
  }
  if (tx_files_.empty() || held >= transmitted) return;
  out.push_back({"tx pcap " + files, "packets", transmitted - held,
                 "the capture holds " + std::to_string(held) + " of " +
                     std::to_string(transmitted) + " transmitted packets (disk full?)"});
}

DpdkPort::~DpdkPort() {
  stop();
}

}  // namespace fulcrum
