// IPReassembler: fragments held and given back with their verdicts, datagrams made whole (bytes
// and header checked against the frame they were cut from), timeouts read from an injected
// clock, drain at the end of input, the packet balance; scapy's fragments and the IDS and ESP
// behind it are tests/e2e/test_ip_reassembly.py.
#include "elements/ip/ip_reassembler.hh"

#include <gtest/gtest.h>
#include <rte_cycles.h>
#include <rte_ip.h>

#include <cstring>
#include <vector>

#include "lib/esp.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;
constexpr uint32_t kEth = 14;
constexpr uint32_t kIpHdr = 20;
constexpr uint32_t kSrc = RTE_IPV4(10, 0, 0, 1), kDst = RTE_IPV4(10, 0, 0, 2);

uint64_t g_now_ms = 0;
uint64_t fake_clock() {
  return g_now_ms * rte_get_tsc_hz() / 1000;
}

// A whole IPv4/UDP frame of `len` bytes, the payload numbered, IP id `id`.
Frame datagram(uint32_t len, uint16_t id) {
  Frame f = testing::ipv4_udp_frame(kSrc, kDst, 64, len);
  for (uint32_t i = kEth + kIpHdr + 8; i < len; ++i) f[i] = static_cast<uint8_t>(i * 7);
  uint8_t* ip = f.data() + kEth;
  esp::store_be16(ip + 4, id);
  esp::store_be16(ip + 10, 0);
  const uint16_t ck = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(ip));
  std::memcpy(ip + 10, &ck, sizeof ck);
  return f;
}

// The piece [from, to) of the datagram's IP payload as a fragment (offsets multiples of 8).
Frame piece(const Frame& whole, uint32_t from, uint32_t to) {
  const uint32_t payload = static_cast<uint32_t>(whole.size()) - kEth - kIpHdr;
  Frame f(kEth + kIpHdr + to - from);
  std::memcpy(f.data(), whole.data(), kEth + kIpHdr);
  std::memcpy(f.data() + kEth + kIpHdr, whole.data() + kEth + kIpHdr + from, to - from);
  uint8_t* ip = f.data() + kEth;
  esp::store_be16(ip + 2, static_cast<uint16_t>(kIpHdr + to - from));
  esp::store_be16(ip + 6, static_cast<uint16_t>((to < payload ? 0x2000 : 0) | from / 8));
  esp::store_be16(ip + 10, 0);
  const uint16_t ck = rte_ipv4_cksum(reinterpret_cast<const rte_ipv4_hdr*>(ip));
  std::memcpy(ip + 10, &ck, sizeof ck);
  return f;
}

struct Left {
  std::vector<std::pair<Frame, std::string>> packets;  // bytes and "out" or the drop reason
  uint32_t created = 0;
};

Left poll(Element& e) {
  Left l;
  PacketBatch out;
  e.poll_deferred(0, out);
  l.created = out.created();
  for (uint32_t i = 0; i < out.count(); ++i) {
    const Verdict v = out.result(i);
    l.packets.emplace_back(testing::packet_bytes(out.at(i)),
                           v.is_drop() ? std::string(testing::drop_reason(e, v)) : "out");
  }
  testing::free_batch(out);
  return l;
}

TEST(IPReassembler, MakesDatagramsWholeAndTimesOutTheRest) {
  auto e = testing::make_or_fail("IPReassembler", {"TIMEOUT_MS 100"});
  ASSERT_NE(e, nullptr);
  auto* r = dynamic_cast<IPReassembler*>(e.get());
  g_now_ms = 1000;
  r->set_clock(fake_clock);
  const Frame a = datagram(14 + 20 + 8 + 2000, 1), b = datagram(14 + 20 + 8 + 700, 2);
  const Frame whole = datagram(200, 3);

  PacketBatch batch;
  auto v = testing::run_batch(*e, batch, {piece(a, 0, 1000), whole, piece(b, 0, 400)});
  EXPECT_TRUE(batch.excluded(0));
  EXPECT_FALSE(batch.excluded(1));
  EXPECT_EQ(testing::packet_bytes(batch.at(1)), whole);  // not a fragment: passes as it is
  EXPECT_TRUE(batch.excluded(2));
  testing::free_batch(batch);
  EXPECT_EQ(e->held(), 2u);
  EXPECT_TRUE(poll(*e).packets.empty());

  g_now_ms = 1050;  // A completes in two more pieces, out of order
  PacketBatch batch2;
  testing::run_batch(*e, batch2, {piece(a, 1008, 2008), piece(a, 1000, 1008)});
  testing::free_batch(batch2);
  Left l = poll(*e);
  ASSERT_EQ(l.packets.size(), 4u);
  EXPECT_EQ(l.created, 1u);
  EXPECT_EQ(l.packets[0].second, "reassembled");
  EXPECT_EQ(l.packets[1].second, "reassembled");
  EXPECT_EQ(l.packets[2].second, "reassembled");
  EXPECT_EQ(l.packets[3].second, "out");
  EXPECT_EQ(l.packets[3].first, a);  // byte for byte, checksum included
  EXPECT_EQ(e->held(), 1u);

  g_now_ms = 1099;  // B's first piece: 99 ms old, still waiting
  EXPECT_TRUE(poll(*e).packets.empty());
  g_now_ms = 1101;
  l = poll(*e);
  ASSERT_EQ(l.packets.size(), 1u);
  EXPECT_EQ(l.packets[0].second, "incomplete");
  EXPECT_EQ(e->held(), 0u);
}

TEST(IPReassembler, DrainGivesUpWhatWaitsAtTheEndOfInput) {
  auto e = testing::make_or_fail("IPReassembler");
  ASSERT_NE(e, nullptr);
  const Frame a = datagram(14 + 20 + 8 + 1500, 9);
  PacketBatch batch;
  testing::run_batch(*e, batch, {piece(a, 0, 800), piece(a, 0, 800)});
  testing::free_batch(batch);
  e->drain();
  const Left l = poll(*e);
  ASSERT_EQ(l.packets.size(), 2u);  // the second copy of the piece is an overlap: given up too
  for (const auto& p : l.packets) EXPECT_EQ(p.second, "incomplete");
  EXPECT_EQ(e->held(), 0u);
}

TEST(IPReassembler, RefusesBadKeys) {
  EXPECT_NE(testing::config_error("IPReassembler", {"TIMEOUT_MS 0"}).find("TIMEOUT_MS"),
            std::string::npos);
  EXPECT_NE(testing::config_error("IPReassembler", {"MAX_DATAGRAMS 3"}).find("MAX_DATAGRAMS"),
            std::string::npos);
}

}  // namespace
}  // namespace fulcrum
