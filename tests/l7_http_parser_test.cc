// l7/http: the parser gives the same messages however the bytes are split, de-chunks bodies,
// reads responses to HEAD / 204 / 304 / 1xx without bodies and a response ended by the close,
// names its errors; serialize() puts a message back so that it parses to the same message.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "l7/http/parser.hh"
#include "l7/http/serialize.hh"

namespace fulcrum::l7::http {
namespace {

const std::string kRequests =
    "GET /a?b=c HTTP/1.1\r\nHost: x\r\nUser-Agent: t\r\n\r\n"
    "POST /post HTTP/1.1\r\nHost: x\r\nContent-Length: 11\r\n\r\nhello world"
    "PUT /chunked HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;ext=1\r\nabcde\r\n10\r\n0123456789abcdef\r\n0\r\nTrailer-X: 1\r\n\r\n"
    "GET /old HTTP/1.0\r\nHost: y\r\nConnection: keep-alive\r\n\r\n"
    "DELETE /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n";

std::string body_of(const Parsed& p) {
  return std::string(p.msg.body.begin(), p.msg.body.end());
}

std::vector<Parsed> parse_in_pieces(const std::string& s, std::vector<size_t> cuts,
                                    Direction dir = Direction::kRequest) {
  Parser p(dir);
  std::vector<Parsed> out;
  size_t from = 0;
  cuts.push_back(s.size());
  for (size_t cut : cuts) {
    EXPECT_TRUE(p.feed(std::string_view(s).substr(from, cut - from), out)) << error_name(p.error());
    from = cut;
  }
  return out;
}

void expect_same(const std::vector<Parsed>& a, const std::vector<Parsed>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].msg.head.method, b[i].msg.head.method);
    EXPECT_EQ(a[i].msg.head.target, b[i].msg.head.target);
    EXPECT_EQ(a[i].msg.head.status, b[i].msg.head.status);
    EXPECT_EQ(a[i].msg.head.headers, b[i].msg.head.headers);
    EXPECT_EQ(a[i].msg.body, b[i].msg.body);
    EXPECT_EQ(a[i].keep_alive, b[i].keep_alive);
  }
}

TEST(L7HttpParser, RequestsParsedWholeHaveTheirHeadsAndDechunkedBodies) {
  std::vector<Parsed> m = parse_in_pieces(kRequests, {});
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[0].msg.head.method, "GET");
  EXPECT_EQ(m[0].msg.head.target, "/a?b=c");
  EXPECT_EQ(m[0].msg.head.header("user-agent"), "t");
  EXPECT_FALSE(m[0].framed);
  EXPECT_EQ(body_of(m[1]), "hello world");
  EXPECT_TRUE(m[1].framed);
  EXPECT_EQ(body_of(m[2]), "abcde0123456789abcdef");
  EXPECT_EQ(m[2].msg.head.headers.size(), 2u);  // the trailer is not a header
  EXPECT_EQ(m[3].msg.head.version_minor, 0);
  EXPECT_TRUE(m[3].keep_alive);
  EXPECT_FALSE(m[4].keep_alive);
}

TEST(L7HttpParser, SplitAtEveryByteBoundaryGivesTheSameMessages) {
  const std::vector<Parsed> whole = parse_in_pieces(kRequests, {});
  for (size_t k = 1; k < kRequests.size(); ++k) expect_same(parse_in_pieces(kRequests, {k}), whole);
  std::vector<size_t> every;
  for (size_t k = 1; k < kRequests.size(); ++k) every.push_back(k);
  expect_same(parse_in_pieces(kRequests, every), whole);
}

TEST(L7HttpParser, ResponsesToHeadAnd204And304HaveNoBody) {
  const std::string s =
      "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n"  // to HEAD: no body follows
      "HTTP/1.1 204 No Content\r\n\r\n"
      "HTTP/1.1 304 Not Modified\r\nContent-Length: 9\r\n\r\n"
      "HTTP/1.1 100 Continue\r\n\r\n"
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n";
  for (size_t k = 1; k < s.size(); ++k) {
    Parser p(Direction::kResponse);
    for (bool head : {true, false, false, false}) p.request_sent(head);
    std::vector<Parsed> out;
    ASSERT_TRUE(p.feed(std::string_view(s).substr(0, k), out));
    ASSERT_TRUE(p.feed(std::string_view(s).substr(k), out));
    ASSERT_EQ(out.size(), 5u);
    EXPECT_TRUE(out[0].bodyless);
    EXPECT_TRUE(out[0].msg.body.empty());
    EXPECT_EQ(out[1].msg.head.status, 204);
    EXPECT_TRUE(out[2].bodyless);
    EXPECT_TRUE(out[3].informational);
    EXPECT_EQ(body_of(out[4]), "abc");
    EXPECT_FALSE(out[4].bodyless);
  }
}

TEST(L7HttpParser, ResponseWithoutLengthEndsAtTheClose) {
  Parser p(Direction::kResponse);
  p.request_sent(false);
  std::vector<Parsed> out;
  ASSERT_TRUE(p.feed("HTTP/1.1 200 OK\r\nServer: s\r\n\r\npart one ", out));
  ASSERT_TRUE(p.feed("part two", out));
  EXPECT_TRUE(out.empty());
  ASSERT_TRUE(p.finish(out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(body_of(out[0]), "part one part two");
  EXPECT_FALSE(out[0].keep_alive);
}

TEST(L7HttpParser, ErrorsAreNamedWithTheirStatus) {
  struct Case {
    std::string bytes;
    Limits limits;
    ParseError error;
    int status;
  };
  Limits small;
  small.max_header_bytes = 64;
  small.max_headers = 3;
  small.max_body_bytes = 10;
  const std::vector<Case> cases = {
      {"GARBAGE\r\n\r\n", {}, ParseError::kMalformed, 400},
      {"GET / HTTP/1.1\r\nHost: x\r\nContent-Length: zz\r\n\r\n", {}, ParseError::kMalformed, 400},
      {"GET /" + std::string(100, 'a') + " HTTP/1.1\r\n\r\n", small, ParseError::kHeaderTooLarge,
       431},
      {"GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n", small, ParseError::kTooManyHeaders,
       431},
      {"POST / HTTP/1.1\r\nContent-Length: 11\r\n\r\nhello world", small, ParseError::kBodyTooLarge,
       413},
      {"CONNECT a:443 HTTP/1.1\r\nHost: a\r\n\r\n", {}, ParseError::kUnsupported, 501},
  };
  for (const Case& c : cases) {
    Parser p(Direction::kRequest, c.limits);
    std::vector<Parsed> out;
    EXPECT_FALSE(p.feed(c.bytes, out)) << c.bytes;
    EXPECT_EQ(p.error(), c.error) << c.bytes << ": " << error_name(p.error());
    EXPECT_EQ(error_status(p.error()), c.status);
    EXPECT_FALSE(p.feed("GET / HTTP/1.1\r\n\r\n", out));  // nothing after an error
  }
  Parser p(Direction::kRequest);
  std::vector<Parsed> out;
  ASSERT_TRUE(p.feed("POST / HTTP/1.1\r\nContent-Length: 10\r\n\r\nabc", out));
  EXPECT_FALSE(p.finish(out));
  EXPECT_EQ(p.error(), ParseError::kTruncated);
}

TEST(L7HttpParser, SerializedMessagesParseBackToTheSameMessage) {
  std::vector<Parsed> m = parse_in_pieces(kRequests, {});
  std::string wire;
  for (const Parsed& p : m)
    serialize(p.msg.head, Direction::kRequest, p.msg.body, p.framed, false, wire);
  std::vector<Parsed> again = parse_in_pieces(wire, {});
  ASSERT_EQ(again.size(), m.size());
  for (size_t i = 0; i < m.size(); ++i) {
    EXPECT_EQ(again[i].msg.body, m[i].msg.body);
    EXPECT_EQ(again[i].msg.head.target, m[i].msg.head.target);
    EXPECT_EQ(again[i].keep_alive, m[i].keep_alive);
  }
  // The chunked body went out with a length instead.
  EXPECT_EQ(again[2].msg.head.header("transfer-encoding"), "");
  EXPECT_EQ(again[2].msg.head.header("content-length"), "21");
  EXPECT_EQ(again[0].msg.head.header("content-length"), "");  // GET stays without one

  // A response to HEAD keeps its Content-Length and gets no body.
  HttpHead h;
  h.status = 200;
  h.reason = "OK";
  h.headers = {{"Content-Length", "1234"}};
  std::string head_resp;
  serialize(h, Direction::kResponse, {}, true, true, head_resp);
  EXPECT_EQ(head_resp, "HTTP/1.1 200 OK\r\nContent-Length: 1234\r\n\r\n");
}

TEST(L7HttpParser, LocalResponseIsAWellFramedResponse) {
  std::string r;
  local_response(403, "WAF: rule 942100", true, r);
  Parser p(Direction::kResponse);
  p.request_sent(false);
  std::vector<Parsed> out;
  ASSERT_TRUE(p.feed(r, out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].msg.head.status, 403);
  EXPECT_FALSE(out[0].keep_alive);
  EXPECT_NE(body_of(out[0]).find("942100"), std::string::npos);
}

}  // namespace
}  // namespace fulcrum::l7::http
