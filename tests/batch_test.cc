#include "core/batch.hh"

#include <gtest/gtest.h>

#include <vector>

#include "testing.hh"

namespace fulcrum {
namespace {

TEST(PacketBatch, ForEachSkipsExcludedSlots) {
  PacketBatch b;
  std::vector<Packet*> pkts;
  for (int i = 0; i < 130; ++i) {
    pkts.push_back(testing::make_packet(testing::ipv4_udp_frame(1, 2)));
    b.push(pkts.back());
  }
  b.exclude(0);
  b.exclude(64);
  b.exclude(129);
  std::vector<uint32_t> seen;
  b.for_each([&](uint32_t i, Packet*) { seen.push_back(i); });
  EXPECT_EQ(seen.size(), 127u);
  EXPECT_EQ(b.live(), 127u);
  EXPECT_EQ(seen.front(), 1u);
  EXPECT_EQ(seen.back(), 128u);
  for (Packet* p : pkts) rte_pktmbuf_free(p);
}

// The transmit summary describes the slots it was learnt on: a slot excluded or added after
// makes it void, and so does refilling the batch.
TEST(PacketBatch, TxSummaryHoldsOnlyWhileTheBatchIsUnchanged) {
  PacketBatch b;
  TxSummary sum;
  for (uint16_t port : {2, 2, 3}) {
    Packet* p = testing::make_packet(testing::ipv4_udp_frame(1, 2));
    set_out_port(p, port);
    b.push(p);
    sum.add(p);
  }
  EXPECT_FALSE(sum.one_port());
  EXPECT_EQ(sum.bytes, 3 * b.at(0)->pkt_len);
  EXPECT_EQ(b.tx_summary(), nullptr) << "none learnt yet";
  b.set_tx_summary(sum);
  ASSERT_NE(b.tx_summary(), nullptr);
  EXPECT_EQ(b.tx_summary()->bytes, sum.bytes);
  EXPECT_EQ(b.tx_summary()->count, 3u);

  TxSummary two;
  two.add(b.at(0));
  two.add(b.at(1));
  EXPECT_TRUE(two.one_port());
  EXPECT_EQ(two.port_or, 2u);

  Packet* extra = testing::make_packet(testing::ipv4_udp_frame(1, 2));
  b.push(extra);
  EXPECT_EQ(b.tx_summary(), nullptr) << "a slot added after";
  b.set_tx_summary(sum);
  b.exclude(3);
  EXPECT_EQ(b.tx_summary(), nullptr) << "a slot excluded after";
  rte_pktmbuf_free(extra);
  std::vector<Packet*> pkts(b.data(), b.data() + 3);
  b.set_tx_summary(sum);
  b.set_count(3);
  EXPECT_EQ(b.tx_summary(), nullptr) << "the batch refilled";
  for (Packet* p : pkts) rte_pktmbuf_free(p);
}

TEST(PacketBatch, VerdictEncodesPortsAndDropReasons) {
  EXPECT_EQ(Verdict::out(3).port(), 3);
  EXPECT_FALSE(Verdict::out(0).is_drop());
  EXPECT_TRUE(Verdict::drop(2).is_drop());
  EXPECT_EQ(Verdict::drop(2).reason(), 2);
}

TEST(PacketAnno, LivesInMbufPrivateArea) {
  Packet* m = testing::make_packet(testing::ipv4_udp_frame(1, 2), 5);
  EXPECT_EQ(in_port(m), 5);
  EXPECT_EQ(out_port(m), kNoPort);
  EXPECT_EQ(effective_out_port(m), 5);
  EXPECT_GE(rte_pktmbuf_priv_size(m->pool), sizeof(PacketAnno));
  rte_pktmbuf_free(m);
}

TEST(PacketAnno, FastSlotsShareTheMbufFirstLineWithoutOverlapping) {
  Packet* m = testing::make_packet(testing::ipv4_udp_frame(1, 2), 5);
  set_anno_flow_hash(m, 0xDEADBEEF);
  set_out_port(m, 3);
  EXPECT_FALSE(stamped(m));
  EXPECT_EQ(timestamp_ns(m), 0u);
  set_timestamp_ns(m, 1234);
  set_out_port(m, 7);  // keeps the stamp
  EXPECT_TRUE(stamped(m));
  EXPECT_EQ(timestamp_ns(m), 1234u);
  EXPECT_EQ(in_port(m), 5);
  EXPECT_EQ(out_port(m), 7);
  EXPECT_EQ(effective_out_port(m), 7);
  EXPECT_EQ(anno_flow_hash(m), 0xDEADBEEFu);
  Packet* c = testing::make_packet(testing::ipv4_udp_frame(3, 4), 1);
  anno(m).user[2] = 99;
  copy_anno(c, m);
  EXPECT_EQ(in_port(c), 5);
  EXPECT_EQ(out_port(c), 7);
  EXPECT_EQ(anno_flow_hash(c), 0xDEADBEEFu);
  EXPECT_EQ(timestamp_ns(c), 1234u);
  EXPECT_EQ(anno(c).user[2], 99u);
  set_timestamp_ns(m, 0);
  EXPECT_FALSE(stamped(m));
  EXPECT_EQ(out_port(m), 7);
  // What the RX path writes: in_port, the flow hash, no out_port, no stamp.
  set_rx_anno(c, 2, 0x1234);
  EXPECT_EQ(in_port(c), 2);
  EXPECT_EQ(out_port(c), kNoPort);
  EXPECT_FALSE(stamped(c));
  EXPECT_EQ(anno_flow_hash(c), 0x1234u);
  rte_pktmbuf_free(c);
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace fulcrum
