#include "testing.hh"

#include <gtest/gtest.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/registry.hh"
#include "io/mempool.hh"

namespace fulcrum::testing {

rte_mempool* test_pool() {
  static rte_mempool* pool = [] {
    auto r = create_packet_pool("test_pool", 8191);
    if (!r) std::abort();
    return r.value();
  }();
  return pool;
}

Packet* make_packet(const std::vector<uint8_t>& bytes, uint16_t in_port) {
  Packet* m = rte_pktmbuf_alloc(test_pool());
  if (m == nullptr) std::abort();
  char* p = rte_pktmbuf_append(m, static_cast<uint16_t>(bytes.size()));
  if (p == nullptr) std::abort();
  if (!bytes.empty()) std::memcpy(p, bytes.data(), bytes.size());
  reset_anno(m, in_port);
  return m;
}

std::vector<uint8_t> ipv4_udp_frame(uint32_t src, uint32_t dst, uint8_t ttl, uint32_t frame_len) {
  std::vector<uint8_t> f(frame_len, 0);
  const uint8_t dmac[6] = {0x02, 0, 0, 0, 0, 0x02}, smac[6] = {0x02, 0, 0, 0, 0, 0x01};
  std::memcpy(&f[0], dmac, 6);
  std::memcpy(&f[6], smac, 6);
  f[12] = 0x08;
  f[13] = 0x00;
  auto* ip = reinterpret_cast<rte_ipv4_hdr*>(&f[14]);
  ip->version_ihl = 0x45;
  ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(frame_len - 14));
  ip->time_to_live = ttl;
  ip->next_proto_id = 17;
  ip->src_addr = rte_cpu_to_be_32(src);
  ip->dst_addr = rte_cpu_to_be_32(dst);
  ip->hdr_checksum = 0;
  ip->hdr_checksum = rte_ipv4_cksum(ip);
  uint8_t* udp = &f[34];
  udp[0] = 0x13, udp[1] = 0x88, udp[2] = 0x13, udp[3] = 0x89;
  uint16_t ulen = static_cast<uint16_t>(frame_len - 34);
  udp[4] = static_cast<uint8_t>(ulen >> 8), udp[5] = static_cast<uint8_t>(ulen);
  return f;
}

std::unique_ptr<Element> make_element(const std::string& class_name,
                                      const std::vector<std::string>& args, std::string* error,
                                      int ports) {
  constexpr uint64_t kAllOutputs = ~uint64_t{0};
  return make_element_connected(class_name, args, kAllOutputs, error, ports);
}

namespace {

// Never destroyed at exit: an offload service in it would stop its device threads and free
// device memory inside exit(), where nothing needs it done (reset_element_storage drops it).
SharedStorage*& element_storage() {
  static auto* shared = new SharedStorage;
  return shared;
}

}  // namespace

void reset_element_storage() {
  delete element_storage();
  element_storage() = new SharedStorage;
}

std::unique_ptr<Element> make_element_connected(const std::string& class_name,
                                                const std::vector<std::string>& args,
                                                uint64_t connected, std::string* error, int ports) {
  SharedStorage& shared = *element_storage();
  const ElementClassInfo* info = Registry::instance().find(class_name);
  if (info == nullptr) {
    if (error) *error = "unknown element class " + class_name;
    return nullptr;
  }
  std::unique_ptr<Element> e = info->create();
  e->set_name("test");
  Args a(args, SourceLoc{"test.click", 1, 1}, "test", class_name);
  Status s = e->configure(a);
  if (s.ok()) {
    for (int p = 0; p < e->noutputs(); ++p)
      if ((connected >> p) & 1) e->set_output_connected(p);
    InitContext ctx;
    ctx.ports = ports;
    ctx.shared = &shared;
    s = e->initialize(ctx);
  }
  if (!s) {
    if (error) *error = s.error();
    return nullptr;
  }
  return e;
}

std::vector<Verdict> run_batch(Element& element, PacketBatch& batch,
                               const std::vector<std::vector<uint8_t>>& frames, uint16_t in_port) {
  batch.clear();
  for (const auto& f : frames) batch.push(make_packet(f, in_port));
  element.process_batch(batch);
  std::vector<Verdict> out;
  for (uint32_t i = 0; i < batch.count(); ++i) out.push_back(batch.result(i));
  // Dropped packets are freed here, as the graph would, and excluded from the batch.
  for (uint32_t i = 0; i < batch.count(); ++i) {
    if (!batch.excluded(i) && batch.result(i).is_drop()) {
      rte_pktmbuf_free(batch.at(i));
      batch.exclude(i);
    }
  }
  return out;
}

std::string_view drop_reason(const Element& element, Verdict v) {
  if (!v.is_drop()) return "(not dropped)";
  const auto reasons = element.traits().drop_reasons;
  if (static_cast<size_t>(v.reason()) >= reasons.size()) return "(undeclared reason)";
  return reasons[v.reason()];
}

uint64_t counter(const Element& element, const std::string& name) {
  std::vector<Counter> cs;
  element.counters(cs);
  for (const Counter& c : cs)
    if (c.name == name) return c.value;
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

std::vector<uint8_t> packet_bytes(Packet* m) {
  const uint8_t* d = data(m);
  return std::vector<uint8_t>(d, d + length(m));
}

std::vector<uint8_t> ether_frame(uint16_t ethertype, uint32_t frame_len) {
  const std::vector<uint8_t> udp = ipv4_udp_frame(1, 2);
  std::vector<uint8_t> f(frame_len, 0);
  std::copy_n(udp.begin(), 2 * RTE_ETHER_ADDR_LEN, f.begin());
  reinterpret_cast<rte_ether_hdr*>(f.data())->ether_type = rte_cpu_to_be_16(ethertype);
  return f;
}

std::string config_error(const std::string& class_name, const std::vector<std::string>& args,
                         int ports) {
  std::string error = "(no error)";
  make_element(class_name, args, &error, ports);
  return error;
}

std::vector<std::vector<uint8_t>> prefixes(const std::vector<uint8_t>& frame, uint32_t max_len) {
  std::vector<std::vector<uint8_t>> out;
  for (uint32_t n = 0; n <= max_len; ++n)
    out.emplace_back(frame.begin(), frame.begin() + std::min<size_t>(n, frame.size()));
  return out;
}

std::unique_ptr<Element> make_or_fail(const std::string& class_name,
                                      const std::vector<std::string>& args, int ports) {
  std::string error;
  std::unique_ptr<Element> e = make_element(class_name, args, &error, ports);
  EXPECT_NE(e, nullptr) << error;
  return e;
}

void free_batch(PacketBatch& batch) {
  batch.for_each([](uint32_t, Packet* p) { rte_pktmbuf_free(p); });
  batch.clear();
}

namespace {

// This process's folder for temp_path(), removed with everything in it when the process exits
// (by the process that made it: a forked child leaves it alone).
struct TempFolder {
  std::string path = ::testing::TempDir() + "fulcrum-" + std::to_string(getpid());
  pid_t owner = getpid();
  TempFolder() { std::filesystem::create_directories(path); }
  ~TempFolder() {
    std::error_code ec;
    if (getpid() == owner) std::filesystem::remove_all(path, ec);
  }
};

}  // namespace

std::string temp_path(std::string_view stem) {
  static TempFolder folder;
  return folder.path + "/" + std::string(stem);
}

}  // namespace fulcrum::testing
