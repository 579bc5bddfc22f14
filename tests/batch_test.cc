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

TEST(PacketBatch, VerdictEncodesPortsAndDropReasons) {
  EXPECT_EQ(Verdict::out(3).port(), 3);
  EXPECT_FALSE(Verdict::out(0).is_drop());
  EXPECT_TRUE(Verdict::drop(2).is_drop());
  EXPECT_EQ(Verdict::drop(2).reason(), 2);
}

TEST(PacketAnno, LivesInMbufPrivateArea) {
  Packet* m = testing::make_packet(testing::ipv4_udp_frame(1, 2), 5);
  EXPECT_EQ(anno(m).in_port, 5);
  EXPECT_EQ(anno(m).out_port, kNoPort);
  EXPECT_GE(rte_pktmbuf_priv_size(m->pool), sizeof(PacketAnno));
  rte_pktmbuf_free(m);
}

}  // namespace
}  // namespace fulcrum
