// ReplayPort (--port replay:file=PATH): every frame of the capture delivered, in order, looping;
// loops=N ends the input after N passes; a packet written by an element leaves the stored
// capture as it was; flows spread over queues as RSS would; bad keys and bad captures refused
// with the file and the reason named.
#include "io/replay_port.hh"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "core/flow_hash.hh"
#include "io/port.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

constexpr uint32_t kMagic = 0xa1b2c3d4;
constexpr uint16_t kVersionMajor = 2, kVersionMinor = 4;
constexpr uint32_t kSnapLen = 65535;
constexpr uint32_t kLinkEthernet = 1, kLinkRaw = 101;

using Frame = std::vector<uint8_t>;

void put32(std::string& out, uint32_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}
void put16(std::string& out, uint16_t v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// A pcap file (host byte order, microseconds) holding `frames`.
std::string write_capture(const std::string& stem, const std::vector<Frame>& frames,
                          uint32_t link = kLinkEthernet) {
  std::string out;
  put32(out, kMagic);
  put16(out, kVersionMajor);
  put16(out, kVersionMinor);
  put32(out, 0);
  put32(out, 0);
  put32(out, kSnapLen);
  put32(out, link);
  for (size_t i = 0; i < frames.size(); ++i) {
    put32(out, static_cast<uint32_t>(i));
    put32(out, 0);
    put32(out, static_cast<uint32_t>(frames[i].size()));
    put32(out, static_cast<uint32_t>(frames[i].size()));
    out.append(reinterpret_cast<const char*>(frames[i].data()), frames[i].size());
  }
  std::string path = testing::temp_path(stem);
  std::ofstream(path, std::ios::binary) << out;
  return path;
}

// An Ethernet + IPv4 + UDP frame of `len` bytes from 10.0.0.<flow>, its payload bytes numbered
// from `tag`.
Frame udp_frame(uint32_t len, uint8_t flow, uint8_t tag) {
  Frame f(len, 0);
  f[12] = 0x08, f[14] = 0x45;
  const uint32_t ip_len = len - 14;
  f[16] = static_cast<uint8_t>(ip_len >> 8), f[17] = static_cast<uint8_t>(ip_len);
  f[22] = 64, f[23] = 17;
  f[26] = 10, f[29] = flow, f[30] = 10, f[33] = 1;
  f[34] = 0x10, f[35] = flow, f[36] = 0, f[37] = 53;
  for (uint32_t i = 42; i < len; ++i) f[i] = static_cast<uint8_t>(tag + i);
  return f;
}

Frame bytes_of(Packet* m) {
  const uint8_t* d = rte_pktmbuf_mtod(m, const uint8_t*);
  return Frame(d, d + rte_pktmbuf_data_len(m));
}

std::unique_ptr<Port> open_replay(const std::string& spec, int workers = 1) {
  PortConfig pc;
  pc.workers = workers;
  Result<std::unique_ptr<Port>> port = open_port(spec, pc);
  EXPECT_TRUE(port.ok()) << port.error();
  return port ? std::move(port.value()) : nullptr;
}

TEST(ReplayPort, DeliversEveryFrameInOrderAndLoops) {
  // Sizes across line boundaries, a jumbo frame, and a runt.
  const std::vector<Frame> frames = {
      udp_frame(64, 1, 0),   udp_frame(65, 1, 1), udp_frame(128, 1, 2), udp_frame(1514, 1, 3),
      udp_frame(9000, 1, 4), udp_frame(60, 1, 5), Frame{1, 2, 3, 4, 5}};
  const std::string path = write_capture("replay-order.pcap", frames);
  std::unique_ptr<Port> port = open_replay("replay:file=" + path);
  ASSERT_TRUE(port);
  EXPECT_FALSE(port->finite_input());
  EXPECT_EQ(port->rx_queues(), 1);
  constexpr uint16_t kBurst = 5;  // not a divisor of the capture: passes start mid-burst
  std::vector<Frame> got;
  for (int b = 0; b < 6; ++b) {
    Packet* pkts[kBurst];
    const uint16_t n = port->rx_burst(0, pkts, kBurst);
    ASSERT_EQ(n, kBurst);
    for (uint16_t i = 0; i < n; ++i) {
      got.push_back(bytes_of(pkts[i]));
      EXPECT_EQ(pkts[i]->nb_segs, 1);
      EXPECT_EQ(pkts[i]->pkt_len, pkts[i]->data_len);
      EXPECT_EQ(pkts[i]->hash.rss,
                frame_flow_hash(got.back().data(), static_cast<uint32_t>(got.back().size())));
    }
    EXPECT_EQ(port->tx_burst(0, pkts, n), n);
  }
  ASSERT_EQ(got.size(), 30u);
  for (size_t i = 0; i < got.size(); ++i)
    EXPECT_EQ(got[i], frames[i % frames.size()]) << "packet " << i;
  std::remove(path.c_str());
}

TEST(ReplayPort, LoopsEndTheInputAfterThatManyPasses) {
  const std::vector<Frame> frames = {udp_frame(64, 1, 0), udp_frame(70, 2, 1), udp_frame(80, 3, 2)};
  const std::string path = write_capture("replay-loops.pcap", frames);
  std::unique_ptr<Port> port = open_replay("replay:file=" + path + ",loops=3");
  ASSERT_TRUE(port);
  EXPECT_TRUE(port->finite_input());
  uint64_t received = 0;
  std::vector<Frame> got;
  for (int b = 0; b < 10; ++b) {
    Packet* pkts[4];
    const uint16_t n = port->rx_burst(0, pkts, 4);
    for (uint16_t i = 0; i < n; ++i) got.push_back(bytes_of(pkts[i]));
    received += n;
    EXPECT_EQ(port->input_done(received), received == 9);
    port->tx_burst(0, pkts, n);
  }
  EXPECT_EQ(received, 9u);
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], frames[i % frames.size()]);
  std::remove(path.c_str());
}

TEST(ReplayPort, AWrittenPacketLeavesTheCaptureUnchanged) {
  const std::vector<Frame> frames = {udp_frame(100, 1, 7)};
  const std::string path = write_capture("replay-write.pcap", frames);
  std::unique_ptr<Port> port = open_replay("replay:file=" + path);
  ASSERT_TRUE(port);
  Packet* first = nullptr;
  ASSERT_EQ(port->rx_burst(0, &first, 1), 1);
  uint8_t* d = rte_pktmbuf_mtod(first, uint8_t*);
  std::fill(d, d + rte_pktmbuf_data_len(first), 0xEE);
  rte_pktmbuf_adj(first, 14);  // an element strips the Ethernet header
  Packet* second = nullptr;
  ASSERT_EQ(port->rx_burst(0, &second, 1), 1);
  EXPECT_NE(first, second);
  EXPECT_EQ(bytes_of(second), frames[0]);
  port->tx_burst(0, &first, 1);
  port->tx_burst(0, &second, 1);
  // A recycled buffer comes back as the frame, not as it was left.
  for (int i = 0; i < 3; ++i) {
    Packet* again = nullptr;
    ASSERT_EQ(port->rx_burst(0, &again, 1), 1);
    EXPECT_EQ(bytes_of(again), frames[0]);
    port->tx_burst(0, &again, 1);
  }
  std::remove(path.c_str());
}

TEST(ReplayPort, EachFlowGoesToOneQueueInCaptureOrder) {
  std::vector<Frame> frames;
  for (uint8_t i = 0; i < 40; ++i) frames.push_back(udp_frame(64, i % 8, i));
  const std::string path = write_capture("replay-queues.pcap", frames);
  constexpr int kWorkers = 3;
  std::unique_ptr<Port> port = open_replay("replay:file=" + path + ",loops=1", kWorkers);
  ASSERT_TRUE(port);
  ASSERT_EQ(port->rx_queues(), kWorkers);
  std::vector<Frame> all;
  for (uint16_t q = 0; q < kWorkers; ++q) {
    std::vector<Frame> mine;
    Packet* pkts[64];
    const uint16_t n = port->rx_burst(q, pkts, 64);
    for (uint16_t i = 0; i < n; ++i) mine.push_back(bytes_of(pkts[i]));
    port->tx_burst(q, pkts, n);
    EXPECT_EQ(port->rx_burst(q, pkts, 64), 0) << "loops=1: one pass";
    // This queue's frames are those whose hash picks it, in capture order.
    std::vector<Frame> want;
    for (const Frame& f : frames)
      if (frame_flow_hash(f.data(), static_cast<uint32_t>(f.size())) % kWorkers == q)
        want.push_back(f);
    EXPECT_EQ(mine, want) << "queue " << q;
    all.insert(all.end(), mine.begin(), mine.end());
  }
  EXPECT_EQ(all.size(), frames.size());
  EXPECT_TRUE(port->input_done(all.size()));
  std::remove(path.c_str());
}

TEST(ReplayPort, RefusesBadKeysAndBadCapturesNamingThem) {
  EXPECT_EQ(parse_replay_spec("replay:loops=2").error(),
            "--port replay:loops=2: replay needs file=PATH");
  EXPECT_NE(
      parse_replay_spec("replay:file=a.pcap,loop=2").error().find("unknown replay key 'loop'"),
      std::string::npos);
  EXPECT_NE(parse_replay_spec("replay:file=a.pcap,loops=-1").error().find("bad value for loops"),
            std::string::npos);
  EXPECT_NE(parse_replay_spec("replay:file=a,file=b").error().find("given twice"),
            std::string::npos);
  EXPECT_TRUE(parse_replay_spec("replay:file=a.pcap,loops=0").ok());

  const std::string missing = testing::temp_path("replay-missing.pcap");
  Status s = check_port_spec("replay:file=" + missing);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("cannot read capture " + missing), std::string::npos) << s.error();

  const std::string text = testing::temp_path("replay-text.pcap");
  std::ofstream(text) << "not a capture at all\n";
  s = check_port_spec("replay:file=" + text);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("cannot read capture " + text), std::string::npos) << s.error();

  const std::string empty = write_capture("replay-empty.pcap", {});
  s = check_port_spec("replay:file=" + empty);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("holds no packets"), std::string::npos) << s.error();

  const std::string raw = write_capture("replay-raw.pcap", {udp_frame(64, 1, 0)}, kLinkRaw);
  s = check_port_spec("replay:file=" + raw);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("not Ethernet"), std::string::npos) << s.error();

  const std::string huge =
      write_capture("replay-huge.pcap", {udp_frame(64, 1, 0), Frame(ReplayPort::kMaxFrame + 1)});
  PortConfig pc;
  Result<std::unique_ptr<Port>> opened = open_port("replay:file=" + huge, pc);
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.error().find("record 2 holds 9217 bytes"), std::string::npos) << opened.error();

  // A record cut off by the end of the file: the record is named.
  const std::string cut =
      write_capture("replay-cut.pcap", {udp_frame(64, 1, 0), udp_frame(200, 1, 1)});
  {
    std::ifstream in(cut, std::ios::binary);
    std::string all((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::ofstream(cut, std::ios::binary | std::ios::trunc) << all.substr(0, all.size() - 50);
  }
  s = check_port_spec("replay:file=" + cut);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.error().find("record 2"), std::string::npos) << s.error();

  for (const std::string& f : {text, empty, raw, huge, cut}) std::remove(f.c_str());
}

TEST(ReplayPort, IsNoDpdkDevice) {
  EXPECT_FALSE(eal_device_for("replay:file=a.pcap").is_vdev);
  EXPECT_FALSE(eal_device_for("replay:file=a.pcap").is_pci);
  EXPECT_TRUE(check_port_list({"replay:file=a.pcap", "replay:file=a.pcap"}).ok());
}

}  // namespace
}  // namespace fulcrum
