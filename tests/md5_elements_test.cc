// Golden tests for MD5Digest and RedundancyElim: digests of UDP and TCP payloads against the
// RFC 1321 test suite, the trailer, redundant byte counts on crafted batches, drops of
// non-IPv4, malformed and truncated frames, and configuration errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "elements/hash/md5_digest.hh"
#include "elements/hash/redundancy_elim.hh"
#include "testing.hh"

namespace fulcrum {
namespace {

using Frame = std::vector<uint8_t>;

constexpr uint32_t kUdpPayloadOffset = 42;
constexpr uint16_t kEtherTypeArp = 0x0806;

Frame udp_with_payload(const std::string& payload) {
  Frame f = testing::ipv4_udp_frame(0x0a000001, 0x0a000002, 64,
                                    kUdpPayloadOffset + static_cast<uint32_t>(payload.size()));
  std::memcpy(f.data() + kUdpPayloadOffset, payload.data(), payload.size());
  return f;
}

// TCP with a 32-byte header (12 bytes of options) carrying `payload`, plus Ethernet padding.
Frame tcp_with_payload(const std::string& payload) {
  constexpr uint32_t kTcpHdr = 32, kPad = 6;
  const uint32_t ip_len = 20 + kTcpHdr + static_cast<uint32_t>(payload.size());
  Frame f = testing::ipv4_udp_frame(1, 2, 64, 14 + ip_len + kPad);
  f[14 + 2] = static_cast<uint8_t>(ip_len >> 8);
  f[14 + 3] = static_cast<uint8_t>(ip_len);
  f[14 + 9] = 6;
  std::fill(f.begin() + 34, f.end(), 0xEE);  // options and padding: not payload
  f[34 + 12] = (kTcpHdr / 4) << 4;
  std::memcpy(f.data() + 34 + kTcpHdr, payload.data(), payload.size());
  return f;
}

std::string anno_digest_hex(Packet* p) {
  uint8_t d[16];
  std::memcpy(d, &anno(p).user[MD5Digest::kDigestSlot], sizeof d);
  std::string s;
  char buf[3];
  for (uint8_t b : d) {
    std::snprintf(buf, sizeof buf, "%02x", b);
    s += buf;
  }
  return s;
}

TEST(ElementsMd5, DigestsOfUdpAndTcpPayloads) {
  auto e = testing::make_or_fail("MD5Digest");
  ASSERT_NE(e, nullptr);
  PacketBatch b;
  const std::vector<Verdict> v =
      testing::run_batch(*e, b,
                         {udp_with_payload("abc"), tcp_with_payload("message digest"),
                          udp_with_payload(""), udp_with_payload("abcdefghijklmnopqrstuvwxyz")});
  for (const Verdict& x : v) EXPECT_EQ(x.port(), 0);
  EXPECT_EQ(anno_digest_hex(b.at(0)), "900150983cd24fb0d6963f7d28e17f72");
  EXPECT_EQ(anno_digest_hex(b.at(1)), "f96b697d7cb7938d525a2f31aaf161d0");
  EXPECT_EQ(anno_digest_hex(b.at(2)), "d41d8cd98f00b204e9800998ecf8427e");
  EXPECT_EQ(anno_digest_hex(b.at(3)), "c3fcd3d76192e4007dfb496cca67e13b");
  EXPECT_EQ(length(b.at(0)), kUdpPayloadOffset + 3);
  testing::free_batch(b);
}

TEST(ElementsMd5, TrailerAppendsTheDigest) {
  auto e = testing::make_or_fail("MD5Digest", {"TRAILER true"});
  ASSERT_NE(e, nullptr);
  PacketBatch b;
  const Frame f = udp_with_payload("abc");
  const std::vector<Verdict> v = testing::run_batch(*e, b, {f});
  ASSERT_EQ(v[0].port(), 0);
  const Frame out = testing::packet_bytes(b.at(0));
  ASSERT_EQ(out.size(), f.size() + 16);
  EXPECT_TRUE(std::equal(f.begin(), f.end(), out.begin()));
  const uint8_t want[] = {0x90, 0x01, 0x50, 0x98, 0x3c, 0xd2, 0x4f, 0xb0,
                          0xd6, 0x96, 0x3f, 0x7d, 0x28, 0xe1, 0x7f, 0x72};
  EXPECT_EQ(std::memcmp(out.data() + f.size(), want, 16), 0);
  testing::free_batch(b);
}

std::vector<Frame> malformed_frames() {
  Frame bad_ihl = udp_with_payload("x");
  bad_ihl[14] = 0x44;
  Frame long_total = udp_with_payload("xyz");
  long_total[14 + 3] += 1;
  Frame tcp_short = tcp_with_payload("");
  tcp_short[14 + 3] = 20 + 10;  // TCP header cut inside the IP packet
  Frame bad_doff = tcp_with_payload("abc");
  bad_doff[34 + 12] = 4 << 4;
  const Frame empty = udp_with_payload("");
  return {testing::ether_frame(kEtherTypeArp),     bad_ihl, long_total, tcp_short, bad_doff,
          Frame(empty.begin(), empty.begin() + 20)};
}

void expect_malformed_drops(Element& e) {
  PacketBatch b;
  const std::vector<Verdict> v = testing::run_batch(e, b, malformed_frames());
  EXPECT_EQ(testing::drop_reason(e, v[0]), "not-ipv4");
  EXPECT_EQ(testing::drop_reason(e, v[1]), "bad-header");
  EXPECT_EQ(testing::drop_reason(e, v[2]), "truncated");
  EXPECT_EQ(testing::drop_reason(e, v[3]), "truncated");
  EXPECT_EQ(testing::drop_reason(e, v[4]), "bad-header");
  EXPECT_EQ(testing::drop_reason(e, v[5]), "truncated");
  testing::free_batch(b);
}

TEST(ElementsMd5, DropsMalformedFrames) {
  auto md5 = testing::make_or_fail("MD5Digest");
  ASSERT_NE(md5, nullptr);
  expect_malformed_drops(*md5);
  auto re = testing::make_or_fail("RedundancyElim", {"STORE 131072", "CAPACITY 1024"});
  ASSERT_NE(re, nullptr);
  expect_malformed_drops(*re);
}

TEST(ElementsMd5, EveryPrefixOfAFrameIsHandled) {
  auto re = testing::make_or_fail("RedundancyElim", {"CHUNK 8", "STORE 131072"});
  ASSERT_NE(re, nullptr);
  const Frame f = tcp_with_payload(std::string(100, 'q'));
  const uint32_t ip_end = 14 + (uint32_t{f[14 + 2]} << 8 | f[14 + 3]);  // before the padding
  for (const Frame& p : testing::prefixes(f, static_cast<uint32_t>(f.size()))) {
    PacketBatch b;
    const std::vector<Verdict> v = testing::run_batch(*re, b, {p});
    EXPECT_EQ(v[0].is_drop(), p.size() < ip_end) << p.size();
    testing::free_batch(b);
  }
}

TEST(ElementsRedundancyElim, CountsRepeatedChunks) {
  auto e = testing::make_or_fail("RedundancyElim", {"CHUNK 16", "STORE 131072"});
  ASSERT_NE(e, nullptr);
  const std::string a(16, 'a'), b(16, 'b'), c(16, 'c');
  PacketBatch batch;
  // Chunks: [a b] [b c +5 tail] [c a] [a a] [short] [a]
  const std::vector<Verdict> v = testing::run_batch(
      *e, batch,
      {udp_with_payload(a + b), udp_with_payload(b + c + "tail!"), udp_with_payload(c + a),
       udp_with_payload(a + a), udp_with_payload("short"), tcp_with_payload(a)});
  for (const Verdict& x : v) EXPECT_EQ(x.port(), 0);
  const uint64_t want[] = {0, 16, 32, 32, 0, 16};
  for (uint32_t i = 0; i < 6; ++i)
    EXPECT_EQ(anno(batch.at(i)).user[RedundancyElim::kRedundantSlot], want[i]) << i;
  testing::free_batch(batch);
  EXPECT_EQ(testing::counter(*e, "chunks"), 9u);
  EXPECT_EQ(testing::counter(*e, "redundant_chunks"), 6u);
  EXPECT_EQ(testing::counter(*e, "redundant_bytes"), 96u);
  EXPECT_EQ(testing::counter(*e, "short_payloads"), 1u);
  EXPECT_EQ(testing::counter(*e, "payload_bytes"), 32u + 37 + 32 + 32 + 5 + 16);
  EXPECT_EQ(testing::counter(*e, "entries"), 3u);
}

TEST(ElementsRedundancyElim, ConfigurationErrors) {
  EXPECT_NE(testing::config_error("RedundancyElim", {"MODE rabin"}).find("MODE"),
            std::string::npos);
  EXPECT_NE(testing::config_error("RedundancyElim", {"MODE content", "CHUNK 48"}).find("CHUNK"),
            std::string::npos);
  EXPECT_NE(testing::config_error("RedundancyElim", {"STORE 100"}).find("STORE"),
            std::string::npos);
  EXPECT_NE(testing::config_error("RedundancyElim", {"CAPACITY 0"}).find("CAPACITY"),
            std::string::npos);
  EXPECT_EQ(testing::config_error("RedundancyElim", {"MODE content", "CHUNK 128"}), "(no error)");
}

}  // namespace
}  // namespace fulcrum
