// The two NFs in one chain (nf/chain.hh) through InlineProcessor: the web gateway decrypts a
// request, the stream IDS then sees the plaintext (split over two requests) and blocks the one
// that completes a rule; the response is encrypted. A chain runs in one order for both directions,
// so behind the gateway the IDS would see response ciphertext: it scans requests only here.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "l7/flow/processor.hh"
#include "l7/nf/stream_ids.hh"
#include "l7/nf/web_gateway.hh"
#include "lib/ids/rule_parser.hh"

namespace fulcrum::l7 {
namespace {

constexpr uint8_t kKey[kGatewayBlock] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

// The request body a client of the gateway sends for `plain`: the gateway's own response
// encryption (checked against an independent AES in l7_web_gateway_test.cc).
std::vector<uint8_t> seal(WebGateway& gw, const std::string& plain) {
  Message m;
  m.dir = Direction::kResponse;
  m.body.assign(plain.begin(), plain.end());
  gw.process(m, {});
  return m.body;
}

TEST(L7NfsChain, TheIdsScansWhatTheGatewayDecryptedAcrossRequests) {
  auto rules = ids::parse_rule_file(
      "alert tcp any any -> any any (msg:\"shell\"; content:\"/bin/sh\"; sid:7;)\n", "t.rules",
      false);
  ASSERT_TRUE(rules.ok());
  auto compiled = StreamRules::compile(std::move(*rules));
  ASSERT_TRUE(compiled.ok());
  auto gw = WebGateway::create(kKey, true, true);
  auto ids = StreamIds::create(compiled.value(), StreamIds::Mode::kBlock, StreamIds::kScanRequests);
  ASSERT_TRUE(gw.ok() && ids.ok());
  auto client = WebGateway::create(kKey, true, true);
  std::vector<std::unique_ptr<FlowNf>> nfs;
  nfs.push_back(std::move(gw.value()));
  nfs.push_back(std::move(ids.value()));
  InlineProcessor p(std::make_shared<Chain>(std::move(nfs)));
  p.open_flow(1);
  const char* parts[] = {"cmd=/bi", "n/sh -c id"};
  for (uint64_t i = 0; i < 2; ++i) {
    Message m;
    m.flow = 1;
    m.seq = i;
    m.body = seal(*client.value(), parts[i]);
    p.submit(std::move(m));
  }
  Message r;
  r.flow = 1;
  r.dir = Direction::kResponse;
  r.body.assign({'o', 'k'});
  p.submit(std::move(r));
  std::vector<Message> out;
  p.poll(0, out);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(std::string(out[0].body.begin(), out[0].body.end()), "cmd=/bi");
  EXPECT_EQ(out[0].verdict.action, Action::kForward);
  EXPECT_EQ(out[1].verdict.action, Action::kRespond);
  EXPECT_EQ(out[1].verdict.status, 403);
  EXPECT_EQ(out[1].verdict.reason, "StreamIDS: sid 7");
  EXPECT_EQ(out[2].verdict.action, Action::kForward);
  ASSERT_EQ(out[2].body.size(), 32u);  // IV and one block
  Message back;
  back.body = out[2].body;
  client.value()->process(back, {});
  EXPECT_EQ(std::string(back.body.begin(), back.body.end()), "ok");
}

}  // namespace
}  // namespace fulcrum::l7
